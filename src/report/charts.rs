//! Charts (plotters, SVG and PNG):
//!
//! - each chosen metric against the sweep's numeric x axis, one line per series with its 95% CI band, or, when
//!   nothing numeric is swept, as bars per point with CI whiskers;
//! - the timeline as small multiples: one panel per series on the same y scale, so waves compare at a glance;
//! - the heatmaps and grouped bars `[charts]` asks for (`heatmap.rs`, `grouped_bars.rs`).
//!
//! plotters draws each chart once, as SVG; its PNG is that SVG rasterised by resvg (`rasterise.rs`), so the PNG
//! shows exactly the SVG's text. plotters' own bitmap text (ab_glyph) dropped and overlapped glyphs. Both use the
//! DejaVu Sans faces shipped in `assets/fonts` and compiled in: plotters measures text with them to lay the chart
//! out, resvg draws the text with them. No system font is loaded, so no font library is needed and a chart's PNG
//! is the same bytes on every machine.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::aggregate::Aggregate;
use super::atomic::write_atomic;
use super::grouped_bars::GroupedBars;
use super::heatmap::Heatmap;
use super::rasterise::svg_to_png;
use super::tables::format_number;
use crate::Error;
use crate::model::MetricSpec;
use crate::params::Value;
use crate::scenario::{PlannedPoint, Scenario, SweepAxis};

