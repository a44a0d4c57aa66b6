//! Charts (plotters, SVG and PNG):
//!
//! - each chosen metric against the sweep's numeric x axis, one line per series with its 95% CI band, in small
//!   multiples when there are more lines than colours (`metric.rs`, `lines.rs`), or, when nothing numeric is
//!   swept, as bars with CI whiskers;
//! - the timeline and goodput as small multiples: one panel per point on one scale, so waves compare at a
//!   glance, and the latency CDF (`over_time.rs`, `panels.rs`);
//! - the heatmaps and grouped bars `[charts]` asks for (`heatmap.rs`, `grouped_bars.rs`).
//!
//! Titles and axis titles come from the metrics' help and units (`text.rs`); a subtitle says what is plotted,
//! over how many replicates, and what was left out. A series' colour is its name's, the same in every chart
//! (`colours.rs`, from `assets/colours.json`). `[charts] title`, `y_scale` and `size` ([`Look`]) make a chart
//! to present: one title for all, a log y axis, a 1920 × 1080 slide.
//!
//! plotters draws each chart once, as SVG; its PNG is that SVG rasterised by resvg (`rasterise.rs`), so the PNG
//! shows exactly the SVG's text. plotters' own bitmap text (ab_glyph) dropped and overlapped glyphs. Both use the
//! DejaVu Sans faces shipped in `assets/fonts` and compiled in: plotters measures text with them to lay the chart
//! out, resvg draws the text with them. No system font is loaded, so no font library is needed and a chart's PNG
//! is the same bytes on every machine.

/// Builds `$builder`'s plot over the x range `$x` and the [`YAxis`] `$y`, binds it to `$plot` and runs `$body`:
/// the body is compiled once per kind of y axis, as plotters types a linear and a logarithmic axis apart.
macro_rules! with_y_axis {
    ($builder:expr, $x:expr, $y:expr, |$plot:ident| $body:block) => {
        match $y {
            $crate::report::charts::YAxis::Linear { top } => {
                #[allow(unused_mut)]
                let mut $plot = $builder.build_cartesian_2d($x, 0.0..top).map_err(|e| e.to_string())?;
                $body
            }
            $crate::report::charts::YAxis::Log { bottom, top } => {
                #[allow(unused_mut)]
                let mut $plot =
                    $builder.build_cartesian_2d($x, (bottom..top).log_scale()).map_err(|e| e.to_string())?;
                $body
            }
        }
    };
}
pub(super) mod colours;
pub(super) mod lines;
mod metric;
mod over_time;
mod panels;
mod pins;
pub(super) mod text;

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::aggregate::Aggregate;
use super::atomic::write_atomic;
use super::grouped_bars::GroupedBars;
use super::heatmap::Heatmap;
use super::rasterise::svg_to_png;
use crate::Error;
use crate::model::Unit;
use crate::scenario::{ChartSize, PlannedPoint, Scenario, YScale};
use crate::stats::{Estimate, Support};

pub(super) use lines::LinesChart;
pub(super) use pins::Pins;

pub(super) const FONT: &str = "sans-serif";
const WIDTH: u32 = 1100;
const HEIGHT: u32 = 680;
/// The colours a chart tells series apart by (Tableau 10, `assets/colours.json`): a panel never draws more
/// lines than this.
pub(super) const COLOURS: usize = 10;
pub(super) const GREY: RGBColor = RGBColor(90, 90, 90);
pub(super) const GRID: RGBColor = RGBColor(225, 225, 225);
/// The fill of shaded spans (fault windows, triggers).
const SHADE: RGBColor = RGBColor(255, 200, 120);

/// The bundled faces: regular for most text, bold for titles and panel labels.
pub(super) const DEJAVU_SANS: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
pub(super) const DEJAVU_SANS_BOLD: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans-Bold.ttf");

static FONT_REGISTRATION: Once = Once::new();

