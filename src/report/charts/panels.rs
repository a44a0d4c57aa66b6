//! Drawing the over-time charts (panels stacked on one time axis, the latency CDF on a log axis) and plain bars.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::colours::assign;
use super::text::{draw_headings, draw_y_title, log_time_tick, tick_label};
use super::{Bar, DrawResult, FONT, Frame, GREY, GRID, HEIGHT, Legend, Look, SHADE, WIDTH, YAxis, short_number};

/// One panel of a small-multiples chart: its lines (the first in the panel's colour, the others grey) and the
/// spans of x to shade. Its colour is its `key`'s (the series value it shows), and it stands in `column`.
pub(super) struct Panel {
    pub label: String,
    pub key: String,
    pub column: usize,
    pub lines: Vec<Vec<(f64, f64)>>,
    pub shaded: Vec<(f64, f64)>,
}

/// The height of the time axis under the last row of panels: its numbers and its title.
const X_AXIS_HEIGHT: u32 = 48;

/// The x range of every panel's lines.
fn x_bounds(panels: &[Panel]) -> (f64, f64) {
    let points = || panels.iter().flat_map(|panel| panel.lines.iter().flatten());
    let (x_min, x_max) = points().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (x, _)| (lo.min(*x), hi.max(*x)));
    if x_min.is_finite() && x_max > x_min { (x_min, x_max) } else { (0.0, 1.0) }
}

/// The y axis the panels of one column share.
fn y_axis(panels: &[&Panel], log_y: bool) -> YAxis {
    let values = || panels.iter().flat_map(|panel| panel.lines.iter().flatten()).map(|(_, y)| *y);
    let top = values().filter(|y| y.is_finite()).fold(0.0_f64, f64::max);
    YAxis::new(log_y, top * 1.08, values())
}

/// `points` (in increasing x) with at most one point per pixel column of a plot `columns` pixels wide over
/// `x_min..x_max`: each column's largest value, at the x of its first point. A spike one bucket wide stays as
/// tall as it is, where drawing every `n`th point would drop it.
pub(super) fn column_maxima(points: &[(f64, f64)], (x_min, x_max): (f64, f64), columns: usize) -> Vec<(f64, f64)> {
    if points.len() <= columns || columns == 0 || x_max <= x_min {
        return points.to_vec();
    }
    let column = |x: f64| (((x - x_min) / (x_max - x_min)) * columns as f64).floor().clamp(0.0, columns as f64 - 1.0);
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(columns);
    let mut current = f64::NAN;
    for &(x, y) in points {
        let c = column(x);
        match out.last_mut() {
            Some(last) if c == current => {
                if y > last.1 || last.1.is_nan() {
                    last.1 = y;
                }
            }
            _ => {
                out.push((x, y));
                current = c;
            }
        }
    }
    out
}

