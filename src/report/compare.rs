//! `retrylab compare`: one metric from several results folders (or the series within one) on one chart, against
//! the swept parameter they have in common: lines when it is numeric, grouped bars (one group per value, one bar
//! per folder) when it is a name, and bars per folder when none of them sweeps anything. When the folders share
//! no swept parameter, the error says what each one sweeps and what would work.

use std::path::{Path, PathBuf};

use super::charts::lines::{MAX_LINES, Sample, few, lay_out};
use super::charts::text::{TimeUnit, metric_phrase, metric_scale};
use super::charts::{Frame, LinesChart, Spread, draw_grouped_bars, draw_lines_chart, unit_range};
use super::grouped_bars::{BarSeries, GroupedBars};
use super::read::{ResultsFolder, Table};
use crate::Error;
use crate::model::MetricSpec;
use crate::scenario::parse_duration;

/// What to compare and where to draw it.
pub(crate) struct Comparison<'a> {
    pub folders: &'a [ResultsFolder],
    /// The metric to draw [default: the first chart metric of the first folder].
    pub metric: Option<&'a str>,
}

/// What `compare` drew.
pub(crate) struct Drawn {
    pub files: Vec<PathBuf>,
    /// The metric's name now, and the name it was asked for by when that was a former one.
    pub metric: String,
    pub asked_as: Option<String>,
}

/// A swept value as a number on the x axis: numbers as they are, durations in ms.
fn axis_number(cell: &str) -> Option<f64> {
    cell.parse::<f64>().ok().filter(|x| x.is_finite()).or_else(|| parse_duration(cell).ok().map(|d| d.as_millis_f64()))
}

/// Whether every value `folder` sweeps `key` over is a number or a duration.
fn numeric(folder: &ResultsFolder, key: &str) -> bool {
    let index = folder.manifest.swept.iter().position(|k| k == key);
    index.is_some_and(|i| folder.summary.rows.iter().all(|row| axis_number(&row[i]).is_some()))
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

/// The metric of `folder`'s model that answers to `name` (its name or its former name).
fn spec_of(folder: &ResultsFolder, name: &str) -> Option<&'static MetricSpec> {
    folder.model.metrics().iter().find(|spec| spec.answers_to(name))
}

/// The name `metric` has in `folder`'s summary.csv: as given, else the model's current or former name of the
/// metric it answers to.
fn column_name(folder: &ResultsFolder, metric: &str) -> Result<String, Error> {
    let has = |name: &str| folder.summary.column(&format!("{name}_mean")).is_some();
    if has(metric) {
        return Ok(metric.to_owned());
    }
    let bad = |message: String| Error::Results { path: folder.summary.path.clone(), message };
    match spec_of(folder, metric) {
        Some(spec) => {
            std::iter::once(spec.name).chain(spec.formerly).find(|name| has(name)).map(str::to_owned).ok_or_else(|| {
                bad(format!(
                    "the {} model's metric `{}` is left out of this summary.csv: no run of this study could fill it",
                    folder.model.name(),
                    spec.name
                ))
            })
        }
        None => {
            Err(bad(format!("no metric `{metric}`; valid metrics here: {}", metrics_of(&folder.summary).join(", "))))
        }
    }
}

/// One row of a folder's summary.csv: the folder, the row, and its value of the metric.
struct Row {
    folder: usize,
    row: usize,
    value: Spread,
}

