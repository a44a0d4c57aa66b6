//! Charts (plotters, SVG and PNG): every chosen metric against the sweep's x axis with one line per series and a
//! 95% CI band, and a calls-per-bucket timeline at one point per series. PNGs are drawn with the DejaVu Sans
//! font shipped in `assets/fonts`, so no system font library is needed.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::aggregate::Aggregate;
use super::atomic::{commit, temporary_path, write_atomic};
use super::tables::format_number;
use crate::Error;
use crate::model::Value;
use crate::scenario::{PlannedPoint, Scenario, SweepAxis};

const FONT: &str = "sans-serif";
const SIZE: (u32, u32) = (1100, 680);
/// Tableau 10: distinguishable, and readable by most colour-blind viewers.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

static FONT_REGISTRATION: Once = Once::new();

/// Registers the shipped font with plotters (once per process).
fn register_font() {
    FONT_REGISTRATION.call_once(|| {
        let bytes: &'static [u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
        for style in [FontStyle::Normal, FontStyle::Bold] {
            // The font is compiled in and known to parse; a failure would only lose text, not the chart.
            let _ = plotters::style::register_font(FONT, style, bytes);
        }
    });
}

/// One line of a chart: points `(x, y, ci95)`.
struct Line {
    label: String,
    points: Vec<(f64, f64, f64)>,
}

struct LineChart {
    title: String,
    subtitle: String,
    x_label: String,
    y_label: String,
    lines: Vec<Line>,
    band: bool,
    legend: SeriesLabelPosition,
}

/// Draws every chart of a results folder and returns the files written.
pub fn draw_all(
    scenario: &Scenario,
    points: &[PlannedPoint],
    aggregate: &Aggregate,
    out: &Path,
) -> Result<Vec<PathBuf>, Error> {
    register_font();
    let mut written = Vec::new();
    let x_axis = x_axis(scenario);
    if let Some(x_index) = x_axis {
        let metrics: Vec<&str> = if scenario.charts.metrics.is_empty() {
            scenario.model.default_chart_metrics().to_vec()
        } else {
            scenario.charts.metrics.clone()
        };
        for metric in metrics {
            let chart = metric_chart(scenario, points, aggregate, x_index, metric);
            written.extend(render(&chart, &out.join(metric))?);
        }
    }
    if let Some(chart) = timeline_chart(scenario, points, aggregate, x_axis) {
        written.extend(render(&chart, &out.join("timeline"))?);
    }
    Ok(written)
}

/// The swept axis on the x axis: the one `[charts] x` names, else the first numeric one.
fn x_axis(scenario: &Scenario) -> Option<usize> {
    let numeric = |axis: &SweepAxis| axis.values.iter().all(|v| v.as_axis_number().is_some());
    match scenario.charts.x.and_then(|key| scenario.sweep.iter().position(|axis| axis.spec.key == key)) {
        Some(index) if numeric(&scenario.sweep[index]) => Some(index),
        _ => scenario.sweep.iter().position(numeric),
    }
}