pub(super) const FONT: &str = "sans-serif";
const WIDTH: u32 = 1100;
const HEIGHT: u32 = 680;
/// Tableau 10: distinguishable, and readable by most colour-blind viewers.
pub(super) const PALETTE: [RGBColor; 10] = [
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
pub(super) const GREY: RGBColor = RGBColor(90, 90, 90);
pub(super) const GRID: RGBColor = RGBColor(225, 225, 225);

/// The bundled faces: regular for most text, bold for titles and panel labels.
pub(super) const DEJAVU_SANS: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
pub(super) const DEJAVU_SANS_BOLD: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans-Bold.ttf");

static FONT_REGISTRATION: Once = Once::new();

/// Registers the shipped faces with plotters, which measures text with them (once per process).
fn register_font() {
    FONT_REGISTRATION.call_once(|| {
        for (style, bytes) in [(FontStyle::Normal, DEJAVU_SANS), (FontStyle::Bold, DEJAVU_SANS_BOLD)] {
            // The font is compiled in and known to parse; a failure would only misplace text, not lose the chart.
            let _ = plotters::style::register_font(FONT, style, bytes);
        }
    });
}

/// One line (or bar, or panel) of a chart: points `(x, y, ci95)`, and the model's analytic curve if it has one.
struct Line {
    label: String,
    points: Vec<(f64, f64, f64)>,
    theory: Vec<(f64, f64)>,
}

/// What every chart shows around its plot.
struct Frame {
    title: String,
    subtitle: String,
    x_label: String,
    y_label: String,
}

/// One panel of a small-multiples chart: its lines (the first in the panel's colour, the others grey) and the
/// spans of x to shade.
struct Panel {
    label: String,
    lines: Vec<Vec<(f64, f64)>>,
    shaded: Vec<(f64, f64)>,
}

enum Chart {
    /// Lines against a numeric x axis, with CI bands.
    Lines { frame: Frame, lines: Vec<Line> },
    /// One bar per line (its single point), with CI whiskers.
    Bars { frame: Frame, bars: Vec<Line> },
    /// Panels stacked on shared axes.
    Panels { frame: Frame, panels: Vec<Panel> },
    /// Cumulative distributions on a logarithmic x axis, with p50 and p99 marked on each line.
    Cdf { frame: Frame, lines: Vec<Line> },
    /// One metric over two swept parameters, one coloured cell per pair.
    Heatmap(Heatmap),
    /// Several metrics side by side, one bar per series value.
    GroupedBars(GroupedBars),
}

/// Draws every chart of a results folder and returns the files written.
pub(super) fn draw_all(
    scenario: &Scenario,
    points: &[PlannedPoint],
    aggregate: &Aggregate,
    out: &Path,
) -> Result<Vec<PathBuf>, Error> {
    register_font();
    let mut written = Vec::new();
    let x_axis = x_axis(scenario);
    let metrics: Vec<&str> = if scenario.charts.metrics.is_empty() {
        scenario.model.default_chart_metrics().to_vec()
    } else {
        scenario.charts.metrics.clone()
    };
    for metric in metrics {
        let chart = metric_chart(scenario, points, aggregate, x_axis, metric);
        written.extend(render(&chart, &out.join(metric))?);
    }
    let focus = Focus::choose(scenario, points, x_axis);
    if let Some(chart) = timeline_chart(scenario, aggregate, &focus) {
        written.extend(render(&chart, &out.join("timeline"))?);
    }
    if let Some(chart) = flow_chart(scenario, aggregate, &focus) {
        written.extend(render(&chart, &out.join("goodput"))?);
    }
    if let Some(chart) = latency_cdf_chart(scenario, aggregate, &focus) {
        written.extend(render(&chart, &out.join("latency_cdf"))?);
    }
    for options in &scenario.charts.heatmaps {
        if let Some(heatmap) = Heatmap::build(scenario, points, aggregate, options) {
            written.extend(render(&Chart::Heatmap(heatmap), &out.join(&options.name))?);
        }
    }
    for options in &scenario.charts.bars {
        let bars = GroupedBars::build(scenario, points, aggregate, options);
        written.extend(render(&Chart::GroupedBars(bars), &out.join(&options.name))?);
    }
    Ok(written)
}

/// The points the over-time charts show: one per value of the series axis (the first non-numeric axis unless
/// `[charts] series` says otherwise), the other axes at `[charts] timeline_at` or their middle value.
struct Focus {
    /// `(point index, label)` in sweep order.
    points: Vec<(usize, String)>,
    /// " at clients=100", or empty.
    at_text: String,
}

impl Focus {
    fn choose(scenario: &Scenario, points: &[PlannedPoint], x_axis: Option<usize>) -> Focus {
        let series_index = scenario
            .charts
            .series
            .and_then(|key| scenario.sweep.iter().position(|axis| axis.name == key))
            .or_else(|| scenario.sweep.iter().position(|axis| axis.values.iter().any(|v| v.as_axis_number().is_none())))
            .or_else(|| (0..scenario.sweep.len()).find(|&i| Some(i) != x_axis));
        let pins = Pins::new(scenario, &scenario.charts.timeline_at, |i| Some(i) != series_index, true);
        let chosen = points
            .iter()
            .enumerate()
            .filter(|(_, point)| pins.admit(point))
            .map(|(index, point)| {
                (index, series_index.map_or_else(|| scenario.name.clone(), |i| point.swept[i].to_string()))
            })
            .collect();
        Focus { points: chosen, at_text: pins.at_text(scenario) }
    }
}

/// Which swept parameters a chart pins to one value, and which it leaves free.
pub(super) struct Pins {
    /// Per swept axis: the value it is pinned to, if any.
    values: Vec<Option<Value>>,
    /// Per swept axis: could be pinned but is not (a heatmap's panels).
    free: Vec<bool>,
}

impl Pins {
    /// Every axis `pinnable(i)` accepts is pinned to its value in `at`, or, if `at` does not name it (or `--set`
    /// has since removed that value), to its middle value when `middle` is true and left free otherwise. The
    /// other axes (a chart's x, y or series) are neither.
    pub(super) fn new(
        scenario: &Scenario,
        at: &[(&'static str, Value)],
        pinnable: impl Fn(usize) -> bool,
        middle: bool,
    ) -> Pins {
        let values: Vec<Option<Value>> = scenario
            .sweep
            .iter()
            .enumerate()
            .map(|(i, axis)| {
                let wanted = at.iter().find(|(key, value)| *key == axis.name && axis.values.contains(value));
                match wanted {
                    _ if !pinnable(i) => None,
                    Some((_, value)) => Some(value.clone()),
                    None => middle.then(|| axis.values[axis.values.len() / 2].clone()),
                }
            })
            .collect();
        let free = values.iter().enumerate().map(|(i, value)| pinnable(i) && value.is_none()).collect();
        Pins { values, free }
    }

    /// Whether `point` has every pinned value.
    pub(super) fn admit(&self, point: &PlannedPoint) -> bool {
        self.values.iter().zip(&point.swept).all(|(wanted, value)| wanted.as_ref().is_none_or(|w| w == value))
    }

    /// " at clients=100, strategy=none" over the pinned axes, or empty.
    pub(super) fn at_text(&self, scenario: &Scenario) -> String {
        let at: Vec<String> = scenario
            .sweep
            .iter()
            .zip(&self.values)
            .filter_map(|(axis, value)| value.as_ref().map(|v| format!("{}={v}", axis.name)))
            .collect();
        if at.is_empty() { String::new() } else { format!(" at {}", at.join(", ")) }
    }

    /// "limiter=none, workers=4" over the free axes of `point`, or empty.
    pub(super) fn free_label(&self, scenario: &Scenario, point: &PlannedPoint) -> String {
        let parts: Vec<String> = scenario
            .sweep
            .iter()
            .enumerate()
            .filter(|(i, _)| self.free[*i])
            .map(|(i, axis)| format!("{}={}", axis.name, point.swept[i]))
            .collect();
        parts.join(", ")
    }
}

/// One timeline series of a point as `(bucket start in ms, value)`, cropped at `[charts] timeline_until`.
fn series_points(scenario: &Scenario, aggregate: &Aggregate, point: usize, series: usize) -> Vec<(f64, f64)> {
    let stride = scenario.model.timeline_series().len();
    let bucket_ms = scenario.timeline_bucket.as_millis_f64();
    let until_ms = scenario.charts.timeline_until.map(|d| d.as_millis_f64());
    aggregate.timelines[point]
        .iter()
        .skip(series)
        .step_by(stride)
        .enumerate()
        .map(|(bucket, &value)| (bucket as f64 * bucket_ms, value))
        .take_while(|(t, _)| until_ms.is_none_or(|until| *t < until))
        .collect()
}

fn highlights_ms(aggregate: &Aggregate, point: usize) -> Vec<(f64, f64)> {
    aggregate.highlights[point].clone()
}

/// The swept axis on the x axis: the one `[charts] x` names, else the first numeric one.
fn x_axis(scenario: &Scenario) -> Option<usize> {
    let numeric = |axis: &SweepAxis| axis.values.iter().all(|v| v.as_axis_number().is_some());
    match scenario.charts.x.and_then(|key| scenario.sweep.iter().position(|axis| axis.name == key)) {
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
        _ => others.iter().map(|(i, axis)| format!("{}={}", axis.name, point.swept[*i])).collect::<Vec<_>>().join(", "),
    }
}

fn metric_chart(
    scenario: &Scenario,
    points: &[PlannedPoint],
    aggregate: &Aggregate,
    x_axis: Option<usize>,
    metric: &str,
) -> Chart {
    let metric_index = scenario.model.metric_index(metric).unwrap_or(0);
    let spec: &MetricSpec = &scenario.model.metrics()[metric_index];
    let mut lines: Vec<Line> = Vec::new();
    for (point, estimates) in points.iter().zip(&aggregate.summary) {
        let label = line_label(scenario, point, x_axis);
        let x = x_axis.and_then(|i| point.swept[i].as_axis_number()).unwrap_or(0.0);
        let estimate = estimates[metric_index];
        let entry = (x, estimate.mean, estimate.ci95);
        match lines.iter_mut().find(|line| line.label == label) {
            Some(line) => line.points.push(entry),
            None => lines.push(Line { label, points: vec![entry], theory: Vec::new() }),
        }
    }
    let mut subtitle = format!("{} · mean of {} replicates, 95% CI shown", spec.help, scenario.replicates);
    match x_axis {
        Some(x_index) => {
            let x_key = scenario.sweep[x_index].name;
            for line in &mut lines {
                line.points.sort_by(|a, b| a.0.total_cmp(&b.0));
                // The analytic curve, drawn densely between the first and last simulated x of the line.
                let config = points.iter().find(|p| line_label(scenario, p, x_axis) == line.label).map(|p| &p.config);
                let (first, last) = (line.points.first().map(|p| p.0), line.points.last().map(|p| p.0));
                if let (Some(config), Some(first), Some(last)) = (config, first, last) {
                    line.theory = (0..=200)
                        .map(|i| first + (last - first) * f64::from(i) / 200.0)
                        .map_while(|x| config.theory(metric, x_key, x).map(|y| (x, y)))
                        .collect();
                }
            }
            if lines.iter().any(|line| !line.theory.is_empty()) {
                subtitle.push_str(" · black: theory");
            }
            let x_unit = if matches!(scenario.sweep[x_index].values[0], Value::Duration(_)) { " (ms)" } else { "" };
            Chart::Lines {
                frame: Frame {
                    title: format!("{}: {} by {x_key}", scenario.name, spec.name),
                    subtitle,
                    x_label: format!("{x_key}{x_unit}"),
                    y_label: spec.name.to_owned(),
                },
                lines,
            }
        }
        None => Chart::Bars {
            frame: Frame {
                title: format!("{}: {}", scenario.name, spec.name),
                subtitle,
                x_label: scenario.sweep.iter().map(|axis| axis.name).collect::<Vec<_>>().join(", "),
                y_label: spec.name.to_owned(),
            },
            bars: lines,
        },
    }
}

/// One timeline series (`[charts] timeline_series`, else the model's first) at the focus points, one panel each.
fn timeline_chart(scenario: &Scenario, aggregate: &Aggregate, focus: &Focus) -> Option<Chart> {
    let all = scenario.model.timeline_series();
    let series_name = scenario.charts.timeline_series.or_else(|| all.first().copied())?;
    let series_index = all.iter().position(|name| *name == series_name)?;
    let panels = focus
        .points
        .iter()
        .map(|(point, label)| Panel {
            label: label.clone(),
            lines: vec![series_points(scenario, aggregate, *point, series_index)],
            shaded: highlights_ms(aggregate, *point),
        })
        .collect();
    Some(Chart::Panels {
        frame: Frame {
            title: format!("{}: {series_name} per {} bucket{}", scenario.name, scenario.timeline_bucket, focus.at_text),
            subtitle: if series_index == 0 {
                format!(
                    "mean over {} replicates, same scale in every panel; sharp peaks are clients retrying in lock-step",
                    scenario.replicates
                )
            } else {
                format!("mean over {} replicates, same scale in every panel", scenario.replicates)
            },
            x_label: "time (ms)".into(),
            y_label: format!("{series_name} per bucket"),
        },
        panels,
    })
}

/// Goodput against offered load over time, with the trigger and fault windows shaded (models whose timeline has
/// both series).
fn flow_chart(scenario: &Scenario, aggregate: &Aggregate, focus: &Focus) -> Option<Chart> {
    let series = scenario.model.timeline_series();
    let goodput = series.iter().position(|name| *name == "goodput")?;
    let offered = series.iter().position(|name| *name == "offered")?;
    let panels = focus
        .points
        .iter()
        .map(|(point, label)| Panel {
            label: label.clone(),
            lines: vec![
                series_points(scenario, aggregate, *point, goodput),
                series_points(scenario, aggregate, *point, offered),
            ],
            shaded: highlights_ms(aggregate, *point),
        })
        .collect();
    Some(Chart::Panels {
        frame: Frame {
            title: format!("{}: goodput and offered load{}", scenario.name, focus.at_text),
            subtitle: format!(
                "per {} bucket, mean over {} replicates · coloured: successes; grey: new requests; shaded: trigger",
                scenario.timeline_bucket, scenario.replicates
            ),
            x_label: "time (ms)".into(),
            y_label: "requests per bucket".into(),
        },
        panels,
    })
}

/// The distribution of time to success at the focus points, all replicates together.
fn latency_cdf_chart(scenario: &Scenario, aggregate: &Aggregate, focus: &Focus) -> Option<Chart> {
    let lines: Vec<Line> = focus
        .points
        .iter()
        .filter_map(|(point, label)| {
            let cdf = aggregate.latency[*point].as_ref().filter(|cdf| !cdf.is_empty())?;
            let points = cdf.iter().map(|&(ms, fraction)| (ms, fraction, 0.0)).collect();
            Some(Line { label: label.clone(), points, theory: Vec::new() })
        })
        .collect();
    if lines.is_empty() {
        return None;
    }
    Some(Chart::Cdf {
        frame: Frame {
            title: format!("{}: time to success{}", scenario.name, focus.at_text),
            subtitle: format!(
                "share of successful requests done within x, all {} replicates; ● p50, ▲ p99",
                scenario.replicates
            ),
            x_label: "time from first send to success (ms, log scale)".into(),
            y_label: "fraction of successes".into(),
        },
        lines,
    })
}

/// One labelled line of a [`LinesChart`]: its label and its points `(x, mean, ci95)`.
pub(super) type LabelledLine = (String, Vec<(f64, f64, f64)>);

/// A chart of lines against a numeric x axis built outside a results folder (`retrylab compare`): one line per
/// label, points `(x, mean, ci95)` drawn with their 95% CI bands.
pub(super) struct LinesChart {
    pub title: String,
    pub subtitle: String,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<LabelledLine>,
}

/// Draws `chart` as `stem.svg` and `stem.png`, each written atomically. Returns the files written.
pub(super) fn draw_lines_chart(chart: LinesChart, stem: &Path) -> Result<Vec<PathBuf>, Error> {
    register_font();
    let frame = Frame { title: chart.title, subtitle: chart.subtitle, x_label: chart.x_label, y_label: chart.y_label };
    let lines = chart.lines.into_iter().map(|(label, points)| Line { label, points, theory: Vec::new() }).collect();
    render(&Chart::Lines { frame, lines }, stem)
}

/// Writes `stem.svg` and `stem.png`.
fn render(chart: &Chart, stem: &Path) -> Result<Vec<PathBuf>, Error> {
    let size = match chart {
        Chart::Panels { panels, .. } if panels.len() > 2 => (WIDTH, 110 + 190 * panels.len() as u32),
        Chart::Heatmap(heatmap) => heatmap.size(),
        Chart::GroupedBars(bars) => bars.size(),
        _ => (WIDTH, HEIGHT),
    };
    let svg_path = stem.with_extension("svg");
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw(chart, &root).map_err(|message| Error::Chart { path: svg_path.clone(), message })?;
    }
    let png_path = stem.with_extension("png");
    let png = svg_to_png(&svg, size).map_err(|message| Error::Chart { path: png_path.clone(), message })?;
    write_atomic(&svg_path, svg.as_bytes())?;
    write_atomic(&png_path, &png)?;
    Ok(vec![svg_path, png_path])
}

pub(super) type DrawResult = Result<(), String>;

fn draw<DB: DrawingBackend>(chart: &Chart, root: &DrawingArea<DB, Shift>) -> DrawResult {
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(fail)?;
    let title = match chart {
        Chart::Lines { frame, .. }
        | Chart::Bars { frame, .. }
        | Chart::Panels { frame, .. }
        | Chart::Cdf { frame, .. } => &frame.title,
        Chart::Heatmap(heatmap) => &heatmap.title,
        Chart::GroupedBars(bars) => &bars.title,
    };
    let titled = root.titled(title, (FONT, 26).into_font().style(FontStyle::Bold)).map_err(fail)?;
    match chart {
        Chart::Lines { frame, lines } => draw_lines(frame, lines, &titled)?,
        Chart::Bars { frame, bars } => draw_bars(frame, bars, &titled)?,
        Chart::Panels { frame, panels } => draw_panels(frame, panels, &titled)?,
        Chart::Cdf { frame, lines } => draw_cdf(frame, lines, &titled)?,
        Chart::Heatmap(heatmap) => heatmap.draw(&titled)?,
        Chart::GroupedBars(bars) => bars.draw(&titled)?,
    }
    root.present().map_err(fail)
}

fn draw_lines<DB: DrawingBackend>(frame: &Frame, lines: &[Line], area: &DrawingArea<DB, Shift>) -> DrawResult {
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (x_min, x_max, y_max) = bounds(lines, true);
    let mut plot = ChartBuilder::on(area)
        .caption(&frame.subtitle, (FONT, 16).into_font().color(&GREY))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(x_min..x_max, 0.0..y_max)
        .map_err(fail)?;
    plot.configure_mesh()
        .x_desc(&frame.x_label)
        .y_desc(&frame.y_label)
        .axis_desc_style((FONT, 18))
        .label_style((FONT, 15))
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .x_label_formatter(&|x| format_number(*x))
        .y_label_formatter(&|y| format_number(*y))
        .draw()
        .map_err(fail)?;
    for (i, line) in lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        if line.points.len() > 1 {
            let upper = line.points.iter().map(|&(x, y, ci)| (x, y + ci));
            let lower = line.points.iter().rev().map(|&(x, y, ci)| (x, (y - ci).max(0.0)));
            let band: Vec<(f64, f64)> = upper.chain(lower).collect();
            plot.draw_series(std::iter::once(Polygon::new(band, color.mix(0.18).filled()))).map_err(fail)?;
        }
        plot.draw_series(LineSeries::new(line.points.iter().map(|&(x, y, _)| (x, y)), color.stroke_width(2)))
            .map_err(fail)?
            .label(line.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(3)));
        if line.points.len() <= 40 {
            plot.draw_series(line.points.iter().map(|&(x, y, _)| Circle::new((x, y), 3, color.filled())))
                .map_err(fail)?;
        }
        if line.theory.len() > 1 {
            plot.draw_series(LineSeries::new(line.theory.iter().copied(), BLACK.stroke_width(1))).map_err(fail)?;
        }
    }
    plot.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FONT, 16))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .draw()
        .map_err(fail)
}

