//! The terminal view of a results folder (`retrylab show`, `run --show`): the first timeline series of every
//! point as a sparkline of Unicode blocks on one shared scale, and the summary table (swept parameters and the
//! model's chart metrics as mean ± 95% CI half-width). Every line fits the given width; colour only when asked.

use std::io::IsTerminal;

use super::charts::short_number;
use super::read::ResultsFolder;

/// A number in at most about seven columns: three significant digits, whole numbers from 100 up, and an exponent
/// for tiny ones.
fn compact(x: f64) -> String {
    if x != 0.0 && x.abs() < 0.001 { format!("{x:.1e}") } else { short_number(x) }
}

/// Eight heights of a sparkline cell; an empty bucket is a space.
const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
/// The narrowest view drawn; a narrower terminal gets lines this long.
pub const MIN_WIDTH: usize = 30;
/// The width when neither `COLUMNS` nor the terminal says.
const DEFAULT_WIDTH: usize = 100;

/// How to draw: the line width, and whether to use ANSI colours.
#[derive(Debug, Clone, Copy)]
pub struct View {
    pub width: usize,
    pub color: bool,
}

impl View {
    /// The view for standard output: the width from `COLUMNS`, else the terminal, else 100 columns; colour only
    /// when standard output is a terminal and `NO_COLOR` is unset or empty.
    pub fn for_stdout() -> View {
        let from_env = std::env::var("COLUMNS").ok().and_then(|text| text.trim().parse::<usize>().ok());
        let from_terminal = || console::Term::stdout().size_checked().map(|(_, columns)| usize::from(columns));
        let width = from_env.filter(|&w| w > 0).or_else(from_terminal).unwrap_or(DEFAULT_WIDTH);
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
        View { width: width.max(MIN_WIDTH), color: !no_color && std::io::stdout().is_terminal() }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color && !text.is_empty() { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_owned() }
    }
}

/// The number of terminal columns `text` takes.
fn width_of(text: &str) -> usize {
    console::measure_text_width(text)
}

/// `text` cut to `width` columns, ending in `…` when cut.
fn fit(text: &str, width: usize) -> String {
    if width_of(text) <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    for ch in text.chars() {
        if width_of(&out) + width_of(&ch.to_string()) + 1 > width {
            break;
        }
        out.push(ch);
    }
    out.push('…');
    out
}

/// `text` padded with spaces to `width` columns (after cutting it to fit).
fn pad(text: &str, width: usize) -> String {
    let text = fit(text, width);
    let padding = width.saturating_sub(width_of(&text));
    format!("{text}{}", " ".repeat(padding))
}

/// `values` squeezed into at most `width` cells (each the highest value of its span of buckets) and drawn as
/// blocks scaled to `max`.
pub fn sparkline(values: &[f64], width: usize, max: f64) -> String {
    let cells = values.len().min(width);
    (0..cells)
        .map(|cell| {
            let (start, end) = (cell * values.len() / cells, ((cell + 1) * values.len() / cells).max(cell + 1));
            let peak = values[start..end.min(values.len())].iter().copied().fold(0.0, f64::max);
            if !(peak > 0.0 && max > 0.0) {
                return ' ';
            }
            let level = ((peak / max * 8.0).ceil() as usize).clamp(1, 8);
            BLOCKS[level - 1]
        })
        .collect()
}

/// One row per point: its label and its swept values.
struct PointRow {
    label: String,
    cells: Vec<String>,
}

/// The points in summary.csv's order, labelled `key=value …`, or by their values alone when those labels would
/// not fit in `label_width` (the keys then head the column).
fn point_rows(folder: &ResultsFolder, label_width: usize) -> (Vec<PointRow>, Option<String>) {
    let swept = &folder.manifest.swept;
    let cells: Vec<Vec<String>> =
        folder.summary.rows.iter().map(|row| row.iter().take(swept.len()).cloned().collect()).collect();
    let keyed = |cells: &[String]| {
        swept.iter().zip(cells).map(|(key, value)| format!("{key}={value}")).collect::<Vec<_>>().join(" ")
    };
    let fits = cells.iter().all(|cells| width_of(&keyed(cells)) <= label_width);
    let label = |cells: &[String]| match () {
        _ if swept.is_empty() => folder.manifest.scenario.name.clone(),
        _ if fits => keyed(cells),
        _ => cells.join(" "),
    };
    let rows = cells.iter().map(|cells| PointRow { label: label(cells), cells: cells.clone() }).collect();
    (rows, (!fits && !swept.is_empty()).then(|| swept.join(" ")))
}

