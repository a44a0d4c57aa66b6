//! The heatmap chart (`[charts.heatmap]`): one cell per (x, y) pair of swept values, coloured by the mean of one
//! metric over the replicates and labelled with it, one panel per combination of the other swept parameters
//! that `at` leaves free.
//!
//! Conventions: numeric axes run in increasing order (y upwards), named ones in sweep order. Colours follow a
//! viridis-like scale from the smallest mean on the chart (dark) to the largest (yellow), shared by every panel.
//! A cell whose mean is undefined (every replicate NaN) is drawn red and labelled "never" when the model reports
//! `recovered` and no replicate recovered; otherwise grey and "n/a". When only k of the n replicates recovered,
//! the cell says "k/n" under its value (for `recovery_ms`, whose value is NaN in a run that never recovered, the
//! mean then covers those k).
//!
//! With `fluid = true`, a black line runs between the cells where the fluid limit's trajectory (`retrylab fluid`)
//! turns from recovering to stuck: the arithmetic's boundary over the simulated one.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::aggregate::Aggregate;
use super::charts::text::{draw_headings, metric_phrase, title_by};
use super::charts::{DrawResult, FONT, Pins, short_number};
use crate::params::Value;
use crate::scenario::{HeatmapOptions, PlannedPoint, Scenario, SweepAxis};

/// Cells whose run never recovered.
const NEVER: RGBColor = RGBColor(200, 30, 45);
/// Cells whose metric is undefined for another reason.
const UNDEFINED: RGBColor = RGBColor(200, 200, 200);
/// Viridis at 0, ¼, ½, ¾ and 1; colours in between are interpolated linearly.
const SCALE: [(u8, u8, u8); 5] = [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)];
const LEGEND_WIDTH: u32 = 170;

/// One cell: the metric's mean (NaN when undefined), and "k/n" when only some replicates define it.
#[derive(Clone, Debug, PartialEq)]
struct Cell {
    mean: f64,
    never: bool,
    partial: Option<String>,
    /// The fluid limit's verdict at this point (`fluid = true`): stuck or not; `None` without one.
    fluid_stuck: Option<bool>,
}

struct HeatPanel {
    label: String,
    /// Row-major from the bottom row: `cells[y * x_ticks.len() + x]`; `None` where no point has that pair.
    cells: Vec<Option<Cell>>,
}

/// A heatmap ready to draw.
pub(super) struct Heatmap {
    pub title: String,
    pub subtitle: String,
    x_label: String,
    y_label: String,
    metric: &'static str,
    x_ticks: Vec<String>,
    y_ticks: Vec<String>,
    panels: Vec<HeatPanel>,
    /// The smallest and largest defined mean: the ends of the colour scale.
    range: (f64, f64),
}

/// The order in which an axis's values are drawn: increasing for numbers, as swept for names.
fn axis_order(axis: &SweepAxis) -> Vec<usize> {
    let mut order: Vec<usize> = (0..axis.values.len()).collect();
    if axis.values.iter().all(|v| v.as_axis_number().is_some()) {
        order.sort_by(|&a, &b| {
            let number = |i: usize| axis.values[i].as_axis_number().unwrap_or(0.0);
            number(a).total_cmp(&number(b))
        });
    }
    order
}

/// The default axis title: the key and the first clause of its help, which says what it is and in what unit.
fn axis_title(axis: &SweepAxis) -> String {
    let help = axis.spec.help;
    let clause = help.split(" (").next().unwrap_or(help).split(';').next().unwrap_or(help);
    format!("{}: {}", axis.name, clause.trim())
}