/// Registers the shipped faces with plotters, which measures text with them (once per process).
pub(super) fn register_font() {
    FONT_REGISTRATION.call_once(|| {
        for (style, bytes) in [(FontStyle::Normal, DEJAVU_SANS), (FontStyle::Bold, DEJAVU_SANS_BOLD)] {
            // The font is compiled in and known to parse; a failure would only misplace text, not lose the chart.
            let _ = plotters::style::register_font(FONT, style, bytes);
        }
    });
}

pub(super) type DrawResult = Result<(), String>;

/// A mean and the ends of its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Spread {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
}

impl Spread {
    /// The mean ± `half` (the CI95 half-width; 0 or NaN draws no interval), the ends kept inside `domain`.
    pub(super) fn symmetric(mean: f64, half: f64, domain: (f64, f64)) -> Spread {
        let half = if half.is_finite() { half } else { 0.0 };
        Spread { mean, low: (mean - half).max(domain.0), high: (mean + half).min(domain.1) }
    }

    /// The same values divided by `divisor` (a metric in ms drawn in seconds).
    pub(super) fn scaled(self, divisor: f64) -> Spread {
        Spread { mean: self.mean / divisor, low: self.low / divisor, high: self.high / divisor }
    }

    /// An estimate's mean and its 95% interval as summary.csv gives it (kept inside the metric's range, Wilson's
    /// for a share of runs); no interval where its ends are undefined.
    pub(super) fn of(estimate: &Estimate) -> Spread {
        let (low, high) = (estimate.lo95, estimate.hi95);
        match low.is_finite() && high.is_finite() {
            true => Spread { mean: estimate.mean, low, high },
            false => Spread { mean: estimate.mean, low: estimate.mean, high: estimate.mean },
        }
    }

    /// Whether it has an interval to draw.
    pub(super) fn has_interval(&self) -> bool {
        self.high > self.low
    }
}

/// How a chart is drawn, beyond what it shows: `[charts] y_scale` and `size`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Look {
    /// A logarithmic y axis (metric charts, bars, the timeline and goodput).
    pub log_y: bool,
    /// 1920 × 1080 pixels, everything drawn twice as large as on a [`SLIDE_CANVAS`] chart.
    pub slide: bool,
}

impl Look {
    pub(super) fn of(scenario: &Scenario) -> Look {
        Look { log_y: scenario.charts.y_scale == YScale::Log, slide: scenario.charts.size == ChartSize::Slide }
    }
}

/// A slide chart is laid out on this canvas and drawn at [`SLIDE_SCALE`] times its size: 1920 × 1080 pixels,
/// with the smallest text (13 px as plotters sizes fonts, 10.5 px of glyph) 21 px tall.
pub(super) const SLIDE_CANVAS: (u32, u32) = (960, 540);
pub(super) const SLIDE_SCALE: u32 = 2;

/// A chart's y axis: linear from 0, or logarithmic over the positive values (a value of 0 or less is drawn at
/// the axis's floor).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum YAxis {
    Linear { top: f64 },
    Log { bottom: f64, top: f64 },
}

impl YAxis {
    /// Linear up to `top` (1 when nothing is positive), or, with `log`, logarithmic over the positive `values`
    /// widened to whole powers of ten where they span less than two ([`panels::log_range`]).
    pub(super) fn new(log: bool, top: f64, values: impl Iterator<Item = f64>) -> YAxis {
        if !log {
            return YAxis::Linear { top: if top > 0.0 && top.is_finite() { top } else { 1.0 } };
        }
        let positive = values.filter(|v| *v > 0.0 && v.is_finite());
        let (low, high) = positive.fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let (bottom, top) = if high > 0.0 { panels::log_range(low, high) } else { (0.1, 10.0) };
        YAxis::Log { bottom, top }
    }

    /// The lowest value drawn: 0, or the log axis's floor.
    pub(super) fn floor(self) -> f64 {
        match self {
            YAxis::Linear { .. } => 0.0,
            YAxis::Log { bottom, .. } => bottom,
        }
    }

    /// `y` where it can be drawn: on a log axis, no lower than the floor.
    pub(super) fn clamp(self, y: f64) -> f64 {
        if y.is_finite() { y.max(self.floor()) } else { y }
    }