fn draw_bars<DB: DrawingBackend>(frame: &Frame, bars: &[Line], area: &DrawingArea<DB, Shift>) -> DrawResult {
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (_, _, y_max) = bounds(bars, true);
    let count = bars.len().max(1);
    let labels: Vec<&str> = bars.iter().map(|bar| bar.label.as_str()).collect();
    let mut plot = ChartBuilder::on(area)
        .caption(&frame.subtitle, (FONT, 16).into_font().color(&GREY))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.5..(count as f64 - 0.5), 0.0..y_max)
        .map_err(fail)?;
    plot.configure_mesh()
        .x_desc(&frame.x_label)
        .y_desc(&frame.y_label)
        .axis_desc_style((FONT, 18))
        .label_style((FONT, 15))
        .disable_x_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .x_labels(count)
        .x_label_formatter(&|x| {
            let index = x.round();
            if (x - index).abs() < 1e-9 && index >= 0.0 {
                labels.get(index as usize).map_or_else(String::new, |label| (*label).to_owned())
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|y| format_number(*y))
        .draw()
        .map_err(fail)?;
    for (i, bar) in bars.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let x = i as f64;
        let (_, mean, ci) = bar.points.first().copied().unwrap_or((0.0, 0.0, 0.0));
        plot.draw_series(std::iter::once(Rectangle::new([(x - 0.3, 0.0), (x + 0.3, mean)], color.mix(0.8).filled())))
            .map_err(fail)?;
        let whisker = BLACK.stroke_width(2);
        plot.draw_series([
            PathElement::new(vec![(x, (mean - ci).max(0.0)), (x, mean + ci)], whisker),
            PathElement::new(vec![(x - 0.08, mean + ci), (x + 0.08, mean + ci)], whisker),
            PathElement::new(vec![(x - 0.08, (mean - ci).max(0.0)), (x + 0.08, (mean - ci).max(0.0))], whisker),
        ])
        .map_err(fail)?;
        let style = (FONT, 15).into_font().color(&GREY).pos(Pos::new(HPos::Center, VPos::Bottom));
        let text = Text::new(short_number(mean), (x, mean + ci + y_max * 0.01), style);
        plot.draw_series(std::iter::once(text)).map_err(fail)?;
    }
    Ok(())
}