impl Heatmap {
    /// The heatmap `options` asks for, or `None` when `--set` has since removed its x or y axis from the sweep, or
    /// when the metric is undefined in every cell for no reason a cell can show ("never").
    pub(super) fn build(
        scenario: &Scenario,
        points: &[PlannedPoint],
        aggregate: &Aggregate,
        options: &HeatmapOptions,
    ) -> Option<Heatmap> {
        let position = |key: &str| scenario.sweep.iter().position(|axis| axis.name == key);
        let (x, y) = (position(options.x)?, position(options.y)?);
        let metric_index = scenario.model.metric_index(options.metric)?;
        let recovered_index = scenario.model.metric_index("recovered").filter(|&i| i != metric_index);
        let pins = Pins::new(scenario, &options.at, |i| i != x && i != y, false);
        let (x_axis, y_axis) = (&scenario.sweep[x], &scenario.sweep[y]);
        let (x_order, y_order) = (axis_order(x_axis), axis_order(y_axis));
        let slot = |axis: &SweepAxis, order: &[usize], value: &Value| {
            order.iter().position(|&i| axis.values[i] == *value).unwrap_or(0)
        };
        let fluid = if options.fluid { fluid_verdicts(scenario, points, &pins) } else { vec![None; points.len()] };
        let mut panels: Vec<HeatPanel> = Vec::new();
        let admitted = points.iter().zip(&aggregate.summary).zip(&fluid).filter(|((p, _), _)| pins.admit(p));
        for ((point, estimates), &fluid_stuck) in admitted {
            let label = pins.free_label(scenario, point);
            let panel = match panels.iter().position(|panel| panel.label == label) {
                Some(index) => &mut panels[index],
                None => {
                    let cells = vec![None; x_order.len() * y_order.len()];
                    panels.push(HeatPanel { label, cells });
                    panels.last_mut()?
                }
            };
            let estimate = estimates[metric_index];
            let recovered = recovered_index.map(|i| estimates[i].mean).filter(|r| !r.is_nan());
            let replicates = scenario.replicates;
            let partial = recovered
                .filter(|r| *r > 0.0 && *r < 1.0 && !estimate.mean.is_nan())
                .map(|r| format!("{}/{replicates}", (r * f64::from(replicates)).round()));
            let never = estimate.mean.is_nan() && recovered == Some(0.0);
            let cell = Cell { mean: estimate.mean, never, partial, fluid_stuck };
            let column = slot(x_axis, &x_order, &point.swept[x]);
            let row = slot(y_axis, &y_order, &point.swept[y]);
            panel.cells[row * x_order.len() + column] = Some(cell);
        }
        if panels.iter().flat_map(|p| p.cells.iter().flatten()).all(|c| c.mean.is_nan() && !c.never) {
            return None;
        }
        let defined = panels.iter().flat_map(|p| p.cells.iter().flatten()).map(|c| c.mean).filter(|m| m.is_finite());
        let range = defined.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), m| (lo.min(m), hi.max(m)));
        let spec = &scenario.model.metrics()[metric_index];
        let at_text = pins.at_text(scenario);
        let at_text = at_text.trim_start();
        let separator = if at_text.is_empty() { "" } else { " · " };
        let mut subtitle = format!(
            "{at_text}{separator}{} ({}): mean of {} replicates per cell",
            spec.name,
            spec.unit.label(),
            scenario.replicates
        );
        if panels.iter().flat_map(|p| p.cells.iter().flatten()).any(|cell| cell.partial.is_some()) {
            subtitle.push_str("; k/n: only k of the n replicates recovered");
            if spec.name == "recovery_ms" {
                subtitle.push_str(" (the mean is over those k); never: none did");
            }
        }
        if panels.iter().flat_map(|p| p.cells.iter().flatten()).any(|cell| cell.fluid_stuck == Some(true)) {
            subtitle.push_str("; black line: where the fluid limit turns stuck");
        }
        Some(Heatmap {
            title: title_by(&scenario.name, &metric_phrase(spec), &format!("{} and {}", x_axis.name, y_axis.name)),
            subtitle,
            x_label: options.x_label.clone().unwrap_or_else(|| axis_title(x_axis)),
            y_label: options.y_label.clone().unwrap_or_else(|| axis_title(y_axis)),
            metric: spec.name,
            x_ticks: x_order.iter().map(|&i| x_axis.values[i].to_string()).collect(),
            y_ticks: y_order.iter().map(|&i| y_axis.values[i].to_string()).collect(),
            panels,
            range,
        })
    }

    /// Panels in a grid of at most three columns.
    fn grid(&self) -> (usize, usize) {
        let count = self.panels.len().max(1);
        let columns = count.min(3);
        (count.div_ceil(columns), columns)
    }

    /// Pixels: wide enough for the panels side by side and the legend.
    pub(super) fn size(&self) -> (u32, u32) {
        let (rows, columns) = self.grid();
        let cell = (70 * self.x_ticks.len() as u32).clamp(360, 700);
        let width = (columns as u32 * (cell + 110) + LEGEND_WIDTH + 40).max(900);
        let height = 140 + rows as u32 * (50 * self.y_ticks.len() as u32 + 140).clamp(360, 640);
        (width, height)
    }

    /// The colour of a defined mean on the shared scale.
    fn colour(&self, mean: f64) -> RGBColor {
        let (lo, hi) = self.range;
        let t = if hi > lo { ((mean - lo) / (hi - lo)).clamp(0.0, 1.0) } else { 0.5 };
        let position = t * (SCALE.len() - 1) as f64;
        let index = (position.floor() as usize).min(SCALE.len() - 2);
        let f = position - index as f64;
        let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * f).round() as u8;
        let (a, b) = (SCALE[index], SCALE[index + 1]);
        RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
    }

    /// Draws the headings, one panel of cells per combination of the free parameters, and the colour scale.
    pub(super) fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let body = draw_headings(root, &self.title, &self.subtitle)?.margin(0, 8, 8, 8);
        let (width, _) = body.dim_in_pixel();
        let (grid, legend) = body.split_horizontally(width.saturating_sub(LEGEND_WIDTH));
        let (rows, columns) = self.grid();
        for (panel, cell) in self.panels.iter().zip(grid.split_evenly((rows, columns)).iter()) {
            self.draw_panel(panel, cell)?;
        }
        self.draw_legend(&legend)
    }

    fn draw_panel<DB: DrawingBackend>(&self, panel: &HeatPanel, area: &DrawingArea<DB, Shift>) -> DrawResult {
        let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let (nx, ny) = (self.x_ticks.len(), self.y_ticks.len());
        // Room left of the cells for the widest y tick label and, beyond it, the axis title.
        let tick_width = |label: &String| (FONT, 14).into_font().box_size(label).map_or(0, |(w, _)| w);
        let widest = self.y_ticks.iter().map(tick_width).max().unwrap_or(0);
        let mut builder = ChartBuilder::on(area);
        builder.margin(10).x_label_area_size(62).y_label_area_size((widest + 44).max(92));
        if !panel.label.is_empty() {
            builder.caption(&panel.label, (FONT, 19, FontStyle::Bold).into_font());
        }
        let mut plot = builder.build_cartesian_2d(-0.5..(nx as f64 - 0.5), -0.5..(ny as f64 - 0.5)).map_err(fail)?;
        plot.configure_mesh()
            .disable_mesh()
            .x_labels(0)
            .y_labels(0)
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .axis_desc_style((FONT, 15))
            .draw()
            .map_err(fail)?;
        let coordinates = plot.as_coord_spec().clone();
        let pixel = |x: f64, y: f64| coordinates.translate(&(x, y));
        let cell_width = (pixel(1.0, 0.0).0 - pixel(0.0, 0.0).0).unsigned_abs();
        let cell_height = (pixel(0.0, 0.0).1 - pixel(0.0, 1.0).1).unsigned_abs();
        let font = (f64::from(cell_width) / 5.0).min(f64::from(cell_height) / 2.8).clamp(9.0, 17.0);
        for (index, cell) in panel.cells.iter().enumerate() {
            let Some(cell) = cell else { continue };
            let (x, y) = ((index % nx) as f64, (index / nx) as f64);
            let (fill, text) = match (cell.mean.is_nan(), cell.never) {
                (false, _) => (self.colour(cell.mean), short_number(cell.mean)),
                (true, true) => (NEVER, "never".to_owned()),
                (true, false) => (UNDEFINED, "n/a".to_owned()),
            };
            let square = Rectangle::new([(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)], fill.filled());
            plot.draw_series(std::iter::once(square)).map_err(fail)?;
            let outline = Rectangle::new([(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)], WHITE.stroke_width(2));
            plot.draw_series(std::iter::once(outline)).map_err(fail)?;
            let ink = if luminance(fill) > 140.0 { BLACK } else { WHITE };
            let (main_y, note_y) = if cell.partial.is_some() { (y + 0.12, y - 0.22) } else { (y, y) };
            let centre = Pos::new(HPos::Center, VPos::Center);
            let style = (FONT, font).into_font().color(&ink).pos(centre);
            plot.draw_series(std::iter::once(Text::new(text, (x, main_y), style))).map_err(fail)?;
            if let Some(note) = &cell.partial {
                let style = (FONT, font * 0.75).into_font().color(&ink).pos(centre);
                plot.draw_series(std::iter::once(Text::new(note.clone(), (x, note_y), style))).map_err(fail)?;
            }
        }
        self.draw_fluid_boundary(panel, &mut plot).map_err(fail)?;
        // Tick labels, drawn by hand so that every value gets one whatever plotters' label spacing would choose.
        let base = area.get_base_pixel();
        let tick = (FONT, 14).into_font().color(&BLACK);
        for (i, label) in self.x_ticks.iter().enumerate() {
            let (px, py) = pixel(i as f64, -0.5);
            let style = tick.clone().pos(Pos::new(HPos::Center, VPos::Top));
            area.draw(&Text::new(label.as_str(), (px - base.0, py - base.1 + 6), style)).map_err(fail)?;
        }
        for (i, label) in self.y_ticks.iter().enumerate() {
            let (px, py) = pixel(-0.5, i as f64);
            let style = tick.clone().pos(Pos::new(HPos::Right, VPos::Center));
            area.draw(&Text::new(label.as_str(), (px - base.0 - 6, py - base.1), style)).map_err(fail)?;
        }
        Ok(())
    }

    /// The fluid limit's boundary: a black segment on every edge between two neighbouring cells whose fluid
    /// verdicts differ.
    fn draw_fluid_boundary<DB: DrawingBackend>(
        &self,
        panel: &HeatPanel,
        plot: &mut ChartContext<
            '_,
            DB,
            Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
        >,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let nx = self.x_ticks.len();
        let verdict = |index: usize| panel.cells.get(index).and_then(|cell| cell.as_ref()?.fluid_stuck);
        let mut edges = Vec::new();
        for index in 0..panel.cells.len() {
            let (x, y) = ((index % nx) as f64, (index / nx) as f64);
            let Some(here) = verdict(index) else { continue };
            if index % nx + 1 < nx && verdict(index + 1).is_some_and(|right| right != here) {
                edges.push([(x + 0.5, y - 0.5), (x + 0.5, y + 0.5)]);
            }
            if verdict(index + nx).is_some_and(|above| above != here) {
                edges.push([(x - 0.5, y + 0.5), (x + 0.5, y + 0.5)]);
            }
        }
        plot.draw_series(edges.into_iter().map(|edge| PathElement::new(edge.to_vec(), BLACK.stroke_width(4))))?;
        Ok(())
    }

    /// A vertical colour bar with the scale's values, and swatches for "never" and "n/a" when they occur.
    fn draw_legend<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let cells = || self.panels.iter().flat_map(|p| p.cells.iter().flatten());
        let swatches: Vec<(RGBColor, &str)> = [
            (NEVER, "never recovered", cells().any(|c| c.mean.is_nan() && c.never)),
            (UNDEFINED, "n/a (undefined)", cells().any(|c| c.mean.is_nan() && !c.never)),
        ]
        .into_iter()
        .filter_map(|(colour, label, present)| present.then_some((colour, label)))
        .collect();
        let (_, height) = area.dim_in_pixel();
        let swatch_space = 36 * swatches.len() as u32 + 20;
        let (bar_area, swatch_area) = area.split_vertically(height.saturating_sub(swatch_space));
        let (lo, hi) = if self.range.0 < self.range.1 {
            self.range
        } else if self.range.0.is_finite() {
            (self.range.0 - 0.5, self.range.0 + 0.5)
        } else {
            (0.0, 1.0)
        };
        let mut plot = ChartBuilder::on(&bar_area)
            .margin_top(40)
            .margin_bottom(10)
            .margin_right(60)
            .caption(self.metric, (FONT, 15))
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..1.0, lo..hi)
            .map_err(fail)?;
        plot.configure_mesh()
            .disable_mesh()
            .disable_x_axis()
            .y_labels(6)
            .label_style((FONT, 13))
            .y_label_formatter(&|v| short_number(*v))
            .draw()
            .map_err(fail)?;
        let steps = 120;
        plot.draw_series((0..steps).map(|i| {
            let (a, b) = (i as f64 / steps as f64, (i + 1) as f64 / steps as f64);
            let (v0, v1) = (lo + (hi - lo) * a, lo + (hi - lo) * b);
            Rectangle::new([(0.0, v0), (1.0, v1)], self.colour((v0 + v1) / 2.0).filled())
        }))
        .map_err(fail)?;
        for (i, (colour, label)) in swatches.iter().enumerate() {
            let top = 10 + 36 * i as i32;
            swatch_area.draw(&Rectangle::new([(12, top), (40, top + 24)], colour.filled())).map_err(fail)?;
            let style = (FONT, 14).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
            swatch_area.draw(&Text::new(*label, (48, top + 12), style)).map_err(fail)?;
        }
        Ok(())
    }
}