    /// How many tick labels to ask plotters for: `linear` on a linear axis; one per power of ten on a log one
    /// (more would add unlabelled-looking intermediate numbers).
    pub(super) fn labels(self, linear: usize) -> usize {
        match self {
            YAxis::Linear { .. } => linear,
            YAxis::Log { bottom, top } => (top / bottom).log10().ceil() as usize + 1,
        }
    }
}

/// The range a metric of `unit` lies in, where an interval drawn from a half-width is cut.
pub(super) fn unit_range(unit: Unit) -> (f64, f64) {
    match unit.support() {
        Support::Real => (f64::NEG_INFINITY, f64::INFINITY),
        Support::Within { min, max } => (min, max),
        Support::Binary => (0.0, 1.0),
    }
}

/// What every chart shows around its plot.
pub(super) struct Frame {
    pub title: String,
    pub subtitle: String,
    pub x_label: String,
    pub y_label: String,
}

/// One bar of a bar chart: its label under it and its value.
pub(super) struct Bar {
    pub label: String,
    pub value: Spread,
}

enum Chart {
    /// Lines against a numeric x axis with CI bands, in one panel or several.
    Lines(LinesChart),
    /// One bar per point, with CI whiskers.
    Bars { frame: Frame, bars: Vec<Bar> },
    /// Panels stacked on a shared time axis (timeline, goodput), in one column per series (`columns`: their
    /// headings, empty for one).
    Panels { frame: Frame, panels: Vec<panels::Panel>, columns: Vec<String> },
    /// Cumulative distributions on a logarithmic x axis, with p50 and p99 marked on each line.
    Cdf(panels::Cdf),
    /// One metric over two swept parameters, one coloured cell per pair.
    Heatmap(Heatmap),
    /// Groups of bars, one bar per series value in each group.
    GroupedBars(GroupedBars),
}

/// The metrics that say whether retries come in waves, ahead of the model's defaults when every client starts
/// together (a burst, the OCC study): the peak bucket of such a run is its release, the same for every policy.
const SYNCHRONY_METRICS: [&str; 2] = ["retry_peak_to_mean", "retry_dispersion"];

/// The metrics charted against the sweep: `[charts] metrics`, else the model's defaults, led by the synchrony
/// metrics where every client starts together.
fn chosen_metrics(scenario: &Scenario, points: &[PlannedPoint], focus: &pins::Focus) -> Vec<&'static str> {
    if !scenario.charts.metrics.is_empty() {
        return scenario.charts.metrics.clone();
    }
    let defaults = scenario.model.default_chart_metrics();
    let mut metrics: Vec<&'static str> = Vec::new();
    if over_time::released_together(scenario, points, focus) {
        metrics.extend(SYNCHRONY_METRICS.into_iter().filter(|m| scenario.model.metric_index(m).is_some()));
    }
    for metric in defaults {
        if !metrics.contains(metric) {
            metrics.push(metric);
        }
    }
    metrics
}

/// The metrics the charts lead with, in order (report.html's table leads with them too).
pub(super) fn charted_metrics(scenario: &Scenario, points: &[PlannedPoint]) -> Vec<&'static str> {
    let focus = pins::Focus::choose(scenario, points, metric::x_axis(scenario));
    chosen_metrics(scenario, points, &focus)
}

