//! Lines against a numeric x axis with their 95% CI bands: in one panel, or in small multiples on shared axes
//! when there are more lines than the palette has colours ([`lay_out`]). The legend stands beside the plots,
//! never on the data, and each line keeps its colour in every panel.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::colours::assign;
use super::text::{draw_headings, draw_y_title, tick_label};
use super::{COLOURS, DrawResult, FONT, Frame, GRID, HEIGHT, Legend, Look, Spread, WIDTH, YAxis};

/// The most lines one panel draws: one per colour of the palette.
pub(in crate::report) const MAX_LINES: usize = COLOURS;
/// The most panels a chart of lines is split into.
pub(in crate::report) const MAX_PANELS: usize = 12;

/// One point of a line: x, and the mean with its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(in crate::report) struct LinePoint {
    pub x: f64,
    pub y: Spread,
}

/// One line: its series (its colour and legend entry), its points in increasing x, and the model's analytic
/// curve if it has one (drawn thin and black).
#[derive(Debug)]
pub(in crate::report) struct Line {
    pub series: usize,
    pub points: Vec<LinePoint>,
    pub theory: Vec<(f64, f64)>,
    /// The tag of the first sample the line was built from (see [`Sample::tag`]).
    pub tag: usize,
}

/// One panel: its label ("rate=900"; empty for a chart of one panel) and its lines.
#[derive(Debug)]
pub(in crate::report) struct LinePanel {
    pub label: String,
    pub lines: Vec<Line>,
}

/// A chart of lines ready to draw.
pub(in crate::report) struct LinesChart {
    pub frame: Frame,
    /// The legend's heading: the parameter whose values the lines are, or empty.
    pub legend_title: String,
    /// The legend's entries; a line's `series` indexes them, and the palette colours them.
    pub series: Vec<String>,
    pub panels: Vec<LinePanel>,
    /// The top of the metric's range (1 for a fraction): the y axis stops just above it.
    pub y_ceiling: f64,
}

/// One point of a line chart before it is laid out: its values of the chart's dimensions other than x, then its
/// x and y. `tag` is the caller's (a sweep point's index) and is handed back on the line it lands in.
pub(in crate::report) struct Sample {
    pub dims: Vec<String>,
    pub x: f64,
    pub y: Spread,
    pub tag: usize,
}

/// How samples were split into panels and lines.
#[derive(Debug)]
pub(in crate::report) struct Layout {
    pub panels: Vec<LinePanel>,
    pub series: Vec<String>,
    /// The dimension that makes one panel per value, if the lines needed more than one panel.
    pub facet: Option<usize>,
    /// The dimensions a line's label is made of.
    pub line_dims: Vec<usize>,
    /// The labels of the lines left out: past [`MAX_LINES`], when no dimension splits them into panels of at
    /// most that many.
    pub left_out: Vec<String>,
}

/// Names a line from its `(dimension, value)` pairs.
pub(in crate::report) type LineNamer<'a> = dyn Fn(&[(usize, &str)]) -> String + 'a;