/// Panels stacked on one x axis, one column per series (`columns`: their headings; none for one series), the
/// panels of a column on one y scale; each panel labelled above its plot in its colour, the x axis's numbers
/// only under the last row.
pub(super) fn draw_panels<DB: DrawingBackend>(
    frame: &Frame,
    panels: &[Panel],
    columns: &[String],
    root: &DrawingArea<DB, Shift>,
    look: Look,
) -> DrawResult {
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let x_range = x_bounds(panels);
    let (x_min, x_max) = x_range;
    let body = draw_headings(root, &frame.title, &frame.subtitle)?.margin(0, 8, 8, 0);
    let (y_title, body) = body.split_horizontally(34);
    draw_y_title(&y_title, &frame.y_label, 6, 16.0)?;
    let column_count = columns.len().max(1);
    let body = if columns.len() > 1 {
        let (headings, rest) = body.split_vertically(28);
        for (heading, cell) in columns.iter().zip(headings.split_evenly((1, column_count)).iter()) {
            let (width, _) = cell.dim_in_pixel();
            let style = (FONT, 17, FontStyle::Bold).into_font().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Top));
            // Centred over the plot, right of the 70 pixels of y labels.
            let centre = (width as i32 + 70) / 2;
            cell.draw(&Text::new(heading.as_str(), (centre, 4), style)).map_err(fail)?;
        }
        rest
    } else {
        body
    };
    let axes: Vec<YAxis> = (0..column_count)
        .map(|c| y_axis(&panels.iter().filter(|p| p.column == c).collect::<Vec<_>>(), look.log_y))
        .collect();
    let rows = panels.iter().filter(|p| p.column == 0).count().max(1);
    let keys: Vec<&str> = panels.iter().map(|p| p.key.as_str()).collect();
    let colours = assign(&keys);
    // Rows of equal plots: the last row is taller by the x axis it alone carries.
    let (width, height) = body.dim_in_pixel();
    let plot_height = (height.saturating_sub(X_AXIS_HEIGHT) / rows as u32) as i32;
    let x_breaks: Vec<i32> = (1..column_count).map(|c| (width as usize * c / column_count) as i32).collect();
    let y_breaks: Vec<i32> = (1..rows).map(|r| plot_height * r as i32).collect();
    let cells = body.split_by_breakpoints(x_breaks, y_breaks);
    let mut row_of_column = vec![0_usize; column_count];
    for (i, panel) in panels.iter().enumerate() {
        let column = panel.column.min(column_count - 1);
        let row = row_of_column[column];
        row_of_column[column] += 1;
        let Some(cell) = cells.get(row * column_count + column) else { continue };
        let colour = colours[i];
        let last = row + 1 == rows;
        let y_axis = axes[column];
        let mut builder = ChartBuilder::on(cell);
        builder
            .margin(4)
            .caption(&panel.label, (FONT, 16, FontStyle::Bold).into_font().color(&colour))
            .x_label_area_size(if last { X_AXIS_HEIGHT } else { 4 })
            .y_label_area_size(70);
        with_y_axis!(builder, x_min..x_max, y_axis, |plot| {
            let (bottom, top) = (y_axis.floor(), plot.y_range().end);
            for &(start, end) in &panel.shaded {
                let span = [(start.max(x_min), bottom), (end.min(x_max), top)];
                plot.draw_series(std::iter::once(Rectangle::new(span, SHADE.mix(0.35).filled()))).map_err(fail)?;
            }
            let mut mesh = plot.configure_mesh();
            mesh.label_style((FONT, 13))
                .light_line_style(TRANSPARENT)
                .bold_line_style(GRID)
                .y_labels(y_axis.labels(4))
                .y_label_formatter(&|y| tick_label(*y));
            // Every panel keeps the vertical grid lines; only the last row writes the numbers under them.
            let no_numbers = |_: &f64| String::new();
            let numbers = |x: &f64| tick_label(*x);
            if last {
                mesh.x_desc(&frame.x_label).axis_desc_style((FONT, 16)).x_label_formatter(&numbers);
            } else {
                mesh.x_label_formatter(&no_numbers);
            }
            mesh.draw().map_err(fail)?;
            let width = plot.plotting_area().dim_in_pixel().0 as usize;
            for (j, points) in panel.lines.iter().enumerate().rev() {
                let line_colour = if j == 0 { colour } else { RGBColor(150, 150, 150) };
                let drawn: Vec<(f64, f64)> =
                    column_maxima(points, x_range, width).into_iter().map(|(x, y)| (x, y_axis.clamp(y))).collect();
                if j == 0 && panel.lines.len() == 1 {
                    let area = AreaSeries::new(drawn.iter().copied(), bottom, colour.mix(0.25));
                    plot.draw_series(area).map_err(fail)?;
                }
                plot.draw_series(LineSeries::new(drawn, line_colour.stroke_width(2))).map_err(fail)?;
            }
        });
    }
    Ok(())
}

