//! The terminal view of a results folder (`retrylab show`, `run --show`): the client policy of every point
//! (wrapped, never cut); the series the timeline chart draws, one sparkline of Unicode blocks per point on one
//! shared time axis and one scale; and the summary table (swept parameters and the chart metrics as mean ± 95% CI
//! half-width, a herd's retry synchrony first). Every line fits the given width; colour only when asked.

use std::io::IsTerminal;

use super::charts::short_number;
use super::read::ResultsFolder;
use crate::scenario::point_of;

/// A number in at most about seven columns: three significant digits, whole numbers from 100 up, and an exponent
/// for tiny ones.
fn compact(x: f64) -> String {
    if x != 0.0 && x.abs() < 0.001 { format!("{x:.1e}") } else { short_number(x) }
}

/// Eight heights of a sparkline cell; an empty bucket is a space.
const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
/// The narrowest view drawn; a narrower terminal gets lines this long.
pub const MIN_WIDTH: usize = 20;
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

/// `text` in lines of at most `width` columns, broken at spaces (inside a word longer than a line only when it
/// must), every line after the first indented by `indent` spaces: nothing is cut.
pub(crate) fn wrap(text: &str, width: usize, indent: usize) -> Vec<String> {
    let indent = " ".repeat(indent.min(width / 2));
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_inclusive(' ') {
        let bare = line.trim_end().is_empty();
        if !bare && width_of(&line) + width_of(word.trim_end()) > width {
            lines.push(line.trim_end().to_owned());
            line = indent.clone();
        }
        line.push_str(word);
        while width_of(line.trim_end()) > width {
            let mut head = String::new();
            let mut rest = line.chars();
            for ch in rest.by_ref() {
                if width_of(&head) + width_of(&ch.to_string()) > width {
                    lines.push(head);
                    head = format!("{indent}{ch}");
                    break;
                }
                head.push(ch);
            }
            line = head + rest.as_str();
        }
    }
    if !line.trim_end().is_empty() {
        lines.push(line.trim_end().to_owned());
    }
    lines
}

