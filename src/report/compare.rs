//! `retrylab compare`: one metric from several results folders (or the series within one) on one chart, against
//! the swept parameter they have in common.

use std::path::{Path, PathBuf};

use super::charts::lines::{Line, LinePanel, LinePoint};
use super::charts::{Frame, LinesChart, Spread, draw_lines_chart};
use super::read::{ResultsFolder, Table};
use crate::Error;
use crate::scenario::parse_duration;

/// A line's label and its points `(x, mean, ci95)`.
type LabelledPoints = (String, Vec<(f64, f64, f64)>);

/// What to compare and where to draw it.
pub(crate) struct Comparison<'a> {
    pub folders: &'a [ResultsFolder],
    /// The metric to draw [default: the first chart metric of the first folder].
    pub metric: Option<&'a str>,
}

/// A swept value as a number on the x axis: numbers as they are, durations in ms.
fn axis_number(cell: &str) -> Option<f64> {
    cell.parse::<f64>().ok().filter(|x| x.is_finite()).or_else(|| parse_duration(cell).ok().map(|d| d.as_millis_f64()))
}

/// The swept parameters of `folder` whose every value is a number or a duration.
fn numeric_swept(folder: &ResultsFolder) -> Vec<&str> {
    let summary = &folder.summary;
    folder
        .manifest
        .swept
        .iter()
        .enumerate()
        .filter(|(i, _)| summary.rows.iter().all(|row| axis_number(&row[*i]).is_some()))
        .map(|(_, key)| key.as_str())
        .collect()
}

/// The metrics summary.csv has (`M` for every `M_mean` column).
fn metrics_of(table: &Table) -> Vec<&str> {
    table.header.iter().filter_map(|column| column.strip_suffix("_mean")).collect()
}

/// How each folder is named in the legend: its folder name, or its whole path when two share a name.
fn folder_labels(folders: &[ResultsFolder]) -> Vec<String> {
    let names: Vec<String> = folders
        .iter()
        .map(|f| f.dir.file_name().map_or_else(|| f.dir.display().to_string(), |n| n.to_string_lossy().into_owned()))
        .collect();
    let unique = names.iter().enumerate().all(|(i, name)| !names[..i].contains(name));
    if unique { names } else { folders.iter().map(|f| f.dir.display().to_string()).collect() }
}

impl Comparison<'_> {
    /// The metric drawn: the one asked for, else the first folder's first chart metric (its scenario's `[charts]
    /// metrics` when the scenario can be read, else its model's default).
    pub(crate) fn metric(&self) -> String {
        if let Some(metric) = self.metric {
            return metric.to_owned();
        }
        let first = &self.folders[0];
        let from_scenario = first.scenario().ok().and_then(|(scenario, _)| scenario.charts.metrics.first().copied());
        from_scenario.or_else(|| first.model.default_chart_metrics().first().copied()).unwrap_or("calls").to_owned()
    }

    /// Checks the folders and draws `stem.svg` and `stem.png`. Nothing is written when the input is bad.
    pub(crate) fn draw(&self, stem: &Path) -> Result<Vec<PathBuf>, Error> {
        let metric = self.metric();
        for folder in self.folders {
            if folder.summary.column(&format!("{metric}_mean")).is_none() {
                return Err(Error::Results {
                    path: folder.summary.path.clone(),
                    message: format!(
                        "no metric `{metric}`; valid metrics here: {}",
                        metrics_of(&folder.summary).join(", ")
                    ),
                });
            }
        }
        let x_key = self.common_x()?;
        let labels = folder_labels(self.folders);
        let mut lines: Vec<LabelledPoints> = Vec::new();
        let mut duration_x = false;
        for (folder, folder_label) in self.folders.iter().zip(&labels) {
            let table = &folder.summary;
            let swept = &folder.manifest.swept;
            let x_index = swept.iter().position(|key| *key == x_key).unwrap_or(0);
            let mean = table.require(&format!("{metric}_mean"))?;
            let ci = table.column(&format!("{metric}_ci95"));
            for row in 0..table.rows.len() {
                let cells = &table.rows[row];
                duration_x |= cells[x_index].parse::<f64>().is_err();
                let x = axis_number(&cells[x_index]).unwrap_or(0.0);
                let y = table.number(row, mean)?;
                let half = ci.map(|c| table.number(row, c)).transpose()?.filter(|c| c.is_finite()).unwrap_or(0.0);
                let series: Vec<String> = swept
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != x_index)
                    .map(|(i, key)| format!("{key}={}", cells[i]))
                    .collect();
                let label = match (self.folders.len(), series.is_empty()) {
                    (1, false) => series.join(", "),
                    (_, true) => folder_label.clone(),
                    _ => format!("{folder_label}: {}", series.join(", ")),
                };
                match lines.iter_mut().find(|(existing, _)| *existing == label) {
                    Some((_, points)) => points.push((x, y, half)),
                    None => lines.push((label, vec![(x, y, half)])),
                }
            }
        }
        for (_, points) in &mut lines {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        let sources: Vec<String> = self
            .folders
            .iter()
            .map(|f| format!("{} ({} replicates)", f.manifest.scenario.name, f.manifest.replicates))
            .collect();
        let series: Vec<String> = lines.iter().map(|(label, _)| label.clone()).collect();
        let lines = lines
            .into_iter()
            .enumerate()
            .map(|(series, (_, points))| {
                let points = points
                    .into_iter()
                    .map(|(x, y, half)| LinePoint { x, y: Spread::symmetric(y, half, (0.0, f64::INFINITY)) })
                    .collect();
                Line { series, points, theory: Vec::new(), tag: 0 }
            })
            .collect();
        let chart = LinesChart {
            frame: Frame {
                title: format!("compare: {metric} by {x_key}"),
                subtitle: format!("mean with 95% CI · {}", sources.join(" vs ")),
                x_label: if duration_x { format!("{x_key} (ms)") } else { x_key },
                y_label: metric,
            },
            legend_title: String::new(),
            series,
            panels: vec![LinePanel { label: String::new(), lines }],
            y_ceiling: f64::INFINITY,
        };
        draw_lines_chart(chart, stem)
    }

    /// The first swept parameter of the first folder that every folder sweeps over numbers.
    fn common_x(&self) -> Result<String, Error> {
        let numeric: Vec<Vec<&str>> = self.folders.iter().map(numeric_swept).collect();
        let common = numeric[0].iter().find(|key| numeric.iter().all(|keys| keys.contains(key)));
        if let Some(key) = common {
            return Ok((*key).to_owned());
        }
        let listing: Vec<String> = self
            .folders
            .iter()
            .zip(&numeric)
            .map(|(folder, keys)| {
                let keys = if keys.is_empty() { "none".to_owned() } else { keys.join(", ") };
                format!("{} sweeps {keys}", folder.dir.display())
            })
            .collect();
        Err(Error::Results {
            path: self.folders[0].dir.clone(),
            message: format!(
                "the folders have no numeric swept parameter in common to put on the x axis ({}); compare folders \
                 that sweep the same numeric parameter",
                listing.join("; ")
            ),
        })
    }
}
