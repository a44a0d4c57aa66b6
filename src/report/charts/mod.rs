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
//! over how many replicates, and what was left out.
//!
//! plotters draws each chart once, as SVG; its PNG is that SVG rasterised by resvg (`rasterise.rs`), so the PNG
//! shows exactly the SVG's text. plotters' own bitmap text (ab_glyph) dropped and overlapped glyphs. Both use the
//! DejaVu Sans faces shipped in `assets/fonts` and compiled in: plotters measures text with them to lay the chart
//! out, resvg draws the text with them. No system font is loaded, so no font library is needed and a chart's PNG
//! is the same bytes on every machine.

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
use crate::scenario::{PlannedPoint, Scenario};
use crate::stats::{Estimate, Support};

pub(super) use lines::LinesChart;
pub(super) use pins::Pins;

pub(super) const FONT: &str = "sans-serif";
const WIDTH: u32 = 1100;
const HEIGHT: u32 = 680;
/// Tableau 10: distinguishable, and readable by most colour-blind viewers. A panel never draws more lines than
/// this has colours.
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
    /// Panels stacked on shared axes (timeline, goodput).
    Panels { frame: Frame, panels: Vec<panels::Panel> },
    /// Cumulative distributions on a logarithmic x axis, with p50 and p99 marked on each line.
    Cdf(panels::Cdf),
    /// One metric over two swept parameters, one coloured cell per pair.
    Heatmap(Heatmap),
    /// Groups of bars, one bar per series value in each group.
    GroupedBars(GroupedBars),
}

/// Draws every chart of a results folder and returns the files written. A metric undefined at every point (its
/// column left out of summary.csv) gets no chart.
pub(super) fn draw_all(
    scenario: &Scenario,
    points: &[PlannedPoint],
    aggregate: &Aggregate,
    out: &Path,
) -> Result<Vec<PathBuf>, Error> {
    register_font();
    let mut written = Vec::new();
    let x_axis = metric::x_axis(scenario);
    let metrics: Vec<&str> = if scenario.charts.metrics.is_empty() {
        scenario.model.default_chart_metrics().to_vec()
    } else {
        scenario.charts.metrics.clone()
    };
    for metric in metrics {
        if let Some(chart) = metric::metric_chart(scenario, points, aggregate, x_axis, metric) {
            written.extend(render(&chart, &out.join(metric))?);
        }
    }
    let focus = pins::Focus::choose(scenario, points, x_axis);
    if let Some(chart) = over_time::timeline_chart(scenario, points, aggregate, &focus) {
        written.extend(render(&chart, &out.join("timeline"))?);
    }
    if let Some(chart) = over_time::flow_chart(scenario, aggregate, &focus) {
        written.extend(render(&chart, &out.join("goodput"))?);
    }
    if let Some(chart) = over_time::latency_cdf_chart(scenario, aggregate, &focus) {
        written.extend(render(&chart, &out.join("latency_cdf"))?);
    }
    for options in &scenario.charts.heatmaps {
        if let Some(heatmap) = Heatmap::build(scenario, points, aggregate, options) {
            written.extend(render(&Chart::Heatmap(heatmap), &out.join(&options.name))?);
        }
    }
    for options in &scenario.charts.bars {
        if let Some(bars) = GroupedBars::build(scenario, points, aggregate, options) {
            written.extend(render(&Chart::GroupedBars(bars), &out.join(&options.name))?);
        }
    }
    Ok(written)
}

/// Draws `chart` (built outside a results folder: `retrylab compare`) as `stem.svg` and `stem.png`.
pub(super) fn draw_lines_chart(chart: LinesChart, stem: &Path) -> Result<Vec<PathBuf>, Error> {
    register_font();
    render(&Chart::Lines(chart), stem)
}

/// Draws grouped bars built outside a results folder (`retrylab compare`) as `stem.svg` and `stem.png`.
pub(super) fn draw_grouped_bars(bars: GroupedBars, stem: &Path) -> Result<Vec<PathBuf>, Error> {
    register_font();
    render(&Chart::GroupedBars(bars), stem)
}

/// Writes `stem.svg` and `stem.png`.
fn render(chart: &Chart, stem: &Path) -> Result<Vec<PathBuf>, Error> {
    let size = match chart {
        Chart::Lines(lines) => lines.size(),
        Chart::Bars { bars, .. } => ((160 + 110 * bars.len() as u32).max(WIDTH), HEIGHT),
        Chart::Panels { panels, .. } => (WIDTH, (140 + 190 * panels.len() as u32).max(HEIGHT)),
        Chart::Cdf(cdf) => cdf.size(),
        Chart::Heatmap(heatmap) => heatmap.size(),
        Chart::GroupedBars(bars) => bars.size(),
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

fn draw<DB: DrawingBackend>(chart: &Chart, root: &DrawingArea<DB, Shift>) -> DrawResult {
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(fail)?;
    match chart {
        Chart::Lines(lines) => lines.draw(root),
        Chart::Bars { frame, bars } => panels::draw_bars(frame, bars, root),
        Chart::Panels { frame, panels } => panels::draw_panels(frame, panels, root),
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

/// A legend drawn outside the plot: a title (the series parameter, or empty) and one coloured entry per series.
pub(super) struct Legend<'a> {
    pub title: &'a str,
    pub entries: Vec<&'a str>,
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
        for (i, entry) in self.entries.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
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