/// `values` (one per bucket from time 0) on an axis of `span` buckets squeezed into at most `width` cells, each
/// cell the highest value of its buckets drawn as a block scaled to `max`; cells past the last value are blank, so
/// rows of different length share one time axis.
pub fn sparkline(values: &[f64], span: usize, width: usize, max: f64) -> String {
    let span = span.max(values.len());
    let cells = span.min(width);
    (0..cells)
        .map(|cell| {
            let (start, end) = (cell * span / cells, (cell + 1) * span / cells);
            let peak = values.get(start..end.min(values.len())).unwrap_or_default().iter().copied().fold(0.0, f64::max);
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

/// What the folder's scenario (rebuilt from the manifest, when it can be) says about drawing it.
struct Reading {
    /// Every point releases its clients at once at t = 0 (a herd): the release bucket holds the first attempts of
    /// them all, so the peaks leave it out and the retry synchrony metrics lead the summary.
    herd: bool,
    /// The summary's metrics: the synchrony ones first for a herd, then the scenario's `[charts] metrics`, else the
    /// model's default chart metrics.
    metrics: Vec<&'static str>,
    /// The timeline series drawn, as the timeline chart draws it: `[charts] timeline_series`, else the first.
    series: Option<&'static str>,
}

/// The metrics that measure how much the retries come in waves (docs/metrics.md).
const SYNCHRONY_METRICS: [&str; 2] = ["retry_peak_to_mean", "retry_dispersion"];

impl Reading {
    fn of(folder: &ResultsFolder) -> Reading {
        let scenario = folder.scenario().ok();
        let herd = scenario.as_ref().is_some_and(|(scenario, points)| {
            !points.is_empty()
                && points.iter().all(|point| point_of(scenario, &point.swept).choice("kind").ok() == Some("burst"))
        });
        let chosen = scenario.as_ref().map(|(scenario, _)| scenario.charts.metrics.clone()).unwrap_or_default();
        let chosen = if chosen.is_empty() { folder.model.default_chart_metrics().to_vec() } else { chosen };
        let lead = if herd { &SYNCHRONY_METRICS[..] } else { &[] };
        let mut metrics: Vec<&'static str> = Vec::new();
        for metric in lead.iter().chain(&chosen) {
            if !metrics.contains(metric) && folder.summary.column(&format!("{metric}_mean")).is_some() {
                metrics.push(metric);
            }
        }
        // The timeline chart's first column: the scenario's choice, else the model's default.
        let series = scenario
            .as_ref()
            .and_then(|(scenario, _)| scenario.charts.timeline_series.first().copied())
            .or_else(|| folder.model.default_timeline_series().first().copied());
        Reading { herd, metrics, series }
    }
}

/// Draws the whole view of `folder`.
pub fn render(folder: &ResultsFolder, view: &View) -> String {
    let width = view.width.max(MIN_WIDTH);
    let manifest = &folder.manifest;
    let reading = Reading::of(folder);
    let mut lines: Vec<String> = Vec::new();
    let heading = format!(
        "{} · {} model · {} points × {} replicates · retrylab {}",
        manifest.scenario.name, manifest.model, manifest.points, manifest.replicates, manifest.retrylab_version
    );
    lines.push(view.paint("1", &fit(&heading, width)));
    lines.push(fit(&folder.dir.display().to_string(), width));
    if let Some(emulation) = &manifest.emulation {
        let line = format!(
            "emulated on real sockets against {} at time scale {}; timers woke {:.3} ms late (p99, scenario time)",
            emulation.server, emulation.time_scale, emulation.timer_lag_p99_ms
        );
        lines.push(fit(&line, width));
    }
    lines.push(String::new());
    let (rows, keys) = point_rows(folder, width * 2 / 5);
    policy_section(folder, &rows, width, &mut lines);
    timeline_section(folder, &rows, keys.as_deref(), &reading, view, width, &mut lines);
    lines.push(String::new());
    summary_section(folder, &rows, &reading, view, width, &mut lines);
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// The results' warnings, then the client policy and the model's settings each point ran, from the manifest,
/// wrapped and never cut: each once when every point ran the same, else once per different text, labelled with the
/// swept values its points share.
fn policy_section(folder: &ResultsFolder, rows: &[PointRow], width: usize, lines: &mut Vec<String>) {
    for warning in &folder.manifest.warnings {
        lines.extend(wrap(&format!("warning: {warning}"), width, 4));
    }
    if !folder.manifest.warnings.is_empty() {
        lines.push(String::new());
    }
    for (name, texts) in [("client policy", &folder.manifest.policies), ("model settings", &folder.manifest.settings)] {
        if texts.is_empty() {
            continue;
        }
        let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
        for (point, text) in texts.iter().enumerate() {
            match groups.iter_mut().find(|(shared, _)| shared == text) {
                Some((_, points)) => points.push(point),
                None => groups.push((text, vec![point])),
            }
        }
        if groups.len() == 1 {
            lines.extend(wrap(&format!("{name}: {}", texts[0]), width, 4));
        } else {
            lines.push(format!("{name} per point:"));
            for (text, points) in &groups {
                lines.extend(wrap(&format!("  {}: {text}", group_label(folder, rows, points)), width, 6));
            }
        }
    }
    lines.push(String::new());
}

/// The label of a group of points: the point's own label for one point, else the `key=value` of every swept
/// parameter its points share (or how many points it holds when they share none).
fn group_label(folder: &ResultsFolder, rows: &[PointRow], points: &[usize]) -> String {
    let cells = |point: usize| rows.get(point).map(|row| row.cells.as_slice());
    if let [point] = points {
        return rows.get(*point).map_or_else(|| format!("point {}", point + 1), |row| row.label.trim_end().to_owned());
    }
    let shared: Vec<String> = folder
        .manifest
        .swept
        .iter()
        .enumerate()
        .filter_map(|(i, key)| {
            let value = cells(points[0])?.get(i)?;
            points
                .iter()
                .all(|&point| cells(point).and_then(|c| c.get(i)) == Some(value))
                .then(|| format!("{key}={value}"))
        })
        .collect();
    if shared.is_empty() { format!("{} points", points.len()) } else { shared.join(" ") }
}

fn timeline_section(
    folder: &ResultsFolder,
    rows: &[PointRow],
    keys: Option<&str>,
    reading: &Reading,
    view: &View,
    width: usize,
    lines: &mut Vec<String>,
) {
    let manifest = &folder.manifest;
    let all = folder.timeline_series();
    let Some(column) =
        reading.series.and_then(|name| all.iter().position(|s| s == name)).or((!all.is_empty()).then_some(0))
    else {
        lines.push(fit("(this model records no timeline)", width));
        return;
    };
    let series = &all[column];
    let swept = manifest.swept.len();
    let bucket_ms = bucket_ms(&manifest.timeline_bucket);
    let number = |cell: Option<&String>| cell.and_then(|cell| cell.parse::<f64>().ok()).unwrap_or(0.0);
    let mut values: Vec<Vec<f64>> = vec![Vec::new(); rows.len()];
    let mut ends_ms = vec![0.0_f64; rows.len()];
    for row in &folder.timeline.rows {
        let key = &row[..swept];
        if let Some(point) = rows.iter().position(|p| p.cells == key) {
            values[point].push(number(row.get(swept + 1 + column)));
            ends_ms[point] = ends_ms[point].max(number(row.get(swept)) + bucket_ms);
        }
    }
    let max = values.iter().flatten().copied().fold(0.0, f64::max);
    let span = values.iter().map(Vec::len).max().unwrap_or(0);
    let end_ms = ends_ms.iter().copied().fold(0.0, f64::max);
    let uneven = ends_ms.iter().any(|&end| end != end_ms);
    let ends: Vec<String> = ends_ms.iter().map(|&end| format!("ends {} ms", compact(end))).collect();
    let ends_width = ends.iter().map(|e| width_of(e)).max().unwrap_or(0);
    let notes: Vec<String> = values
        .iter()
        .zip(&ends)
        .map(|(values, ends)| {
            let peak = values.iter().skip(usize::from(reading.herd)).copied().fold(0.0, f64::max);
            let ends = if uneven { format!("{}  ", pad(ends, ends_width)) } else { String::new() };
            format!("{ends}peak {}", compact(peak))
        })
        .collect();
    let note_width = notes.iter().map(|n| width_of(n)).max().unwrap_or(0);
    let label_width =
        rows.iter().map(|r| width_of(&r.label)).chain(keys.map(width_of)).max().unwrap_or(0).min(width * 2 / 5);
    let mut spark_width = width.saturating_sub(label_width + 2 + note_width + 2);
    let show_notes = spark_width >= 10;
    if !show_notes {
        spark_width = width.saturating_sub(label_width + 2);
    }
    let cells = span.min(spark_width);
    let heading = format!("{series} per {} bucket, mean over replicates", manifest.timeline_bucket);
    lines.push(view.paint("1", &fit(&heading, width)));
    let mut about = vec![format!("one time axis and one scale: █ = {}", compact(max))];
    if span > cells {
        about.push(format!("a cell = {} ms, its highest bucket", compact(span as f64 * bucket_ms / cells as f64)));
    }
    if uneven {
        about.push("blank after a point's end".to_owned());
    }
    if reading.herd && show_notes {
        about.push("peak: after the release at 0 ms".to_owned());
    }
    let about = about.join("; ");
    lines.extend(wrap(&about, width, 0));
    let end_label = format!("{} ms", compact(end_ms));
    // The bars take the axis's cells (or its two labels, if wider), so the notes follow them closely.
    let bars_width = cells.max(2 + width_of(&end_label)).min(spark_width);
    let axis = format!("0{}{end_label}", " ".repeat(bars_width.saturating_sub(1 + width_of(&end_label)).max(1)));
    lines.push(fit(&format!("{}  {axis}", pad(keys.unwrap_or(""), label_width)), width));
    for ((row, values), note) in rows.iter().zip(&values).zip(&notes) {
        let bars = sparkline(values, span, spark_width, max);
        let bars_padded = format!("{bars}{}", " ".repeat(bars_width.saturating_sub(width_of(&bars))));
        let mut line = format!("{}  {}", pad(&row.label, label_width), view.paint("36", &bars_padded));
        if show_notes {
            line.push_str(&format!("  {}", view.paint("2", note)));
        }
        lines.push(line.trim_end().to_owned());
    }
}

/// The width of a timeline bucket in ms, from its text in the manifest ("10ms", "1s"); 0 if unreadable.
fn bucket_ms(text: &str) -> f64 {
    crate::scenario::parse_duration(text).map_or(0.0, |d| d.as_millis_f64())
}

fn summary_section(
    folder: &ResultsFolder,
    rows: &[PointRow],
    reading: &Reading,
    view: &View,
    width: usize,
    lines: &mut Vec<String>,
) {
    let table = &folder.summary;
    let metrics = &reading.metrics;
    let mut columns: Vec<(String, Vec<String>)> = folder
        .manifest
        .swept
        .iter()
        .enumerate()
        .map(|(i, key)| (key.clone(), rows.iter().map(|row| row.cells[i].clone()).collect()))
        .collect();
    for metric in metrics {
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
        match hidden {
            0 => String::new(),
            1 => " · 1 more metric in summary.csv".to_owned(),
            _ => format!(" · {hidden} more metrics in summary.csv"),
        }
    );
    lines.extend(wrap(&heading, width, 2).iter().map(|line| view.paint("1", line)));
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
        assert_eq!(sparkline(&[0.0, 1.0, 4.0, 8.0], 4, 10, 8.0), " ▁▄█");
        assert_eq!(sparkline(&[0.0, 8.0, 0.0, 0.0, 2.0, 0.0], 6, 3, 8.0), "█ ▂");
        assert_eq!(sparkline(&[5.0, 5.0], 2, 2, 0.0), "  ");
    }

    #[test]
    fn a_shorter_row_keeps_the_shared_time_axis_and_is_blank_after_its_end() {
        // 4 buckets on an axis of 12 squeezed into 6 cells: two cells of values, then nothing.
        assert_eq!(sparkline(&[1.0, 0.5, 4.0, 8.0], 12, 6, 8.0), "▁█    ");
        // Unsqueezed: one cell per bucket, up to the axis's end.
        assert_eq!(sparkline(&[8.0, 4.0], 5, 10, 8.0), "█▄   ");
    }

    #[test]
    fn wrapping_keeps_every_word_and_indents_the_continuation() {
        let text = "full-jitter b=10ms c=1s m=2, 3 attempts, Retry-After ignore, limiter budget 0.2, retry_on 4xx";
        let lines = wrap(text, 30, 4);
        assert!(lines.iter().all(|line| width_of(line) <= 30), "{lines:?}");
        assert!(lines[1..].iter().all(|line| line.starts_with("    ") && !line.starts_with("     ")), "{lines:?}");
        let words: Vec<&str> = lines.iter().flat_map(|line| line.split_whitespace()).collect();
        assert_eq!(words, text.split_whitespace().collect::<Vec<_>>());
        assert_eq!(wrap("abcdefghij", 6, 2), ["abcdef", "  ghij"]);
    }

    #[test]
    fn text_is_cut_with_an_ellipsis_and_padded() {
        assert_eq!(fit("clients=100", 6), "clien…");
        assert_eq!(fit("short", 6), "short");
        assert_eq!(pad("ab", 4), "ab  ");
    }
}