/// The distinct values of `items` in order of first appearance.
fn distinct<T: PartialEq + Clone>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// Splits `samples` into lines, one per combination of their dimensions (named `names`), and the lines into
/// panels: one panel when there are at most [`MAX_LINES`]; else one panel per value of another dimension that
/// leaves at most that many lines in each panel, in at most [`MAX_PANELS`] panels, the fewest panels winning
/// (never the `protected` dimension: the one the scenario asked to see as lines); else one panel with the
/// first [`MAX_LINES`] lines. `label` names a line from its `(dimension, value)` pairs.
pub(in crate::report) fn lay_out(
    names: &[String],
    protected: Option<usize>,
    samples: &[Sample],
    label: &LineNamer<'_>,
) -> Layout {
    let combos: Vec<&Vec<String>> = distinct(samples.iter().map(|s| &s.dims));
    // A panel per value of the only dimension would leave one line per panel: that is no chart of lines.
    let facet = if combos.len() <= MAX_LINES || names.len() < 2 {
        None
    } else {
        (0..names.len())
            .filter(|&d| Some(d) != protected)
            .filter_map(|d| {
                let values = distinct(combos.iter().map(|c| &c[d]));
                let fullest = values.iter().map(|v| combos.iter().filter(|c| c[d] == **v).count()).max()?;
                (values.len() >= 2 && values.len() <= MAX_PANELS && fullest <= MAX_LINES).then_some((values.len(), d))
            })
            .min()
            .map(|(_, d)| d)
    };
    let line_dims: Vec<usize> = (0..names.len()).filter(|&d| Some(d) != facet).collect();
    let line_label = |dims: &[String]| {
        let pairs: Vec<(usize, &str)> = line_dims.iter().map(|&d| (d, dims[d].as_str())).collect();
        label(&pairs)
    };
    let kept = if facet.is_none() { combos.len().min(MAX_LINES) } else { combos.len() };
    let left_out = combos[kept..].iter().map(|c| line_label(c)).collect();
    let kept = &combos[..kept];
    let series = distinct(kept.iter().map(|c| line_label(c)));
    let panel_values: Vec<&str> = match facet {
        Some(d) => distinct(kept.iter().map(|c| c[d].as_str())),
        None => vec![""],
    };
    let mut panels: Vec<LinePanel> = panel_values
        .iter()
        .map(|value| LinePanel {
            label: facet.map_or_else(String::new, |d| format!("{}={value}", names[d])),
            lines: Vec::new(),
        })
        .collect();
    for sample in samples.iter().filter(|s| kept.contains(&&s.dims)) {
        let panel = facet.map_or(0, |d| panel_values.iter().position(|v| *v == sample.dims[d]).unwrap_or(0));
        let series = series.iter().position(|s| *s == line_label(&sample.dims)).unwrap_or(0);
        let lines = &mut panels[panel].lines;
        let point = LinePoint { x: sample.x, y: sample.y };
        match lines.iter_mut().find(|line| line.series == series) {
            Some(line) => line.points.push(point),
            None => lines.push(Line { series, points: vec![point], theory: Vec::new(), tag: sample.tag }),
        }
    }
    for line in panels.iter_mut().flat_map(|panel| panel.lines.iter_mut()) {
        line.points.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    Layout { panels, series, facet, line_dims, left_out }
}

/// "a, b and 3 more": the first few of `labels`.
pub(in crate::report) fn few(labels: &[String]) -> String {
    const SHOWN: usize = 3;
    let listed = labels.iter().take(SHOWN).cloned().collect::<Vec<_>>().join("; ");
    if labels.len() > SHOWN { format!("{listed} and {} more", labels.len() - SHOWN) } else { listed }
}

/// Panels in a grid: one row up to three, then two columns for four, then three columns.
fn grid(count: usize) -> (usize, usize) {
    let columns = match count {
        0..=3 => count.max(1),
        4 => 2,
        _ => 3,
    };
    (count.max(1).div_ceil(columns), columns)
}

impl LinesChart {
    fn legend(&self) -> Legend<'_> {
        // A single line named after nothing but the scenario needs no legend.
        let entries = if self.series.len() > 1 || !self.legend_title.is_empty() {
            self.series.iter().map(String::as_str).collect()
        } else {
            Vec::new()
        };
        Legend { title: &self.legend_title, entries, keys: Vec::new(), bars: false }
    }

    /// Pixels: one wide panel, or a grid of panels; the legend's width beside them.
    pub(super) fn size(&self) -> (u32, u32) {
        let legend = self.legend().width();
        if self.panels.len() <= 1 {
            return (WIDTH + legend, HEIGHT);
        }
        let (rows, columns) = grid(self.panels.len());
        ((100 + 400 * columns as u32).max(WIDTH) + legend, (170 + 300 * rows as u32).max(HEIGHT))
    }

    /// The x range and the y axis, shared by every panel.
    fn bounds(&self, log_y: bool) -> (f64, f64, YAxis) {
        let points = || self.panels.iter().flat_map(|p| p.lines.iter()).flat_map(|l| l.points.iter());
        let xs = points().map(|p| p.x).filter(|x| x.is_finite());
        let (x_min, x_max) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)));
        let (x_min, x_max) = match (x_min.is_finite(), x_max > x_min) {
            (false, _) => (0.0, 1.0),
            (true, false) => (x_min - 0.5, x_min + 0.5),
            (true, true) => (x_min, x_max),
        };
        let top = points().map(|p| p.y.high.max(p.y.mean)).filter(|y| y.is_finite()).fold(0.0_f64, f64::max);
        let y_max = if top > 0.0 { (top * 1.08).min(self.y_ceiling * 1.02) } else { 1.0 };
        let values = points().flat_map(|p| [p.y.mean, p.y.low, p.y.high]);
        (x_min, x_max, YAxis::new(log_y, y_max, values))
    }

    /// How many numbers the x axis of each panel may carry: one per whole number when every x is one and there
    /// are few, else fewer the narrower the panels.
    fn x_ticks(&self, (x_min, x_max): (f64, f64), columns: usize) -> usize {
        let most = if columns > 1 { 6 } else { 10 };
        let mut xs = self.panels.iter().flat_map(|p| p.lines.iter()).flat_map(|l| l.points.iter()).map(|p| p.x);
        let span = x_max - x_min;
        if xs.all(|x| x.fract() == 0.0) && span >= 1.0 && span < most as f64 * 2.0 {
            // plotters steps by 1 when allowed one label per whole number.
            return (span as usize + 1).min(most * 2);
        }
        most
    }

    pub(super) fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, look: Look) -> DrawResult {
        let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let body = draw_headings(root, &self.frame.title, &self.frame.subtitle)?;
        let (width, height) = body.dim_in_pixel();
        let legend = self.legend();
        let (plots, legend_area) = body.split_horizontally(width - legend.width());
        legend.draw(&legend_area, 24)?;
        let (y_title, rest) = plots.split_horizontally(36);
        let (grid_area, x_title) = rest.split_vertically(height.saturating_sub(34));
        draw_y_title(&y_title, &self.frame.y_label, 8, 18.0)?;
        let (x_title_width, _) = x_title.dim_in_pixel();
        let style = (FONT, 18).into_font().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Top));
        x_title
            .draw(&Text::new(self.frame.x_label.as_str(), (x_title_width as i32 / 2 + 30, 0), style))
            .map_err(fail)?;
        let (x_min, x_max, y_axis) = self.bounds(look.log_y);
        let (rows, columns) = grid(self.panels.len());
        let ticks = self.x_ticks((x_min, x_max), columns);
        let colours = assign(&self.series);
        for (panel, cell) in self.panels.iter().zip(grid_area.split_evenly((rows, columns)).iter()) {
            draw_panel(panel, cell, (x_min, x_max, y_axis), ticks, &colours)?;
        }
        Ok(())
    }
}

