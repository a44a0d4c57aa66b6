//! Drawing the over-time charts (panels stacked on one time axis, the latency CDF on a log axis) and plain bars.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::text::{draw_headings, draw_y_title, log_time_tick, tick_label};
use super::{Bar, DrawResult, FONT, Frame, GREY, GRID, HEIGHT, Legend, PALETTE, SHADE, WIDTH, short_number};

/// One panel of a small-multiples chart: its lines (the first in the panel's colour, the others grey) and the
/// spans of x to shade.
pub(super) struct Panel {
    pub label: String,
    pub lines: Vec<Vec<(f64, f64)>>,
    pub shaded: Vec<(f64, f64)>,
}

/// The x range and the top of the y range of every panel's lines.
fn panel_bounds(panels: &[Panel]) -> (f64, f64, f64) {
    let points = || panels.iter().flat_map(|panel| panel.lines.iter().flatten());
    let (x_min, x_max) = points().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (x, _)| (lo.min(*x), hi.max(*x)));
    let (x_min, x_max) = if x_min.is_finite() && x_max > x_min { (x_min, x_max) } else { (0.0, 1.0) };
    let top = points().map(|(_, y)| *y).filter(|y| y.is_finite()).fold(0.0_f64, f64::max);
    (x_min, x_max, if top > 0.0 { top * 1.08 } else { 1.0 })
}

/// Panels stacked on one x axis and one y scale, each labelled above its plot in its colour; the x axis's
/// numbers only under the last.
pub(super) fn draw_panels<DB: DrawingBackend>(
    frame: &Frame,
    panels: &[Panel],
    root: &DrawingArea<DB, Shift>,
) -> DrawResult {
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (x_min, x_max, y_max) = panel_bounds(panels);
    let body = draw_headings(root, &frame.title, &frame.subtitle)?.margin(0, 8, 8, 0);
    let (y_title, body) = body.split_horizontally(34);
    draw_y_title(&y_title, &frame.y_label, 6, 16.0)?;
    let cells = body.split_evenly((panels.len().max(1), 1));
    for (i, (panel, cell)) in panels.iter().zip(cells.iter()).enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let last = i + 1 == panels.len();
        let mut plot = ChartBuilder::on(cell)
            .margin(4)
            .caption(&panel.label, (FONT, 16, FontStyle::Bold).into_font().color(&colour))
            .x_label_area_size(if last { 48 } else { 4 })
            .y_label_area_size(70)
            .build_cartesian_2d(x_min..x_max, 0.0..y_max)
            .map_err(fail)?;
        for &(start, end) in &panel.shaded {
            let span = [(start.max(x_min), 0.0), (end.min(x_max), y_max)];
            plot.draw_series(std::iter::once(Rectangle::new(span, SHADE.mix(0.35).filled()))).map_err(fail)?;
        }
        let mut mesh = plot.configure_mesh();
        mesh.label_style((FONT, 13))
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .y_labels(4)
            .y_label_formatter(&|y| tick_label(*y));
        // Every panel keeps the vertical grid lines; only the last writes the numbers under them.
        let no_numbers = |_: &f64| String::new();
        let numbers = |x: &f64| tick_label(*x);
        if last {
            mesh.x_desc(&frame.x_label).axis_desc_style((FONT, 16)).x_label_formatter(&numbers);
        } else {
            mesh.x_label_formatter(&no_numbers);
        }
        mesh.draw().map_err(fail)?;
        for (j, points) in panel.lines.iter().enumerate().rev() {
            let line_colour = if j == 0 { colour } else { RGBColor(150, 150, 150) };
            if j == 0 && panel.lines.len() == 1 {
                plot.draw_series(AreaSeries::new(points.iter().copied(), 0.0, colour.mix(0.25))).map_err(fail)?;
            }
            plot.draw_series(LineSeries::new(points.iter().copied(), line_colour.stroke_width(2))).map_err(fail)?;
        }
    }
    Ok(())
}

/// Cumulative distributions of time to success on a log axis in ms, one line per point.
pub(super) struct Cdf {
    pub frame: Frame,
    pub legend_title: String,
    /// `(label, [(upper bucket edge in ms, fraction of successes within it)])`.
    pub lines: Vec<(String, Vec<(f64, f64)>)>,
}

/// The ends of a log axis covering `[low, high]` with a little room, widened to hold at least two powers of
/// ten (the axis's only labels): down to the power of ten below, then up to the next one.
pub(super) fn log_range(low: f64, high: f64) -> (f64, f64) {
    if !(low > 0.0 && high >= low && high.is_finite()) {
        return (0.1, 10.0);
    }
    let powers = |start: f64, end: f64| (end.log10() + 1e-9).floor() - (start.log10() - 1e-9).ceil() + 1.0;
    let (mut start, mut end) = (low * 0.8, high * 1.25);
    if powers(start, end) < 2.0 {
        start = 10_f64.powf((start.log10() + 1e-9).floor());
    }
    if powers(start, end) < 2.0 {
        end = start * 10.0;
    }
    (start, end)
}

/// The staircase of a CDF known at bucket edges: 0 until the first edge, then flat until each next edge and up
/// to its fraction there.
pub(super) fn steps(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    let mut below = 0.0;
    for &(x, y) in points {
        out.push((x, below));
        out.push((x, y));
        below = y;
    }
    out
}