fn draw_panels<DB: DrawingBackend>(frame: &Frame, panels: &[Panel], area: &DrawingArea<DB, Shift>) -> DrawResult {
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let all: Vec<Line> = panels
        .iter()
        .flat_map(|panel| panel.lines.iter())
        .map(|points| Line {
            label: String::new(),
            points: points.iter().map(|&(x, y)| (x, y, 0.0)).collect(),
            theory: Vec::new(),
        })
        .collect();
    let (x_min, x_max, y_max) = bounds(&all, false);
    let area = area.margin(0, 8, 8, 8);
    let (subtitle, body) = area.split_vertically(28);
    subtitle.draw(&Text::new(frame.subtitle.as_str(), (12, 4), (FONT, 16).into_font().color(&GREY))).map_err(fail)?;
    let cells = body.split_evenly((panels.len().max(1), 1));
    for (i, (panel, cell)) in panels.iter().zip(cells.iter()).enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let last = i + 1 == panels.len();
        let mut plot = ChartBuilder::on(cell)
            .margin(6)
            .x_label_area_size(if last { 45 } else { 6 })
            .y_label_area_size(80)
            .build_cartesian_2d(x_min..x_max, 0.0..y_max)
            .map_err(fail)?;
        for &(start, end) in &panel.shaded {
            let span = [(start.max(x_min), 0.0), (end.min(x_max), y_max)];
            plot.draw_series(std::iter::once(Rectangle::new(span, RGBColor(255, 200, 120).mix(0.35).filled())))
                .map_err(fail)?;
        }
        let mut mesh = plot.configure_mesh();
        mesh.y_desc(&frame.y_label)
            .axis_desc_style((FONT, 14))
            .label_style((FONT, 13))
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .y_labels(4)
            .x_label_formatter(&|x| format_number(*x))
            .y_label_formatter(&|y| format_number(*y));
        if last {
            mesh.x_desc(&frame.x_label);
        } else {
            mesh.x_labels(0);
        }
        mesh.draw().map_err(fail)?;
        for (j, points) in panel.lines.iter().enumerate().rev() {
            let line_color = if j == 0 { color } else { RGBColor(150, 150, 150) };
            if j == 0 && panel.lines.len() == 1 {
                plot.draw_series(AreaSeries::new(points.iter().copied(), 0.0, color.mix(0.25))).map_err(fail)?;
            }
            plot.draw_series(LineSeries::new(points.iter().copied(), line_color.stroke_width(2))).map_err(fail)?;
        }
        let (label_x, label_y) = (x_min + (x_max - x_min) * 0.99, y_max * 0.93);
        let style = (FONT, 17).into_font().style(FontStyle::Bold).color(&color).pos(Pos::new(HPos::Right, VPos::Top));
        plot.draw_series(std::iter::once(Text::new(panel.label.clone(), (label_x, label_y), style))).map_err(fail)?;
    }
    Ok(())
}

