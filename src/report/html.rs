//! report.html: the whole results folder as one self-contained page that any browser opens offline.
//!
//! It holds the scenario's title and description, every chart as inline SVG (the `.svg` files just written, read
//! back so the page shows exactly what the folder holds) with a line on what it shows, the summary table (mean ±
//! 95% CI half-width per metric, swept parameters first; capped at [`MAX_ROWS`] rows, summary.csv has them all),
//! the run's manifest and the scenario text. No scripts, fonts, stylesheets or images are loaded from anywhere:
//! a little inline CSS, and every piece of text HTML-escaped.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::aggregate::Aggregate;
use super::charts::charted_metrics;
use super::charts::colours::{assign, hex};
use super::manifest::Manifest;
use crate::Error;
use crate::scenario::{PlannedPoint, Scenario};
use crate::stats::Estimate;

/// At most this many sweep points are shown in the table; the note under it points at summary.csv.
pub(super) const MAX_ROWS: usize = 500;

const STYLE: &str = "
body { font-family: system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif; color: #222;
  max-width: 1180px; margin: 0 auto; padding: 1rem 1.5rem 3rem; line-height: 1.45; }
h1 { margin-bottom: 0.2rem; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; margin-top: 2.2rem; }
h3 { margin: 0 0 0.2rem; font-size: 1.05rem; }
.meta, .note, figcaption p { color: #555; }
nav a { margin-right: 1rem; }
figure { margin: 1.5rem 0; }
figure svg { display: block; max-width: 100%; height: auto; border: 1px solid #e4e4e4; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.9rem; }
th, td { padding: 0.25rem 0.6rem; border-bottom: 1px solid #e6e6e6; text-align: right; white-space: nowrap; }
th { background: #f4f4f4; position: sticky; top: 0; }
th.param, td.param { text-align: left; }
tbody tr:nth-child(even) { background: #fafafa; }
td { font-variant-numeric: tabular-nums; }
table.kv th, table.kv td { text-align: left; white-space: normal; }
table.kv th { background: none; position: static; }
section.warnings { background: #fff4e5; border-left: 4px solid #d97706; padding: 0.2rem 1rem 0.6rem; }
dl.metrics dt { font-family: monospace; font-weight: bold; }
dl.metrics dd { margin: 0 0 0.4rem 1.5rem; color: #444; }
.swatch { display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.35em; border-radius: 2px; }
pre { background: #f6f6f6; border: 1px solid #e4e4e4; padding: 0.8rem; overflow-x: auto; font-size: 0.85rem; }
";

/// The page for a results folder whose charts (`chart_files`: every file the charts wrote, in order) are already
/// on disk; `target` is where the page goes, named in errors.
pub(super) fn report(
    scenario: &Scenario,
    points: &[PlannedPoint],
    aggregate: &Aggregate,
    manifest: &Manifest,
    chart_files: &[PathBuf],
    target: &Path,
) -> Result<Vec<u8>, Error> {
    let mut page = String::new();
    let title = escape(&scenario.name);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title} · retrylab report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
    );
    let has_settings = points.iter().any(|point| point.policy.is_some() || point.settings.is_some());
    header(&mut page, scenario, points.len(), has_settings);
    if let Some(emulation) = &manifest.emulation {
        let _ = writeln!(
            page,
            "<p class=\"note\">Emulated: measured on real sockets by <code>retrylab emulate</code> against {} at time \
             scale {}, in scenario time. Timers woke {:.3} ms late on average ({:.3} ms at the 99th percentile).</p>",
            escape(&emulation.server),
            emulation.time_scale,
            emulation.timer_lag_mean_ms,
            emulation.timer_lag_p99_ms
        );
    }
    super::html_settings::warnings(&mut page, manifest);
    charts(&mut page, scenario, chart_files, target)?;
    summary_table(&mut page, scenario, points, aggregate);
    super::html_settings::settings(&mut page, scenario, points);
    run_details(&mut page, manifest);
    let _ = write!(
        page,
        "<h2 id=\"scenario\">Scenario</h2>\n<p class=\"note\">{} (sha256 <code>{}</code>)</p>\n<pre>{}</pre>\n",
        escape(&manifest.scenario.path),
        escape(&manifest.scenario.sha256),
        escape(&scenario.source)
    );
    let _ = writeln!(
        page,
        "<p class=\"note\">Written by retrylab {}. The same folder holds summary.csv, runs.csv, timeline.csv, \
         manifest.json and every chart as .svg and .png.</p>\n</body>\n</html>",
        escape(manifest.retrylab_version)
    );
    Ok(page.into_bytes())
}

/// Title, description, one line of facts, and the table of contents.
fn header(page: &mut String, scenario: &Scenario, point_count: usize, has_settings: bool) {
    let _ = writeln!(page, "<h1>{}</h1>", escape(&scenario.name));
    if !scenario.description.trim().is_empty() {
        let _ = writeln!(page, "<p>{}</p>", escape(scenario.description.trim()));
    }
    let swept = if scenario.sweep.is_empty() {
        String::from("nothing swept")
    } else {
        let keys: Vec<&str> = scenario.sweep.iter().map(|axis| axis.name).collect();
        format!("swept: {}", keys.join(", "))
    };
    let _ = writeln!(
        page,
        "<p class=\"meta\">model <b>{}</b> ({}) · {point_count} points × {} replicates · {}</p>",
        escape(scenario.model.name()),
        escape(scenario.model.about()),
        scenario.replicates,
        escape(&swept)
    );
    let settings = if has_settings { "<a href=\"#settings\">Settings</a>" } else { "" };
    let _ = writeln!(
        page,
        "<nav><a href=\"#charts\">Charts</a><a href=\"#summary\">Summary</a>{settings}<a href=\"#run\">Run</a>\
         <a href=\"#scenario\">Scenario</a></nav>",
    );
}

/// Every chart's SVG inline, under a heading and a line on what it shows.
fn charts(page: &mut String, scenario: &Scenario, chart_files: &[PathBuf], target: &Path) -> Result<(), Error> {
    let _ = writeln!(
        page,
        "<h2 id=\"charts\">Charts</h2>\n<p class=\"note\">Each chart is also in this folder as .svg and .png. \
         Values are means over the {} replicates of each sweep point; bands and whiskers are 95% confidence \
         intervals.</p>",
        scenario.replicates
    );
    for path in chart_files.iter().filter(|path| path.extension().is_some_and(|ext| ext == "svg")) {
        // A chart written a moment ago that cannot be read back leaves the report unwritable.
        let svg = std::fs::read_to_string(path).map_err(|source| Error::Write { path: target.to_owned(), source })?;
        let stem = path.file_stem().map_or_else(String::new, |stem| stem.to_string_lossy().into_owned());
        // Only the <svg> element itself belongs in HTML: drop any XML declaration before it.
        let svg = svg.find("<svg").map_or(svg.as_str(), |start| &svg[start..]);
        let _ = writeln!(
            page,
            "<figure id=\"chart-{id}\">\n<figcaption><h3>{id}</h3><p>{caption}</p></figcaption>\n{}\n</figure>",
            svg.trim_end(),
            id = escape(&stem),
            caption = escape(&chart_caption(scenario, &stem)),
        );
    }
    Ok(())
}

/// What the chart with file stem `stem` shows, in a sentence.
fn chart_caption(scenario: &Scenario, stem: &str) -> String {
    let model = scenario.model;
    let help = |metric: &str| model.metric_index(metric).map_or("", |i| model.metrics()[i].help);
    if let Some(heatmap) = scenario.charts.heatmaps.iter().find(|options| options.name == stem) {
        return format!(
            "{} ({}) for every pair of {} and {}: each cell's colour is the mean over the replicates.",
            heatmap.metric,
            help(heatmap.metric),
            heatmap.x,
            heatmap.y
        );
    }
    if let Some(bars) = scenario.charts.bars.iter().find(|options| options.name == stem) {
        let per = bars.series.map_or_else(String::new, |series| format!(", one bar per value of {series}"));
        return format!("{} side by side{per}, with 95% confidence intervals.", bars.metrics.join(", "));
    }
    match stem {
        "timeline" => {
            let mut series = scenario.charts.timeline_series.clone();
            if series.is_empty() {
                series = model.timeline_series().first().copied().into_iter().collect();
            }
            let scale = if series.len() > 1 {
                "one column per timeline series, its panels on one scale"
            } else {
                "all on the same scale"
            };
            format!(
                "{} per {} bucket over simulated time, averaged over replicates: one panel per series value, {scale} \
                 (timeline.csv has every point).",
                series.join(", "),
                scenario.timeline_bucket
            )
        }
        "goodput" => "Successes (coloured) against new requests (grey) per bucket over time; shaded spans mark the \
                      trigger and fault windows."
            .into(),
        "latency_cdf" => "The share of successful requests done within a given time from their first send (log \
                          scale), all replicates together; dots mark the median, triangles the 99th percentile."
            .into(),
        metric if model.metric_index(metric).is_some() => format!(
            "{metric}: {}. One line per series against the swept number (bars per point when nothing numeric is \
             swept), with its 95% confidence interval; past 10 lines, one panel per value of another swept \
             parameter.",
            help(metric)
        ),
        _ => String::new(),
    }
}

/// The summary table: swept parameters (a named value with its colour in the charts), then `mean ± ci95` per
/// metric, the charted metrics first in the charts' order; a glossary of the metrics under it.
fn summary_table(page: &mut String, scenario: &Scenario, points: &[PlannedPoint], aggregate: &Aggregate) {
    let metrics = scenario.model.metrics();
    let charted = charted_metrics(scenario, points);
    let first: Vec<usize> = charted.iter().filter_map(|name| scenario.model.metric_index(name)).collect();
    let order: Vec<usize> = first.iter().copied().chain((0..metrics.len()).filter(|i| !first.contains(i))).collect();
    let _ = writeln!(
        page,
        "<h2 id=\"summary\">Summary</h2>\n<p class=\"note\">One row per sweep point: mean ± half-width of the 95% \
         confidence interval over {} replicates (the interval is left out with one replicate; – where no \
         replicate defined the metric), the charted metrics first. summary.csv has the same numbers unrounded, and \
         the standard deviations.</p>",
        scenario.replicates
    );
    page.push_str("<div class=\"scroll\">\n<table>\n<thead><tr>");
    for axis in &scenario.sweep {
        let _ = write!(page, "<th class=\"param\" title=\"{}\">{}</th>", escape(axis.spec.help), escape(axis.name));
    }
    for &metric in &order {
        let metric = &metrics[metric];
        let _ = write!(page, "<th title=\"{}\">{}</th>", escape(metric.help), escape(metric.name));
    }
    page.push_str("</tr></thead>\n<tbody>\n");
    // A named value's colour among its axis's values, as a chart with one series per value gives it.
    let swatches: Vec<Vec<String>> = scenario
        .sweep
        .iter()
        .map(|axis| match axis.values.iter().all(|v| v.as_axis_number().is_some()) {
            true => Vec::new(),
            false => {
                let names: Vec<String> = axis.values.iter().map(ToString::to_string).collect();
                assign(&names).into_iter().map(hex).collect()
            }
        })
        .collect();
    for (point, estimates) in points.iter().zip(&aggregate.summary).take(MAX_ROWS) {
        page.push_str("<tr>");
        for (axis, value) in point.swept.iter().enumerate() {
            let swatch = scenario.sweep[axis]
                .values
                .iter()
                .position(|v| v == value)
                .and_then(|index| swatches[axis].get(index))
                .map_or_else(String::new, |colour| {
                    format!("<span class=\"swatch\" style=\"background: {colour}\"></span>")
                });
            let _ = write!(page, "<td class=\"param\">{swatch}{}</td>", escape(&value.to_string()));
        }
        for &metric in &order {
            let _ = write!(page, "<td>{}</td>", escape(&mean_with_ci(&estimates[metric], scenario.replicates)));
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</tbody>\n</table>\n</div>\n");
    if points.len() > MAX_ROWS {
        let _ = writeln!(
            page,
            "<p class=\"note\"><b>Showing the first {MAX_ROWS} of {} sweep points</b>: summary.csv in this folder \
             has every one.</p>",
            points.len()
        );
    }
    page.push_str("<details><summary>What the columns mean</summary>\n<dl class=\"metrics\">\n");
    for axis in &scenario.sweep {
        let _ = writeln!(page, "<dt>{}</dt><dd>swept: {}</dd>", escape(axis.name), escape(axis.spec.help));
    }
    for &metric in &order {
        let metric = &metrics[metric];
        let _ = writeln!(page, "<dt>{}</dt><dd>{}</dd>", escape(metric.name), escape(metric.help));
    }
    page.push_str("</dl>\n</details>\n");
}

/// The manifest as a two-column table.
fn run_details(page: &mut String, manifest: &Manifest) {
    let rows: [(&str, String); 12] = [
        ("retrylab version", manifest.retrylab_version.to_owned()),
        ("scenario", format!("{} ({})", manifest.scenario.name, manifest.scenario.path)),
        ("model", manifest.model.to_owned()),
        ("master seed", manifest.master_seed.to_string()),
        ("replicates", manifest.replicates.to_string()),
        ("threads", manifest.threads.to_string()),
        ("points", manifest.points.to_string()),
        ("timeline bucket", manifest.timeline_bucket.clone()),
        ("events", manifest.events.to_string()),
        (
            "runs stopped at max_events_per_run",
            format!("{} (cap {})", manifest.truncated_runs, manifest.max_events_per_run),
        ),
        ("elapsed", format!("{:.2} s", manifest.elapsed_s)),
        ("command line", manifest.command_line.join(" ")),
    ];
    page.push_str("<h2 id=\"run\">Run</h2>\n<table class=\"kv\">\n");
    for (key, value) in rows {
        let _ = writeln!(page, "<tr><th>{}</th><td>{}</td></tr>", escape(key), escape(&value));
    }
    page.push_str("</table>\n<p class=\"note\">manifest.json holds the same, with every point's id.</p>\n");
}

/// `mean ± ci95`, the interval to two significant digits and the mean to the same decimal place, or
/// `mean [lo95, hi95]` when the interval is kept inside the metric's range and so is not symmetric; the mean alone
/// (four significant digits) when there is no interval; "–" when the mean is undefined.
fn mean_with_ci(estimate: &Estimate, replicates: u32) -> String {
    let Estimate { mean, ci95, lo95, hi95, .. } = *estimate;
    if !mean.is_finite() {
        return "–".into();
    }
    if replicates < 2 || !ci95.is_finite() {
        return significant(mean, 4);
    }
    let symmetric =
        (mean - ci95 - lo95).abs() <= 1e-9 * ci95.max(1.0) && (mean + ci95 - hi95).abs() <= 1e-9 * ci95.max(1.0);
    if ci95 == 0.0 && symmetric {
        return format!("{} ± 0", significant(mean, 4));
    }
    let width = if symmetric { ci95 } else { (hi95 - lo95) / 2.0 };
    let decimals = if width > 0.0 { (1 - width.log10().floor() as i32).clamp(0, 12) as usize } else { 4 };
    if symmetric {
        format!("{mean:.decimals$} ± {ci95:.decimals$}")
    } else {
        format!("{mean:.decimals$} [{lo95:.decimals$}, {hi95:.decimals$}]")
    }
}

/// `x` to `digits` significant digits, whole numbers as they are.
fn significant(x: f64, digits: i32) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        return format!("{x:.0}");
    }
    let decimals = (digits - 1 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{x:.decimals$}")
}

/// `text` with the five HTML-special characters replaced by entities: safe in element content and in quoted
/// attribute values.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::plan;

    #[test]
    fn big_sweeps_show_the_first_rows_and_point_at_summary_csv() {
        let values: Vec<String> = (1..=MAX_ROWS + 20).map(|n| n.to_string()).collect();
        let text = format!(
            "schema_version = 1\nname = \"big\"\nreplicates = 10\n[model]\nkind = \"occ\"\n[sweep]\nclients = [{}]\n",
            values.join(", ")
        );
        let scenario = Scenario::from_source(Path::new("big.toml"), text).unwrap();
        let points = plan(&scenario).unwrap();
        let estimate = Estimate::symmetric(3.0, 0.0, 0.5);
        let summary = vec![vec![estimate; scenario.model.metrics().len()]; points.len()];
        let aggregate = Aggregate { summary, ..Aggregate::default() };
        let mut page = String::new();
        summary_table(&mut page, &scenario, &points, &aggregate);
        assert_eq!(page.matches("<tr>").count(), 1 + MAX_ROWS, "the header and the first rows");
        assert!(page.contains(&format!("<td class=\"param\">{MAX_ROWS}</td>")));
        assert!(!page.contains(&format!("<td class=\"param\">{}</td>", MAX_ROWS + 1)));
        assert!(page.contains(&format!("Showing the first {MAX_ROWS} of {} sweep points", MAX_ROWS + 20)));
        assert!(page.contains("<td>3.00 ± 0.50</td>"));
    }

    #[test]
    fn escapes_every_special_character() {
        assert_eq!(
            escape(r#"<a href="x">Tom & 'Jerry'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;"
        );
        assert_eq!(escape("plain ± text"), "plain ± text");
    }

    #[test]
    fn means_carry_their_interval_to_two_significant_digits() {
        let estimate = |mean, ci95| Estimate::symmetric(mean, 0.0, ci95);
        assert_eq!(mean_with_ci(&estimate(1234.5678, 12.345), 10), "1235 ± 12");
        assert_eq!(mean_with_ci(&estimate(0.98765, 0.0123), 10), "0.988 ± 0.012");
        assert_eq!(mean_with_ci(&estimate(42.0, 0.0), 10), "42 ± 0");
        assert_eq!(mean_with_ci(&estimate(0.123456, 0.0), 1), "0.1235");
        assert_eq!(mean_with_ci(&estimate(f64::NAN, f64::NAN), 10), "–");
        // An interval kept inside the metric's range is shown by its ends: 9 of 10 runs recovered.
        let recovered = crate::stats::Estimate::within(
            &[1.0; 9].into_iter().chain([0.0]).collect::<Vec<_>>(),
            crate::stats::Support::Binary,
        );
        assert_eq!(mean_with_ci(&recovered, 10), "0.90 [0.60, 0.98]");
    }
}