/// Draws every chart of a results folder and returns the files written, in the order report.html shows them:
/// the timeline first where every client starts together (its waves are the story), else the metric charts
/// first. A metric undefined at every point (its column left out of summary.csv) gets no chart.
pub(super) fn draw_all(
    scenario: &Scenario,
    points: &[PlannedPoint],
    aggregate: &Aggregate,
    out: &Path,
) -> Result<Vec<PathBuf>, Error> {
    register_font();
    let look = Look::of(scenario);
    let x_axis = metric::x_axis(scenario);
    let focus = pins::Focus::choose(scenario, points, x_axis);
    let mut charts: Vec<(Chart, String)> = Vec::new();
    for metric in chosen_metrics(scenario, points, &focus) {
        if let Some(chart) = metric::metric_chart(scenario, points, aggregate, x_axis, metric) {
            charts.push((chart, metric.to_owned()));
        }
    }
    if let Some(chart) = over_time::timeline_chart(scenario, points, aggregate, &focus, look) {
        let first = over_time::released_together(scenario, points, &focus);
        charts.insert(if first { 0 } else { charts.len() }, (chart, "timeline".to_owned()));
    }
    if let Some(chart) = over_time::flow_chart(scenario, aggregate, &focus) {
        charts.push((chart, "goodput".to_owned()));
    }
    if let Some(chart) = over_time::latency_cdf_chart(scenario, aggregate, &focus) {
        charts.push((chart, "latency_cdf".to_owned()));
    }
    for options in &scenario.charts.heatmaps {
        if let Some(heatmap) = Heatmap::build(scenario, points, aggregate, options) {
            charts.push((Chart::Heatmap(heatmap), options.name.clone()));
        }
    }
    for options in &scenario.charts.bars {
        if let Some(bars) = GroupedBars::build(scenario, points, aggregate, options) {
            charts.push((Chart::GroupedBars(bars), options.name.clone()));
        }
    }
    let mut written = Vec::new();
    for (mut chart, stem) in charts {
        if let Some(title) = &scenario.charts.title {
            retitle(&mut chart, title);
        }
        written.extend(render(&chart, &out.join(stem), look)?);
    }
    Ok(written)
}

/// Gives `chart` the title `[charts] title` asks for; the title it had leads its subtitle, so nothing it said
/// is lost.
fn retitle(chart: &mut Chart, title: &str) {
    let (old_title, subtitle) = match chart {
        Chart::Lines(lines) => (&mut lines.frame.title, &mut lines.frame.subtitle),
        Chart::Bars { frame, .. } | Chart::Panels { frame, .. } => (&mut frame.title, &mut frame.subtitle),
        Chart::Cdf(cdf) => (&mut cdf.frame.title, &mut cdf.frame.subtitle),
        Chart::Heatmap(heatmap) => (&mut heatmap.title, &mut heatmap.subtitle),
        Chart::GroupedBars(bars) => (&mut bars.title, &mut bars.subtitle),
    };
    let was = std::mem::replace(old_title, title.to_owned());
    *subtitle = if subtitle.is_empty() { was } else { format!("{was} · {subtitle}") };
}

/// Draws `chart` (built outside a results folder: `retrylab compare`) as `stem.svg` and `stem.png`.
pub(super) fn draw_lines_chart(chart: LinesChart, stem: &Path) -> Result<Vec<PathBuf>, Error> {
    register_font();
    render(&Chart::Lines(chart), stem, Look::default())
}

/// Draws grouped bars built outside a results folder (`retrylab compare`) as `stem.svg` and `stem.png`.
pub(super) fn draw_grouped_bars(bars: GroupedBars, stem: &Path) -> Result<Vec<PathBuf>, Error> {
    register_font();
    render(&Chart::GroupedBars(bars), stem, Look::default())
}

/// Writes `stem.svg` and `stem.png`: at the chart's own size, or, for a slide, laid out on [`SLIDE_CANVAS`] and
/// drawn [`SLIDE_SCALE`] times as large (the SVG says so with its `width`, `height` and `viewBox`).
fn render(chart: &Chart, stem: &Path, look: Look) -> Result<Vec<PathBuf>, Error> {
    let size = match chart {
        _ if look.slide => SLIDE_CANVAS,
        Chart::Lines(lines) => lines.size(),
        Chart::Bars { bars, .. } => ((160 + 110 * bars.len() as u32).max(WIDTH), HEIGHT),
        Chart::Panels { panels, columns, .. } => {
            let rows = panels.len().div_ceil(columns.len().max(1)) as u32;
            (WIDTH, (140 + 190 * rows).max(HEIGHT))
        }
        Chart::Cdf(cdf) => cdf.size(),
        Chart::Heatmap(heatmap) => heatmap.size(),
        Chart::GroupedBars(bars) => bars.size(),
    };
    let svg_path = stem.with_extension("svg");
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw(chart, &root, look).map_err(|message| Error::Chart { path: svg_path.clone(), message })?;
    }
    let pixels = if look.slide { scale_svg(&mut svg, size, SLIDE_SCALE) } else { size };
    let png_path = stem.with_extension("png");
    let png = svg_to_png(&svg, pixels).map_err(|message| Error::Chart { path: png_path.clone(), message })?;
    write_atomic(&svg_path, svg.as_bytes())?;
    write_atomic(&png_path, &png)?;
    Ok(vec![svg_path, png_path])
}