/// Per point, the fluid limit's stuck verdict, for the points `pins` admits that have a fluid form and a verdict;
/// computed in parallel, each a pure function of its point.
fn fluid_verdicts(scenario: &Scenario, points: &[PlannedPoint], pins: &Pins) -> Vec<Option<bool>> {
    use rayon::prelude::*;
    let settings = crate::analysis::fluid::StepSettings { bucket: scenario.timeline_bucket, step: None, scale: 1.0 };
    points
        .par_iter()
        .map(|point| {
            let crate::model::Configured::Server(config) = &point.config.0 else { return None };
            if !pins.admit(point) {
                return None;
            }
            let fluid = crate::analysis::fluid::FluidPoint::new(config, settings).ok()?;
            let verdict = fluid.verdict(&fluid.integrate(), scenario.timeline_bucket);
            (!verdict.stuck.is_nan()).then_some(verdict.stuck == 1.0)
        })
        .collect()
}

/// Perceived brightness, 0 to 255 (ITU-R BT.601 weights).
fn luminance(colour: RGBColor) -> f64 {
    0.299 * f64::from(colour.0) + 0.587 * f64::from(colour.1) + 0.114 * f64::from(colour.2)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::scenario::plan;
    use crate::stats::Estimate;

    const SCENARIO: &str = r#"schema_version = 1
replicates = 2
[model]
kind = "server"
workers = 2
outage_start = "1s"
[workload]
kind = "open"
[client]
timeout = "200ms"
[sweep]
limiter = ["none", "budget"]
rate = [150, 50]
outage_duration = ["0s", "500ms"]
[charts]
heatmap = { x = "outage_duration", y = "rate", metric = "recovery_ms" }
"#;

    /// Every point recovered in 10 ms, except: rate 150 without a limiter after 500 ms never recovers, and rate
    /// 50 without a limiter after 500 ms recovers in one replicate of two (in 40 ms).
    fn aggregate(scenario: &Scenario, points: &[PlannedPoint]) -> Aggregate {
        let model = scenario.model;
        let (recovery, recovered) =
            (model.metric_index("recovery_ms").unwrap(), model.metric_index("recovered").unwrap());
        let summary = points
            .iter()
            .map(|point| {
                let mut estimates = vec![Estimate::symmetric(1.0, 0.0, 0.0); model.metrics().len()];
                let key = point.swept.iter().map(ToString::to_string).collect::<Vec<_>>().join("/");
                let (ms, fraction) = match key.as_str() {
                    "none/150/500ms" => (f64::NAN, 0.0),
                    "none/50/500ms" => (40.0, 0.5),
                    _ => (10.0, 1.0),
                };
                estimates[recovery].mean = ms;
                estimates[recovered].mean = fraction;
                estimates
            })
            .collect();
        Aggregate { summary, ..Aggregate::default() }
    }

    #[test]
    fn cells_follow_the_axes_and_say_never_or_how_many_recovered() {
        let scenario = Scenario::from_source(Path::new("h.toml"), SCENARIO.to_owned()).unwrap();
        let points = plan(&scenario).unwrap();
        let heatmap =
            Heatmap::build(&scenario, &points, &aggregate(&scenario, &points), &scenario.charts.heatmaps[0]).unwrap();
        assert_eq!(heatmap.x_ticks, ["0s", "500ms"]);
        assert_eq!(heatmap.y_ticks, ["50", "150"], "numbers increase upwards whatever the sweep order");
        let labels: Vec<&str> = heatmap.panels.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["limiter=none", "limiter=budget"]);
        assert_eq!(heatmap.range, (10.0, 40.0), "the colour scale spans the defined means");
        let cell = |panel: usize, x: usize, y: usize| heatmap.panels[panel].cells[y * 2 + x].clone().unwrap();
        assert!(cell(0, 1, 1).never && cell(0, 1, 1).mean.is_nan(), "150/s after 500 ms never recovered");
        assert_eq!(cell(0, 1, 0), Cell { mean: 40.0, never: false, partial: Some("1/2".into()), fluid_stuck: None });
        assert_eq!(cell(0, 0, 1), Cell { mean: 10.0, never: false, partial: None, fluid_stuck: None });
        assert_eq!(
            cell(1, 1, 1),
            Cell { mean: 10.0, never: false, partial: None, fluid_stuck: None },
            "the budget panel"
        );
        assert!(heatmap.subtitle.contains("never: none did"), "{}", heatmap.subtitle);
    }

    #[test]
    fn the_fluid_line_separates_the_cells_the_fluid_limit_calls_stuck_where_it_has_a_form() {
        let text = SCENARIO
            .replace(
                "heatmap = { x = \"outage_duration\", y = \"rate\", metric = \"recovery_ms\" }",
                "heatmap = { x = \"outage_duration\", y = \"rate\", metric = \"recovery_ms\", fluid = true }",
            )
            .replace("[client]\n", "[client]\nmax_attempts = 3\n")
            .replace("kind = \"open\"\n", "kind = \"open\"\nduration = \"30s\"\n")
            .replace("limiter = [\"none\", \"budget\"]", "limiter = [\"none\", \"grpc\"]");
        let scenario = Scenario::from_source(Path::new("h.toml"), text).unwrap();
        let points = plan(&scenario).unwrap();
        let options = &scenario.charts.heatmaps[0];
        assert!(options.fluid && points.len() == 8);
        let heatmap = Heatmap::build(&scenario, &points, &aggregate(&scenario, &points), options).unwrap();
        let fluid =
            |panel: usize, x: usize, y: usize| heatmap.panels[panel].cells[y * 2 + x].clone().unwrap().fluid_stuck;
        // Capacity 200/s; three attempts of 200 ms. At 150/s a 500 ms black hole leaves 75 requests whose retries
        // triple the load past capacity: stuck. At 50/s the backlog drains; without an outage nothing tips.
        assert_eq!(
            [fluid(0, 0, 0), fluid(0, 1, 0), fluid(0, 0, 1), fluid(0, 1, 1)],
            [Some(false), Some(false), Some(false), Some(true)]
        );
        assert!(
            (0..4).all(|i| heatmap.panels[1].cells[i].as_ref().unwrap().fluid_stuck.is_none()),
            "gRPC's throttle has no fluid form"
        );
        assert!(heatmap.subtitle.contains("black line: where the fluid limit turns stuck"), "{}", heatmap.subtitle);
    }

    #[test]
    fn a_metric_undefined_in_every_cell_for_no_reason_a_cell_shows_draws_no_heatmap() {
        let scenario = Scenario::from_source(Path::new("h.toml"), SCENARIO.to_owned()).unwrap();
        let points = plan(&scenario).unwrap();
        let mut aggregate = aggregate(&scenario, &points);
        let recovery = scenario.model.metric_index("recovery_ms").unwrap();
        let options = &scenario.charts.heatmaps[0];
        for estimates in &mut aggregate.summary {
            estimates[recovery].mean = f64::NAN;
        }
        // "never" cells (none of the replicates recovered at 150/s after 500 ms) still say something.
        assert!(Heatmap::build(&scenario, &points, &aggregate, options).is_some());
        let recovered = scenario.model.metric_index("recovered").unwrap();
        for estimates in &mut aggregate.summary {
            estimates[recovered].mean = f64::NAN;
        }
        assert!(Heatmap::build(&scenario, &points, &aggregate, options).is_none());
    }

    #[test]
    fn the_colour_scale_runs_from_dark_to_yellow_and_text_stays_readable() {
        let heatmap = Heatmap {
            title: String::new(),
            subtitle: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            metric: "m",
            x_ticks: vec![],
            y_ticks: vec![],
            panels: vec![],
            range: (10.0, 20.0),
        };
        assert_eq!(heatmap.colour(10.0), RGBColor(68, 1, 84));
        assert_eq!(heatmap.colour(20.0), RGBColor(253, 231, 37));
        assert_eq!(heatmap.colour(15.0), RGBColor(33, 145, 140));
        assert_eq!(heatmap.colour(99.0), heatmap.colour(20.0), "clamped");
        assert!(luminance(heatmap.colour(10.0)) < 140.0 && luminance(heatmap.colour(20.0)) > 140.0);
        assert!(luminance(NEVER) < 140.0, "white text on the never colour");
    }
}