/// Cumulative distributions of time to success on a log axis in ms, one line per point.
pub(super) struct Cdf {
    pub frame: Frame,
    pub legend_title: String,
    /// `(label, [(upper bucket edge in ms, fraction of successes within it)])`.
    pub lines: Vec<(String, Vec<(f64, f64)>)>,
    /// Per line, the name its colour comes from.
    pub keys: Vec<String>,
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
        let keys = if entries.is_empty() { Vec::new() } else { self.keys.iter().map(String::as_str).collect() };
        Legend { title: &self.legend_title, entries, keys, bars: false }
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
        for ((_, points), colour) in self.lines.iter().zip(assign(&self.keys)) {
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

/// One bar per point, each in its label's colour, its label under it, with a whisker for its interval and its
/// value above.
pub(super) fn draw_bars<DB: DrawingBackend>(
    frame: &Frame,
    bars: &[Bar],
    root: &DrawingArea<DB, Shift>,
    look: Look,
) -> DrawResult {
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let body = draw_headings(root, &frame.title, &frame.subtitle)?;
    let top = bars.iter().map(|bar| bar.value.high.max(bar.value.mean)).filter(|v| v.is_finite()).fold(0.0, f64::max);
    let values = bars.iter().flat_map(|bar| [bar.value.mean, bar.value.low, bar.value.high]);
    let y_axis = YAxis::new(look.log_y, top * 1.1, values);
    let count = bars.len().max(1);
    let labels: Vec<&str> = bars.iter().map(|bar| bar.label.as_str()).collect();
    let colours = assign(&labels);
    let mut builder = ChartBuilder::on(&body);
    builder.margin(16).x_label_area_size(56).y_label_area_size(80);
    with_y_axis!(builder, -0.5..(count as f64 - 0.5), y_axis, |plot| {
        let y_max = plot.y_range().end;
        plot.configure_mesh()
            .x_desc(&frame.x_label)
            .y_desc(&frame.y_label)
            .axis_desc_style((FONT, 18))
            .label_style((FONT, 15))
            .disable_x_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .x_labels(count)
            .y_labels(y_axis.labels(10))
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
        for (i, (bar, colour)) in bars.iter().zip(&colours).enumerate() {
            let (x, value) = (i as f64, bar.value);
            if !value.mean.is_finite() {
                continue;
            }
            let (floor, mean) = (y_axis.floor(), y_axis.clamp(value.mean));
            let rectangle = Rectangle::new([(x - 0.3, floor), (x + 0.3, mean)], colour.mix(0.8).filled());
            plot.draw_series(std::iter::once(rectangle)).map_err(fail)?;
            if value.high > value.low {
                let (low, high) = (y_axis.clamp(value.low), y_axis.clamp(value.high));
                let whisker = BLACK.stroke_width(2);
                plot.draw_series([
                    PathElement::new(vec![(x, low), (x, high)], whisker),
                    PathElement::new(vec![(x - 0.08, high), (x + 0.08, high)], whisker),
                    PathElement::new(vec![(x - 0.08, low), (x + 0.08, low)], whisker),
                ])
                .map_err(fail)?;
            }
            let style = (FONT, 15).into_font().color(&GREY).pos(Pos::new(HPos::Center, VPos::Bottom));
            // A little above the bar's top: 1% of the axis's height, in the axis's own terms.
            let above = match y_axis {
                YAxis::Linear { .. } => value.high.max(value.mean) + y_max * 0.01,
                YAxis::Log { bottom, top } => y_axis.clamp(value.high.max(value.mean)) * (top / bottom).powf(0.01),
            };
            plot.draw_series(std::iter::once(Text::new(short_number(value.mean), (x, above), style))).map_err(fail)?;
        }
    });
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
    fn a_coarse_timeline_keeps_each_pixel_columns_largest_value() {
        // 3,000 buckets of 10 ms over 30 s on 1,000 pixels: one spike every 500 buckets, one bucket wide.
        let points: Vec<(f64, f64)> =
            (0..3_000).map(|b| (f64::from(b) * 10.0, if b % 500 == 7 { 800.0 } else { 1.0 })).collect();
        let drawn = column_maxima(&points, (0.0, 29_990.0), 1_000);
        assert!(drawn.len() <= 1_000, "{} points", drawn.len());
        assert_eq!(drawn.iter().filter(|(_, y)| *y == 800.0).count(), 6, "every spike at its height");
        // Every fourth point, as a sample would draw them, misses every spike (buckets 7, 507, …: 3 mod 4).
        assert_eq!(points.iter().step_by(4).filter(|(_, y)| *y == 800.0).count(), 0);
        assert_eq!(column_maxima(&points[..10], (0.0, 90.0), 1_000), points[..10], "fewer points than columns");
    }

    #[test]
    fn a_cdf_is_drawn_as_stairs_at_its_bucket_edges() {
        let cdf = [(10.0, 0.37), (1000.0, 1.0)];
        assert_eq!(steps(&cdf), [(10.0, 0.0), (10.0, 0.37), (1000.0, 0.37), (1000.0, 1.0)]);
        assert!(steps(&[]).is_empty());
    }
}