impl Comparison<'_> {
    /// The metric asked for, else the first folder's first chart metric (its scenario's `[charts] metrics` when
    /// the scenario can be read, else its model's default).
    pub(crate) fn metric(&self) -> String {
        if let Some(metric) = self.metric {
            return metric.to_owned();
        }
        let first = &self.folders[0];
        let from_scenario = first.scenario().ok().and_then(|(scenario, _)| scenario.charts.metrics.first().copied());
        from_scenario.or_else(|| first.model.default_chart_metrics().first().copied()).unwrap_or("calls").to_owned()
    }

    /// Checks the folders and draws `stem.svg` and `stem.png`. Nothing is written when the input is bad.
    pub(crate) fn draw(&self, stem: &Path) -> Result<Drawn, Error> {
        let asked = self.metric();
        let columns: Vec<String> = self.folders.iter().map(|f| column_name(f, &asked)).collect::<Result<_, _>>()?;
        let spec = self.folders.iter().find_map(|folder| spec_of(folder, &asked));
        let metric = spec.map_or_else(|| asked.clone(), |spec| spec.name.to_owned());
        let domain = spec.map_or((f64::NEG_INFINITY, f64::INFINITY), |spec| unit_range(spec.unit));
        let mut rows = Vec::new();
        for (f, (folder, column)) in self.folders.iter().zip(&columns).enumerate() {
            let table = &folder.summary;
            let mean = table.require(&format!("{column}_mean"))?;
            let half = table.column(&format!("{column}_ci95"));
            let ends = (table.column(&format!("{column}_lo95")), table.column(&format!("{column}_hi95")));
            for row in 0..table.rows.len() {
                let mean = table.number(row, mean)?;
                let mut value =
                    Spread::symmetric(mean, half.map(|c| table.number(row, c)).transpose()?.unwrap_or(0.0), domain);
                if let (Some(low), Some(high)) = ends {
                    let (low, high) = (table.number(row, low)?, table.number(row, high)?);
                    if low.is_finite() && high.is_finite() {
                        (value.low, value.high) = (low, high);
                    }
                }
                rows.push(Row { folder: f, row, value });
            }
        }
        let asked_as = (asked != metric).then_some(asked);
        let mut notes = vec![match spec {
            Some(spec) => format!("{metric}: {}", metric_phrase(spec)),
            None => metric.clone(),
        }];
        if let Some(asked_as) = &asked_as {
            notes[0].push_str(&format!(" (asked for as {asked_as})"));
        }
        let largest = rows.iter().map(|row| row.value.high).filter(|v| v.is_finite()).fold(0.0, f64::max);
        let (y_label, divisor) = spec.map_or_else(|| (metric.clone(), 1.0), |spec| metric_scale(spec, largest));
        for row in &mut rows {
            row.value = row.value.scaled(divisor);
        }
        let domain = (domain.0 / divisor, domain.1 / divisor);
        let files = match self.common_x()? {
            Some((key, true)) => self.draw_lines(stem, &metric, &key, &rows, notes, y_label, domain.1)?,
            Some((key, false)) => self.draw_bars(stem, &metric, Some(&key), &rows, notes, y_label)?,
            None => self.draw_bars(stem, &metric, None, &rows, notes, y_label)?,
        };
        Ok(Drawn { files, metric, asked_as })
    }

    /// "fast = small, 3 replicates; slow = …": where each folder's numbers come from.
    fn sources(&self) -> String {
        let labels = folder_labels(self.folders);
        let sources: Vec<String> = self
            .folders
            .iter()
            .zip(&labels)
            .map(|(f, label)| {
                let replicates = match f.manifest.replicates {
                    1 => "1 replicate".to_owned(),
                    n => format!("{n} replicates"),
                };
                format!("{label} = {}, {replicates}", f.manifest.scenario.name)
            })
            .collect();
        sources.join("; ")
    }

    /// A row's swept values other than `skip`, as `key=value` pairs.
    fn others(&self, row: &Row, skip: Option<&str>) -> Vec<String> {
        let folder = &self.folders[row.folder];
        let cells = &folder.summary.rows[row.row];
        let swept = folder.manifest.swept.iter().enumerate().filter(|(_, key)| Some(key.as_str()) != skip);
        swept.map(|(i, key)| format!("{key}={}", cells[i])).collect()
    }

    /// The legend label of a row: its folder (when there are several) and its other swept values.
    fn series_label(&self, labels: &[String], folder: usize, others: &[String]) -> String {
        match (self.folders.len(), others.is_empty()) {
            (1, false) => others.join(", "),
            (_, true) => labels[folder].clone(),
            _ => format!("{}: {}", labels[folder], others.join(", ")),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn draw_lines(
        &self,
        stem: &Path,
        metric: &str,
        x_key: &str,
        rows: &[Row],
        mut notes: Vec<String>,
        y_label: String,
        y_ceiling: f64,
    ) -> Result<Vec<PathBuf>, Error> {
        let labels = folder_labels(self.folders);
        let cell = |row: &Row| {
            let folder = &self.folders[row.folder];
            let index = folder.manifest.swept.iter().position(|key| key == x_key).unwrap_or(0);
            folder.summary.rows[row.row][index].clone()
        };
        let durations = rows.iter().any(|row| cell(row).parse::<f64>().is_err());
        let largest = rows.iter().filter_map(|row| axis_number(&cell(row))).fold(0.0, f64::max);
        let unit = durations.then(|| TimeUnit::for_span(largest));
        // Dimensions: the folder, then every other parameter some folder sweeps ("" where one does not), so that a
        // chart of too many lines can make one panel per folder or per value of one of them.
        let mut keys: Vec<&str> = Vec::new();
        for key in self.folders.iter().flat_map(|f| f.manifest.swept.iter()) {
            if key != x_key && !keys.contains(&key.as_str()) {
                keys.push(key);
            }
        }
        let samples: Vec<Sample> = rows
            .iter()
            .map(|row| {
                let folder = &self.folders[row.folder];
                let value = |key: &str| {
                    let index = folder.manifest.swept.iter().position(|k| k == key);
                    index.map_or_else(String::new, |i| folder.summary.rows[row.row][i].clone())
                };
                Sample {
                    dims: std::iter::once(labels[row.folder].clone()).chain(keys.iter().map(|k| value(k))).collect(),
                    x: axis_number(&cell(row)).unwrap_or(0.0) / unit.map_or(1.0, TimeUnit::ms),
                    y: row.value,
                    tag: row.folder,
                }
            })
            .collect();
        let names: Vec<String> = std::iter::once("folder").chain(keys.iter().copied()).map(str::to_owned).collect();
        let label = |pairs: &[(usize, &str)]| {
            let folder = pairs.iter().find(|(d, _)| *d == 0).map(|(_, v)| *v);
            let others: Vec<String> = pairs
                .iter()
                .filter(|(d, v)| *d > 0 && !v.is_empty())
                .map(|(d, v)| format!("{}={v}", names[*d]))
                .collect();
            match (folder, others.is_empty()) {
                (Some(folder), false) if self.folders.len() > 1 => format!("{folder}: {}", others.join(", ")),
                (Some(folder), true) => folder.to_owned(),
                _ => others.join(", "),
            }
        };
        let mut layout = lay_out(&names, None, &samples, &label);
        for panel in &mut layout.panels {
            panel.label = panel.label.trim_start_matches("folder=").to_owned();
        }
        if rows.iter().any(|row| row.value.has_interval()) {
            notes.push("band: 95% CI".into());
        }
        if let Some(facet) = layout.facet {
            notes.push(format!("one panel per {} (more than {MAX_LINES} lines)", names[facet]));
        }
        if !layout.left_out.is_empty() {
            notes.push(format!("left out: {}; compare fewer folders or fewer points", few(&layout.left_out)));
        }
        notes.push(self.sources());
        let chart = LinesChart {
            frame: Frame {
                title: format!("compare: {metric} by {x_key}"),
                subtitle: notes.join(" · "),
                x_label: unit.map_or_else(|| x_key.to_owned(), |unit| format!("{x_key} ({})", unit.symbol())),
                y_label,
            },
            legend_title: String::new(),
            series: layout.series,
            panels: layout.panels,
            y_ceiling,
        };
        draw_lines_chart(chart, stem)
    }

    /// Grouped bars: one group per value of `key` (one group named after the metric without it), one bar per
    /// folder and its other swept values.
    fn draw_bars(
        &self,
        stem: &Path,
        metric: &str,
        key: Option<&str>,
        rows: &[Row],
        mut notes: Vec<String>,
        y_label: String,
    ) -> Result<Vec<PathBuf>, Error> {
        let labels = folder_labels(self.folders);
        let mut groups: Vec<String> = Vec::new();
        let mut series: Vec<BarSeries> = Vec::new();
        for row in rows {
            let folder = &self.folders[row.folder];
            let group = match key {
                Some(key) => {
                    let index = folder.manifest.swept.iter().position(|k| k == key).unwrap_or(0);
                    folder.summary.rows[row.row][index].clone()
                }
                None => metric.to_owned(),
            };
            let group_index = groups.iter().position(|g| *g == group).unwrap_or(groups.len());
            if group_index == groups.len() {
                groups.push(group);
            }
            let label = self.series_label(&labels, row.folder, &self.others(row, key));
            let index = series.iter().position(|s| s.label == label).unwrap_or(series.len());
            if index == series.len() {
                series.push(BarSeries { label, values: Vec::new() });
            }
            let values = &mut series[index].values;
            values.resize(values.len().max(group_index + 1), None);
            values[group_index] = Some(row.value);
        }
        for s in &mut series {
            s.values.resize(groups.len(), None);
        }
        if series.len() > MAX_LINES {
            let left_out: Vec<String> = series.drain(MAX_LINES..).map(|s| s.label).collect();
            notes.push(format!("left out: {}; compare fewer folders", few(&left_out)));
        }
        if rows.iter().any(|row| row.value.has_interval()) {
            notes.insert(1, "whiskers: 95% CI".into());
        }
        notes.push(self.sources());
        let by = key.map_or_else(String::new, |key| format!(" by {key}"));
        let bars = GroupedBars {
            title: format!("compare: {metric}{by}"),
            subtitle: notes.join(" · "),
            y_label,
            x_label: key.unwrap_or_default().to_owned(),
            legend_title: String::new(),
            groups,
            series,
        };
        draw_grouped_bars(bars, stem)
    }

    /// The swept parameter the chart puts along x, and whether it is numeric: the first of the first folder's
    /// that every folder sweeps, a numeric one first; `None` when no folder sweeps anything. An error that says
    /// what each folder sweeps when they share nothing.
    fn common_x(&self) -> Result<Option<(String, bool)>, Error> {
        let first = &self.folders[0].manifest.swept;
        let everywhere = |key: &&String| self.folders.iter().all(|f| f.manifest.swept.contains(key));
        let shared: Vec<&String> = first.iter().filter(everywhere).collect();
        if let Some(key) = shared.iter().find(|key| self.folders.iter().all(|f| numeric(f, key))) {
            return Ok(Some(((*key).clone(), true)));
        }
        if let Some(key) = shared.first() {
            return Ok(Some(((*key).clone(), false)));
        }
        if self.folders.iter().all(|f| f.manifest.swept.is_empty()) {
            return Ok(None);
        }
        let listing: Vec<String> = self
            .folders
            .iter()
            .map(|folder| {
                let swept: Vec<String> = folder
                    .manifest
                    .swept
                    .iter()
                    .map(|key| {
                        let kind = if numeric(folder, key) { "numbers" } else { "names" };
                        format!("{key} ({kind})")
                    })
                    .collect();
                let swept = if swept.is_empty() { "nothing (one point)".to_owned() } else { swept.join(", ") };
                format!("{} sweeps {swept}", folder.dir.display())
            })
            .collect();
        Err(Error::Results {
            path: self.folders[0].dir.clone(),
            message: format!(
                "the folders share no swept parameter to put along the x axis ({}); compare folders that sweep the \
                 same parameter (lines for numbers, bars for names), or rerun one with --set 'sweep.KEY=[…]' so \
                 that they do, or compare each folder on its own",
                listing.join("; ")
            ),
        })
    }
}