/// Draws the whole view of `folder`.
pub fn render(folder: &ResultsFolder, view: &View) -> String {
    let width = view.width.max(MIN_WIDTH);
    let manifest = &folder.manifest;
    let mut lines: Vec<String> = Vec::new();
    let heading = format!(
        "{} · {} model · {} points × {} replicates · retrylab {}",
        manifest.scenario.name, manifest.model, manifest.points, manifest.replicates, manifest.retrylab_version
    );
    lines.push(view.paint("1", &fit(&heading, width)));
    lines.push(fit(&folder.dir.display().to_string(), width));
    lines.push(String::new());
    let (rows, keys) = point_rows(folder, width * 2 / 5);
    policy_section(folder, &rows, width, &mut lines);
    timeline_section(folder, &rows, keys.as_deref(), view, width, &mut lines);
    lines.push(String::new());
    summary_section(folder, &rows, view, width, &mut lines);
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// The client policy each point ran (once when every point ran the same), from the manifest.
fn policy_section(folder: &ResultsFolder, rows: &[PointRow], width: usize, lines: &mut Vec<String>) {
    let policies = &folder.manifest.policies;
    if policies.is_empty() {
        return;
    }
    if policies.iter().all(|policy| *policy == policies[0]) {
        lines.push(fit(&format!("client policy: {}", policies[0]), width));
    } else {
        lines.push("client policy per point:".to_owned());
        for (row, policy) in rows.iter().zip(policies) {
            lines.push(fit(&format!("  {}: {policy}", row.label.trim_end()), width));
        }
    }
    lines.push(String::new());
}

fn timeline_section(
    folder: &ResultsFolder,
    rows: &[PointRow],
    keys: Option<&str>,
    view: &View,
    width: usize,
    lines: &mut Vec<String>,
) {
    let manifest = &folder.manifest;
    let Some(series) = folder.timeline_series().first() else {
        lines.push(fit("(this model records no timeline)", width));
        return;
    };
    let table = &folder.timeline;
    let column = manifest.swept.len() + 1;
    let time_column = manifest.swept.len();
    let mut values: Vec<Vec<f64>> = vec![Vec::new(); rows.len()];
    let mut end_ms = 0.0_f64;
    for row in &table.rows {
        let key = &row[..manifest.swept.len()];
        if let Some(point) = rows.iter().position(|p| p.cells == key) {
            values[point].push(row.get(column).and_then(|cell| cell.parse().ok()).unwrap_or(0.0));
            end_ms = end_ms.max(row.get(time_column).and_then(|cell| cell.parse().ok()).unwrap_or(0.0));
        }
    }
    let max = values.iter().flatten().copied().fold(0.0, f64::max);
    let buckets = values.iter().map(Vec::len).max().unwrap_or(0);
    let peaks: Vec<String> =
        values.iter().map(|v| format!("peak {}", compact(v.iter().copied().fold(0.0, f64::max)))).collect();
    let peak_width = peaks.iter().map(|p| width_of(p)).max().unwrap_or(0);
    let label_width =
        rows.iter().map(|r| width_of(&r.label)).chain(keys.map(width_of)).max().unwrap_or(0).min(width * 2 / 5);
    let mut spark_width = width.saturating_sub(label_width + 2 + peak_width + 2);
    let show_peaks = spark_width >= 10;
    if !show_peaks {
        spark_width = width.saturating_sub(label_width + 2);
    }
    let squeezed = buckets > spark_width;
    let heading = format!("{series} per {} bucket, mean over replicates", manifest.timeline_bucket);
    lines.push(view.paint("1", &fit(&heading, width)));
    let note = format!(
        "one row per point, one scale: █ = {}{}",
        compact(max),
        if squeezed { "; a cell is the highest bucket of its span" } else { "" }
    );
    lines.push(fit(&note, width));
    let end_label = format!("{} ms", compact(end_ms + bucket_ms(&manifest.timeline_bucket)));
    let axis_width = buckets.min(spark_width);
    let axis = format!("0{}{end_label}", " ".repeat(axis_width.saturating_sub(1 + width_of(&end_label)).max(1)));
    lines.push(fit(&format!("{}  {axis}", pad(keys.unwrap_or(""), label_width)), width));
    for ((row, values), peak) in rows.iter().zip(&values).zip(&peaks) {
        let bars = sparkline(values, spark_width, max);
        let bars_padded = format!("{bars}{}", " ".repeat(spark_width.saturating_sub(width_of(&bars))));
        let mut line = format!("{}  {}", pad(&row.label, label_width), view.paint("36", &bars_padded));
        if show_peaks {
            line.push_str(&format!("  {}", view.paint("2", peak)));
        }
        lines.push(line.trim_end().to_owned());
    }
}

/// The width of a timeline bucket in ms, from its text in the manifest ("10ms", "1s"); 0 if unreadable.
fn bucket_ms(text: &str) -> f64 {
    crate::scenario::parse_duration(text).map_or(0.0, |d| d.as_millis_f64())
}

fn summary_section(folder: &ResultsFolder, rows: &[PointRow], view: &View, width: usize, lines: &mut Vec<String>) {
    let table = &folder.summary;
    let metrics: Vec<&str> = folder
        .model
        .default_chart_metrics()
        .iter()
        .copied()
        .filter(|metric| table.column(&format!("{metric}_mean")).is_some())
        .collect();
    let mut columns: Vec<(String, Vec<String>)> = folder
        .manifest
        .swept
        .iter()
        .enumerate()
        .map(|(i, key)| (key.clone(), rows.iter().map(|row| row.cells[i].clone()).collect()))
        .collect();
    for metric in &metrics {
        let mean = table.column(&format!("{metric}_mean"));
        let ci = table.column(&format!("{metric}_ci95"));
        let cells = (0..table.rows.len())
            .map(|row| {
                let number = |column: Option<usize>| column.and_then(|c| table.number(row, c).ok()).unwrap_or(f64::NAN);
                match (number(mean), number(ci)) {
                    (m, _) if m.is_nan() => "n/a".to_owned(),
                    (m, c) if c.is_nan() || c == 0.0 => compact(m),
                    (m, c) => format!("{} ± {}", compact(m), compact(c)),
                }
            })
            .collect();
        columns.push(((*metric).to_owned(), cells));
    }
    let column_width = |(name, cells): &(String, Vec<String>)| {
        cells.iter().map(|c| width_of(c)).chain([width_of(name)]).max().unwrap_or(0)
    };
    let swept = folder.manifest.swept.len();
    let mut hidden = 0;
    while columns.len() > swept + 1 && columns.iter().map(|c| column_width(c) + 2).sum::<usize>() > width + 2 {
        columns.pop();
        hidden += 1;
    }
    let heading = format!(
        "summary: mean ± 95% CI half-width over {} replicates{}",
        folder.manifest.replicates,
        if hidden > 0 { format!(" · {hidden} more metrics in summary.csv") } else { String::new() }
    );
    lines.push(view.paint("1", &fit(&heading, width)));
    let widths: Vec<usize> = columns.iter().map(column_width).collect();
    let render_row = |cells: Vec<&str>| {
        let text: Vec<String> = cells.iter().zip(&widths).map(|(cell, w)| pad(cell, *w)).collect();
        fit(text.join("  ").trim_end(), width)
    };
    lines.push(view.paint("4", &render_row(columns.iter().map(|(name, _)| name.as_str()).collect())));
    for row in 0..rows.len() {
        lines.push(render_row(columns.iter().map(|(_, cells)| cells[row].as_str()).collect()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparklines_scale_to_the_shared_maximum_and_squeeze_by_peaks() {
        assert_eq!(sparkline(&[0.0, 1.0, 4.0, 8.0], 10, 8.0), " ▁▄█");
        assert_eq!(sparkline(&[0.0, 8.0, 0.0, 0.0, 2.0, 0.0], 3, 8.0), "█ ▂");
        assert_eq!(sparkline(&[5.0, 5.0], 2, 0.0), "  ");
    }

    #[test]
    fn text_is_cut_with_an_ellipsis_and_padded() {
        assert_eq!(fit("clients=100", 6), "clien…");
        assert_eq!(fit("short", 6), "short");
        assert_eq!(pad("ab", 4), "ab  ");
    }
}