fn draw_cdf<DB: DrawingBackend>(frame: &Frame, lines: &[Line], area: &DrawingArea<DB, Shift>) -> DrawResult {
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let positive = lines.iter().flat_map(|line| line.points.iter()).map(|p| p.0).filter(|x| *x > 0.0);
    let x_min = positive.clone().fold(f64::INFINITY, f64::min);
    let x_max = positive.fold(0.0, f64::max);
    let (x_min, x_max) = if x_min.is_finite() && x_max > x_min { (x_min * 0.8, x_max * 1.25) } else { (0.1, 10.0) };
    let mut plot = ChartBuilder::on(area)
        .caption(&frame.subtitle, (FONT, 16).into_font().color(&GREY))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d((x_min..x_max).log_scale(), 0.0..1.02)
        .map_err(fail)?;
    plot.configure_mesh()
        .x_desc(&frame.x_label)
        .y_desc(&frame.y_label)
        .axis_desc_style((FONT, 18))
        .label_style((FONT, 15))
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .x_label_formatter(&|x| short_number(*x))
        .y_label_formatter(&|y| format_number(*y))
        .draw()
        .map_err(fail)?;
    for (i, line) in lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let steps: Vec<(f64, f64)> = line.points.iter().map(|&(x, y, _)| (x.max(x_min), y)).collect();
        plot.draw_series(LineSeries::new(steps.iter().copied(), color.stroke_width(2)))
            .map_err(fail)?
            .label(line.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(3)));
        let at = |q: f64| steps.iter().find(|(_, y)| *y >= q).copied();
        if let Some(p50) = at(0.5) {
            plot.draw_series(std::iter::once(Circle::new(p50, 6, color.filled()))).map_err(fail)?;
        }
        if let Some(p99) = at(0.99) {
            plot.draw_series(std::iter::once(TriangleMarker::new(p99, 8, color.filled()))).map_err(fail)?;
        }
    }
    plot.configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font((FONT, 16))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .draw()
        .map_err(fail)
}

/// A bar label: whole numbers from 100 up, else three significant digits.
pub(super) fn short_number(x: f64) -> String {
    if x.abs() >= 100.0 || x == 0.0 {
        format!("{x:.0}")
    } else {
        let decimals = (2 - x.abs().log10().floor() as i32).max(0) as usize;
        format!("{x:.decimals$}")
    }
}

/// Axis ranges covering every line (and its CI when `with_ci`), with a little headroom; never empty.
fn bounds(lines: &[Line], with_ci: bool) -> (f64, f64, f64) {
    let (mut x_min, mut x_max, mut y_max) = (f64::INFINITY, f64::NEG_INFINITY, 0.0_f64);
    for &(x, y, ci) in lines.iter().flat_map(|line| line.points.iter()) {
        x_min = x_min.min(x);
        x_max = x_max.max(x);
        y_max = y_max.max(y + if with_ci && ci.is_finite() { ci } else { 0.0 });
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