/// One panel: its label above, its CI bands, lines, points and theory curves on the shared axes; a line's
/// colour is `colours[line.series]`.
fn draw_panel<DB: DrawingBackend>(
    panel: &LinePanel,
    area: &DrawingArea<DB, Shift>,
    (x_min, x_max, y_axis): (f64, f64, YAxis),
    x_ticks: usize,
    colours: &[RGBColor],
) -> DrawResult {
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let mut builder = ChartBuilder::on(area);
    builder.margin(10).x_label_area_size(30).y_label_area_size(64);
    if !panel.label.is_empty() {
        builder.caption(&panel.label, (FONT, 17, FontStyle::Bold).into_font());
    }
    let y = |v: f64| y_axis.clamp(v);
    with_y_axis!(builder, x_min..x_max, y_axis, |plot| {
        plot.configure_mesh()
            .label_style((FONT, 14))
            .x_labels(x_ticks)
            .y_labels(y_axis.labels(if panel.label.is_empty() { 10 } else { 6 }))
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .x_label_formatter(&|x| tick_label(*x))
            .y_label_formatter(&|y| tick_label(*y))
            .draw()
            .map_err(fail)?;
        for line in &panel.lines {
            let colour = colours.get(line.series).copied().unwrap_or(BLACK);
            // A point whose mean is undefined breaks the line (and its band) in two.
            let runs = line.points.split(|p| !p.y.mean.is_finite()).filter(|run| !run.is_empty());
            for run in runs {
                if run.len() > 1 && run.iter().any(|p| p.y.high > p.y.low) {
                    let upper = run.iter().map(|p| (p.x, y(p.y.high)));
                    let lower = run.iter().rev().map(|p| (p.x, y(p.y.low)));
                    let band: Vec<(f64, f64)> = upper.chain(lower).collect();
                    plot.draw_series(std::iter::once(Polygon::new(band, colour.mix(0.18).filled()))).map_err(fail)?;
                }
                plot.draw_series(LineSeries::new(run.iter().map(|p| (p.x, y(p.y.mean))), colour.stroke_width(2)))
                    .map_err(fail)?;
                if line.points.len() <= 40 {
                    let dots = run.iter().map(|p| Circle::new((p.x, y(p.y.mean)), 3, colour.filled()));
                    plot.draw_series(dots).map_err(fail)?;
                }
            }
            if line.theory.len() > 1 {
                let theory = line.theory.iter().map(|&(x, v)| (x, y(v)));
                plot.draw_series(LineSeries::new(theory, BLACK.stroke_width(1))).map_err(fail)?;
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(dims: &[&[&str]]) -> Vec<Sample> {
        let mut out = Vec::new();
        for (tag, combo) in dims.iter().enumerate() {
            for x in [1.0, 2.0] {
                let dims = combo.iter().map(|v| (*v).to_owned()).collect();
                out.push(Sample { dims, x, y: Spread { mean: x, low: x, high: x }, tag });
            }
        }
        out
    }

    fn label(pairs: &[(usize, &str)]) -> String {
        pairs.iter().map(|(d, v)| format!("{d}:{v}")).collect::<Vec<_>>().join(",")
    }

    /// Every combination of the given values of each dimension, the first varying slowest.
    fn product(axes: &[&[&'static str]]) -> Vec<Vec<&'static str>> {
        axes.iter().fold(vec![vec![]], |acc, values| {
            acc.iter().flat_map(|prefix| values.iter().map(move |v| [prefix.clone(), vec![*v]].concat())).collect()
        })
    }

    fn lay_out_product(axes: &[&[&'static str]], protected: Option<usize>) -> Layout {
        let combos = product(axes);
        let refs: Vec<&[&str]> = combos.iter().map(Vec::as_slice).collect();
        let names: Vec<String> = (0..axes.len()).map(|d| format!("d{d}")).collect();
        lay_out(&names, protected, &samples(&refs), &label)
    }

    #[test]
    fn up_to_ten_lines_share_one_panel() {
        let layout = lay_out_product(&[&["a", "b"], &["1", "2", "3", "4", "5"]], None);
        assert_eq!(layout.facet, None);
        assert_eq!(layout.panels.len(), 1);
        assert_eq!(layout.panels[0].lines.len(), 10);
        assert_eq!(layout.series[0], "0:a,1:1");
        assert!(layout.left_out.is_empty());
        assert!(layout.panels[0].lines.iter().all(|line| line.points.len() == 2));
    }

    #[test]
    fn more_lines_than_colours_split_into_panels_by_the_dimension_that_needs_fewest() {
        // 2 limiters × 6 rates: 12 lines; by limiter, 2 panels of 6; by rate, 6 panels of 2.
        let rates: &[&str] = &["500", "600", "700", "800", "900", "950"];
        let layout = lay_out_product(&[rates, &["none", "budget"]], None);
        assert_eq!(layout.facet, Some(1));
        let labels: Vec<&str> = layout.panels.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["d1=none", "d1=budget"]);
        assert!(layout.panels.iter().all(|p| p.lines.len() == 6));
        assert_eq!(layout.series.len(), 6, "a line keeps its colour in every panel");
        // The scenario asked for one line per limiter: the panels are the rates.
        let layout = lay_out_product(&[rates, &["none", "budget"]], Some(1));
        assert_eq!(layout.facet, Some(0));
        assert_eq!(layout.panels.len(), 6);
        assert_eq!(layout.series, ["1:none", "1:budget"]);
    }

    #[test]
    fn without_a_dimension_to_split_by_the_first_ten_are_drawn_and_the_rest_named() {
        let many: &[&str] = &["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"];
        let layout = lay_out_product(&[many], None);
        assert_eq!(layout.facet, None);
        assert_eq!(layout.panels[0].lines.len(), MAX_LINES);
        assert_eq!(layout.left_out, ["0:10", "0:11", "0:12"]);
        assert_eq!(few(&layout.left_out), "0:10; 0:11; 0:12");
        assert_eq!(few(&["a".into(), "b".into(), "c".into(), "d".into(), "e".into()]), "a; b; c and 2 more");
        // 4 × 4 × 4: no single dimension leaves 10 or fewer lines per panel.
        let four: &[&str] = &["1", "2", "3", "4"];
        let layout = lay_out_product(&[four, four, four], None);
        assert_eq!((layout.facet, layout.left_out.len()), (None, 54));
    }

    #[test]
    fn grids_stay_compact() {
        assert_eq!(grid(1), (1, 1));
        assert_eq!(grid(2), (1, 2));
        assert_eq!(grid(4), (2, 2));
        assert_eq!(grid(6), (2, 3));
        assert_eq!(grid(7), (3, 3));
    }
}