impl Cdf {
    fn legend(&self) -> Legend<'_> {
        let entries = if self.lines.len() > 1 || !self.legend_title.is_empty() {
            self.lines.iter().map(|(label, _)| label.as_str()).collect()
        } else {
            Vec::new()
        };
        Legend { title: &self.legend_title, entries, bars: false }
    }

    pub(super) fn size(&self) -> (u32, u32) {
        (WIDTH + self.legend().width(), HEIGHT)
    }

    pub(super) fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let body = draw_headings(root, &self.frame.title, &self.frame.subtitle)?;
        let (width, _) = body.dim_in_pixel();
        let legend = self.legend();
        let (body, legend_area) = body.split_horizontally(width - legend.width());
        legend.draw(&legend_area, 24)?;
        let positive = self.lines.iter().flat_map(|(_, points)| points.iter()).map(|p| p.0).filter(|x| *x > 0.0);
        let low = positive.clone().fold(f64::INFINITY, f64::min);
        let (x_min, x_max) = log_range(low, positive.fold(0.0, f64::max));
        let mut plot = ChartBuilder::on(&body)
            .margin(16)
            .x_label_area_size(56)
            .y_label_area_size(80)
            .build_cartesian_2d((x_min..x_max).log_scale(), 0.0..1.02)
            .map_err(fail)?;
        // Labels only at powers of ten: plotters adds intermediate ticks when it is allowed many labels.
        let decades = (x_max / x_min).log10().ceil() as usize + 1;
        plot.configure_mesh()
            .x_desc(&self.frame.x_label)
            .y_desc(&self.frame.y_label)
            .axis_desc_style((FONT, 17))
            .label_style((FONT, 15))
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .x_labels(decades)
            .x_label_formatter(&|x| log_time_tick(*x))
            .y_label_formatter(&|y| tick_label(*y))
            .draw()
            .map_err(fail)?;
        for (i, (_, points)) in self.lines.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            let points: Vec<(f64, f64)> = points.iter().map(|&(x, y)| (x.max(x_min), y)).collect();
            let stairs = steps(&points);
            plot.draw_series(LineSeries::new(stairs.iter().copied(), colour.stroke_width(2))).map_err(fail)?;
            let at = |q: f64| points.iter().find(|(_, y)| *y >= q).copied();
            if let Some(p50) = at(0.5) {
                plot.draw_series(std::iter::once(Circle::new(p50, 6, colour.filled()))).map_err(fail)?;
            }
            if let Some(p99) = at(0.99) {
                plot.draw_series(std::iter::once(TriangleMarker::new(p99, 8, colour.filled()))).map_err(fail)?;
            }
        }
        Ok(())
    }
}

/// One bar per point, in the palette's colours, its label under it, with a whisker for its interval and its
/// value above.
pub(super) fn draw_bars<DB: DrawingBackend>(frame: &Frame, bars: &[Bar], root: &DrawingArea<DB, Shift>) -> DrawResult {
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let body = draw_headings(root, &frame.title, &frame.subtitle)?;
    let top = bars.iter().map(|bar| bar.value.high.max(bar.value.mean)).filter(|v| v.is_finite()).fold(0.0, f64::max);
    let y_max = if top > 0.0 { top * 1.1 } else { 1.0 };
    let count = bars.len().max(1);
    let labels: Vec<&str> = bars.iter().map(|bar| bar.label.as_str()).collect();
    let mut plot = ChartBuilder::on(&body)
        .margin(16)
        .x_label_area_size(56)
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
        .y_label_formatter(&|y| tick_label(*y))
        .draw()
        .map_err(fail)?;
    for (i, bar) in bars.iter().enumerate() {
        let (colour, x, value) = (PALETTE[i % PALETTE.len()], i as f64, bar.value);
        if !value.mean.is_finite() {
            continue;
        }
        let rectangle = Rectangle::new([(x - 0.3, 0.0), (x + 0.3, value.mean)], colour.mix(0.8).filled());
        plot.draw_series(std::iter::once(rectangle)).map_err(fail)?;
        if value.high > value.low {
            let whisker = BLACK.stroke_width(2);
            plot.draw_series([
                PathElement::new(vec![(x, value.low), (x, value.high)], whisker),
                PathElement::new(vec![(x - 0.08, value.high), (x + 0.08, value.high)], whisker),
                PathElement::new(vec![(x - 0.08, value.low), (x + 0.08, value.low)], whisker),
            ])
            .map_err(fail)?;
        }
        let style = (FONT, 15).into_font().color(&GREY).pos(Pos::new(HPos::Center, VPos::Bottom));
        let above = value.high.max(value.mean) + y_max * 0.01;
        plot.draw_series(std::iter::once(Text::new(short_number(value.mean), (x, above), style))).map_err(fail)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_axis_starts_on_a_power_of_ten_and_spans_a_decade() {
        assert_eq!(log_range(10.09, 1006.6), (10.09 * 0.8, 1006.6 * 1.25));
        assert_eq!(log_range(30.0, 40.0), (10.0, 100.0));
        assert_eq!(log_range(0.0, 5.0), (0.1, 10.0), "nothing positive: a default");
    }

    #[test]
    fn a_cdf_is_drawn_as_stairs_at_its_bucket_edges() {
        let cdf = [(10.0, 0.37), (1000.0, 1.0)];
        assert_eq!(steps(&cdf), [(10.0, 0.0), (10.0, 0.37), (1000.0, 0.37), (1000.0, 1.0)]);
        assert!(steps(&[]).is_empty());
    }
}