/// Makes the SVG of a `width` × `height` canvas `scale` times as large: its root's `width` and `height` grow,
/// its `viewBox` stays, so every length and font inside is drawn `scale` times larger. Returns the new size.
fn scale_svg(svg: &mut String, (width, height): (u32, u32), scale: u32) -> (u32, u32) {
    let (to_width, to_height) = (width * scale, height * scale);
    let from = format!("<svg width=\"{width}\" height=\"{height}\"");
    if let Some(start) = svg.find(&from) {
        svg.replace_range(start..start + from.len(), &format!("<svg width=\"{to_width}\" height=\"{to_height}\""));
    }
    (to_width, to_height)
}

fn draw<DB: DrawingBackend>(chart: &Chart, root: &DrawingArea<DB, Shift>, look: Look) -> DrawResult {
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(fail)?;
    match chart {
        Chart::Lines(lines) => lines.draw(root, look),
        Chart::Bars { frame, bars } => panels::draw_bars(frame, bars, root, look),
        Chart::Panels { frame, panels, columns } => panels::draw_panels(frame, panels, columns, root, look),
        Chart::Cdf(cdf) => cdf.draw(root),
        Chart::Heatmap(heatmap) => heatmap.draw(root),
        Chart::GroupedBars(bars) => bars.draw(root),
    }?;
    root.present().map_err(fail)
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

/// A legend drawn outside the plot: a title (the series parameter, or empty) and one entry per series, in the
/// colour [`colours::assign`] gives it among the entries (as the chart's lines and bars are coloured).
pub(super) struct Legend<'a> {
    pub title: &'a str,
    pub entries: Vec<&'a str>,
    /// The names the entries' colours come from, when they are not the entries themselves (empty then).
    pub keys: Vec<&'a str>,
    /// Lines (a stroke) or bars (a square).
    pub bars: bool,
}

const LEGEND_FONT: f64 = 16.0;

impl Legend<'_> {
    /// Pixels the legend needs across: the widest entry or title, its swatch and margins; 0 without entries.
    pub(super) fn width(&self) -> u32 {
        if self.entries.is_empty() {
            return 0;
        }
        let wide = |text: &str, style| {
            (FONT, LEGEND_FONT, style).into_font().box_size(text).map_or(8 * text.len() as u32, |(w, _)| w)
        };
        let entries = self.entries.iter().map(|e| wide(e, FontStyle::Normal) + 44).max().unwrap_or(0);
        entries.max(wide(self.title, FontStyle::Bold)) + 36
    }

    /// Draws the legend from the top left of `area`, starting `top` pixels down.
    pub(super) fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, top: i32) -> DrawResult {
        use plotters::style::text_anchor::{HPos, Pos, VPos};
        let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let mut y = top;
        let left = 16;
        if !self.title.is_empty() {
            let font = (FONT, LEGEND_FONT, FontStyle::Bold).into_font();
            let style = font.color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
            area.draw(&Text::new(self.title, (left, y), style)).map_err(fail)?;
            y += 26;
        }
        let keys = if self.keys.len() == self.entries.len() { &self.keys } else { &self.entries };
        for (entry, colour) in self.entries.iter().zip(colours::assign(keys)) {
            if self.bars {
                area.draw(&Rectangle::new([(left, y - 7), (left + 16, y + 7)], colour.filled())).map_err(fail)?;
            } else {
                area.draw(&PathElement::new(vec![(left, y), (left + 26, y)], colour.stroke_width(3))).map_err(fail)?;
            }
            let style = (FONT, LEGEND_FONT).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
            area.draw(&Text::new(*entry, (left + 34, y), style)).map_err(fail)?;
            y += 24;
        }
        Ok(())
    }
}