/// The label of a point's line: its swept values other than the x axis.
fn line_label(scenario: &Scenario, point: &PlannedPoint, skip: Option<usize>) -> String {
    let others: Vec<(usize, &SweepAxis)> =
        scenario.sweep.iter().enumerate().filter(|(i, _)| Some(*i) != skip).collect();
    match others.as_slice() {
        [] => scenario.name.clone(),
        [(i, _)] => point.swept[*i].to_string(),
        _ => others
            .iter()
            .map(|(i, axis)| format!("{}={}", axis.spec.key, point.swept[*i]))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn metric_chart(
    scenario: &Scenario,
    points: &[PlannedPoint],
    aggregate: &Aggregate,
    x_index: usize,
    metric: &str,
) -> LineChart {
    let metric_index = scenario.model.metric_index(metric).unwrap_or(0);
    let spec = &scenario.model.metrics()[metric_index];
    let mut lines: Vec<Line> = Vec::new();
    for (point, estimates) in points.iter().zip(&aggregate.summary) {
        let label = line_label(scenario, point, Some(x_index));
        let x = point.swept[x_index].as_axis_number().unwrap_or(0.0);
        let estimate = estimates[metric_index];
        let entry = (x, estimate.mean, estimate.ci95);
        match lines.iter_mut().find(|line| line.label == label) {
            Some(line) => line.points.push(entry),
            None => lines.push(Line { label, points: vec![entry] }),
        }
    }
    for line in &mut lines {
        line.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let x_spec = scenario.sweep[x_index].spec;
    let x_unit = if matches!(scenario.sweep[x_index].values[0], Value::Duration(_)) { " (ms)" } else { "" };
    LineChart {
        title: format!("{}: {} by {}", scenario.name, spec.name, x_spec.key),
        subtitle: format!("{} · mean of {} replicates, shaded band = 95% CI", spec.help, scenario.replicates),
        x_label: format!("{}{x_unit}", x_spec.key),
        y_label: spec.name.to_owned(),
        lines,
        band: true,
        legend: SeriesLabelPosition::UpperLeft,
    }
}

/// The point(s) whose timelines are drawn: one line per value of the series axis (the first non-numeric axis
/// unless `[charts] series` says otherwise), the other axes at `[charts] timeline_at` or their middle value.
fn timeline_chart(
    scenario: &Scenario,
    points: &[PlannedPoint],
    aggregate: &Aggregate,
    x_axis: Option<usize>,
) -> Option<LineChart> {
    let series_index = scenario
        .charts
        .series
        .and_then(|key| scenario.sweep.iter().position(|axis| axis.spec.key == key))
        .or_else(|| scenario.sweep.iter().position(|axis| axis.values.iter().any(|v| v.as_axis_number().is_none())))
        .or_else(|| (0..scenario.sweep.len()).find(|&i| Some(i) != x_axis));
    let fixed: Vec<Option<Value>> = scenario
        .sweep
        .iter()
        .enumerate()
        .map(|(i, axis)| {
            (Some(i) != series_index).then(|| {
                scenario
                    .charts
                    .timeline_at
                    .iter()
                    .find(|(key, _)| *key == axis.spec.key)
                    .map_or(axis.values[axis.values.len() / 2], |(_, v)| *v)
            })
        })
        .collect();
    let series_name = scenario.model.timeline_series().first().copied()?;
    let bucket = scenario.timeline_bucket;
    let bucket_ms = bucket.as_millis_f64();
    let until_ms = scenario.charts.timeline_until.map(|d| d.as_millis_f64());
    let stride = scenario.model.timeline_series().len();
    let mut lines = Vec::new();
    for (point, timeline) in points.iter().zip(&aggregate.timelines) {
        let selected = fixed.iter().zip(&point.swept).all(|(wanted, value)| wanted.is_none_or(|w| w == *value));
        if !selected {
            continue;
        }
        let points: Vec<(f64, f64, f64)> = timeline
            .iter()
            .step_by(stride)
            .enumerate()
            .map(|(bucket, &value)| (bucket as f64 * bucket_ms, value, 0.0))
            .take_while(|(t, _, _)| until_ms.is_none_or(|until| *t < until))
            .collect();
        lines.push(Line {
            label: series_index.map_or_else(|| scenario.name.clone(), |i| point.swept[i].to_string()),
            points,
        });
    }
    let at: Vec<String> = scenario
        .sweep
        .iter()
        .zip(&fixed)
        .filter_map(|(axis, value)| value.map(|v| format!("{}={v}", axis.spec.key)))
        .collect();
    let at_text = if at.is_empty() { String::new() } else { format!(" at {}", at.join(", ")) };
    Some(LineChart {
        title: format!("{}: {series_name} per {bucket} bucket{at_text}", scenario.name),
        subtitle: format!(
            "mean over {} replicates; sharp peaks are clients retrying in lock-step",
            scenario.replicates
        ),
        x_label: "time (ms)".into(),
        y_label: format!("{series_name} per bucket"),
        lines,
        band: false,
        legend: SeriesLabelPosition::UpperRight,
    })
}

/// Writes `stem.svg` and `stem.png`.
fn render(chart: &LineChart, stem: &Path) -> Result<Vec<PathBuf>, Error> {
    let svg_path = stem.with_extension("svg");
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        draw(chart, &root).map_err(|message| Error::Chart { path: svg_path.clone(), message })?;
    }
    write_atomic(&svg_path, svg.as_bytes())?;

    let png_path = stem.with_extension("png");
    let temporary = temporary_path(&png_path);
    {
        let root = BitMapBackend::new(&temporary, SIZE).into_drawing_area();
        draw(chart, &root).map_err(|message| {
            let _ = std::fs::remove_file(&temporary);
            Error::Chart { path: png_path.clone(), message }
        })?;
    }
    commit(&temporary, &png_path)?;
    Ok(vec![svg_path, png_path])
}

fn draw<DB: DrawingBackend>(chart: &LineChart, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(fail)?;
    let root = root.titled(&chart.title, (FONT, 26).into_font().style(FontStyle::Bold)).map_err(fail)?;
    let (x_min, x_max, y_max) = bounds(chart);
    let mut plot = ChartBuilder::on(&root)
        .caption(&chart.subtitle, (FONT, 16).into_font().color(&RGBColor(90, 90, 90)))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(x_min..x_max, 0.0..y_max)
        .map_err(fail)?;
    plot.configure_mesh()
        .x_desc(&chart.x_label)
        .y_desc(&chart.y_label)
        .axis_desc_style((FONT, 18))
        .label_style((FONT, 15))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .x_label_formatter(&|x| format_number(*x))
        .y_label_formatter(&|y| format_number(*y))
        .draw()
        .map_err(fail)?;
    for (i, line) in chart.lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        if chart.band && line.points.len() > 1 {
            let upper = line.points.iter().map(|&(x, y, ci)| (x, y + ci));
            let lower = line.points.iter().rev().map(|&(x, y, ci)| (x, (y - ci).max(0.0)));
            plot.draw_series(std::iter::once(Polygon::new(
                upper.chain(lower).collect::<Vec<_>>(),
                color.mix(0.18).filled(),
            )))
            .map_err(fail)?;
        }
        plot.draw_series(LineSeries::new(line.points.iter().map(|&(x, y, _)| (x, y)), color.stroke_width(2)))
            .map_err(fail)?
            .label(line.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(3)));
        if chart.band && line.points.len() <= 40 {
            plot.draw_series(line.points.iter().map(|&(x, y, _)| Circle::new((x, y), 3, color.filled())))
                .map_err(fail)?;
        }
    }
    plot.configure_series_labels()
        .position(chart.legend.clone())
        .label_font((FONT, 16))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .draw()
        .map_err(fail)?;
    root.present().map_err(fail)
}

/// Axis ranges covering every line and band, with a little headroom; never empty.
fn bounds(chart: &LineChart) -> (f64, f64, f64) {
    let all = chart.lines.iter().flat_map(|line| line.points.iter());
    let (mut x_min, mut x_max, mut y_max) = (f64::INFINITY, f64::NEG_INFINITY, 0.0_f64);
    for &(x, y, ci) in all {
        x_min = x_min.min(x);
        x_max = x_max.max(x);
        y_max = y_max.max(y + if chart.band { ci } else { 0.0 });
    }
    if !x_min.is_finite() {
        (x_min, x_max) = (0.0, 1.0);
    }
    if x_max <= x_min {
        x_max = x_min + 1.0;
    }
    let y_max = if y_max > 0.0 && y_max.is_finite() { y_max * 1.08 } else { 1.0 };
    (x_min, x_max, y_max)
}
