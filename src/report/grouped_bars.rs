//! Grouped bar charts: groups along x, one bar per series in each group, each bar a mean with a whisker for its
//! 95% interval, the legend beside the plot.
//!
//! - `[charts.bars]`: one group per metric, one bar per value of the series parameter; the other swept
//!   parameters pinned by `at`, or to the middle of their axis.
//! - a metric's chart when nothing numeric is swept and two or more parameters are (`charts/metric.rs`).
//! - `retrylab compare` on a categorical sweep: one group per category, one bar per folder (`compare.rs`).

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::aggregate::Aggregate;
use super::charts::colours::assign;
use super::charts::text::{draw_headings, draw_y_title, metric_axis_title, tick_label};
use super::charts::{DrawResult, FONT, GREY, GRID, Legend, Pins, Spread, short_number};
use crate::model::{MetricSpec, Unit};
use crate::scenario::{BarsOptions, PlannedPoint, Scenario};

/// Fraction of a group's width the bars take (the rest separates groups).
const GROUP_FILL: f64 = 0.8;

/// One colour of bars: its legend entry and its value in each group (`None`: no bar there).
pub(super) struct BarSeries {
    pub label: String,
    pub values: Vec<Option<Spread>>,
}

pub(super) struct GroupedBars {
    pub title: String,
    pub subtitle: String,
    pub y_label: String,
    /// What the groups are (under the group labels), or empty.
    pub x_label: String,
    /// The legend's heading: what the series are.
    pub legend_title: String,
    pub groups: Vec<String>,
    pub series: Vec<BarSeries>,
}

/// The metrics' common help, without asides in parentheses and with its numbers replaced by k ("calls
/// reaching layer k per user request"), when they differ only in those; otherwise a generic label.
fn common_help(helps: &[&str]) -> String {
    let generic = |help: &str| {
        let mut out = String::new();
        let mut depth = 0;
        for c in help.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ if depth > 0 => {}
                '0'..='9' if out.ends_with('k') => {}
                '0'..='9' => out.push('k'),
                _ => out.push(c),
            }
        }
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    match helps {
        [one] => (*one).to_owned(),
        [first, rest @ ..] if rest.iter().all(|h| generic(h) == generic(first)) => generic(first),
        _ => "mean value".to_owned(),
    }
}

/// The y axis title of several metrics: the one metric's title, else the common help with the shared unit.
fn y_title(specs: &[&MetricSpec]) -> String {
    if let [one] = specs {
        return metric_axis_title(one);
    }
    let helps: Vec<&str> = specs.iter().map(|spec| spec.help).collect();
    let units: Vec<Unit> = specs.iter().map(|spec| spec.unit).collect();
    let help = common_help(&helps);
    match units.first() {
        // "per user request" already says it.
        Some(Unit::PerRequest) if help.ends_with("per user request") => help,
        Some(unit) if units.iter().all(|u| u == unit) && help != "mean value" => format!("{help} ({})", unit.label()),
        _ => help,
    }
}

impl GroupedBars {
    /// The chart `options` asks for, leaving out metrics undefined at every point (`None` if that is all of
    /// them); a series that `--set` removed from the sweep becomes a single colour.
    pub(super) fn build(
        scenario: &Scenario,
        points: &[PlannedPoint],
        aggregate: &Aggregate,
        options: &BarsOptions,
    ) -> Option<GroupedBars> {
        let series_axis = options.series.and_then(|key| scenario.sweep.iter().position(|a| a.name == key));
        let pins = Pins::new(scenario, &options.at, |i| Some(i) != series_axis, true);
        let metrics = scenario.model.metrics();
        let indices: Vec<usize> = options
            .metrics
            .iter()
            .filter_map(|m| scenario.model.metric_index(m))
            .filter(|&i| aggregate.summary.iter().any(|estimates| !estimates[i].mean.is_nan()))
            .collect();
        if indices.is_empty() {
            return None;
        }
        let series: Vec<BarSeries> = points
            .iter()
            .zip(&aggregate.summary)
            .filter(|(point, _)| pins.admit(point))
            .map(|(point, estimates)| BarSeries {
                label: series_axis.map_or_else(|| scenario.name.clone(), |i| point.swept[i].to_string()),
                values: indices.iter().map(|&i| Some(Spread::of(&estimates[i]))).collect(),
            })
            .collect();
        let specs: Vec<&MetricSpec> = indices.iter().map(|&i| &metrics[i]).collect();
        let groups: Vec<String> = specs.iter().map(|spec| spec.name.to_owned()).collect();
        let what = match groups.as_slice() {
            [one] => one.clone(),
            [first, .., last] if groups.len() > 2 => format!("{first} … {last}"),
            _ => groups.join(" and "),
        };
        let series_key = series_axis.map(|i| scenario.sweep[i].name);
        let by = series_key.map_or_else(String::new, |key| format!(" by {key}"));
        let at_text = pins.at_text(scenario);
        let at_text = at_text.trim_start();
        let separator = if at_text.is_empty() { "" } else { " · " };
        let drawn = series.iter().flat_map(|s| s.values.iter().flatten()).any(Spread::has_interval);
        let interval = if drawn { "; whiskers: 95% CI" } else { "" };
        let replicates = match scenario.replicates {
            1 => "1 replicate".to_owned(),
            n => format!("mean of {n} replicates"),
        };
        Some(GroupedBars {
            title: format!("{}: {what}{by}", scenario.name),
            subtitle: format!("{at_text}{separator}{replicates}{interval}"),
            y_label: y_title(&specs),
            x_label: String::new(),
            legend_title: series_key.unwrap_or_default().to_owned(),
            groups,
            series,
        })
    }

    fn legend(&self) -> Legend<'_> {
        // One series named after nothing but the scenario needs no legend.
        let entries = if self.series.len() > 1 || !self.legend_title.is_empty() {
            self.series.iter().map(|s| s.label.as_str()).collect()
        } else {
            Vec::new()
        };
        Legend { title: &self.legend_title, entries, keys: Vec::new(), bars: true }
    }

    /// Pixels: wider when there are many bars, so each stays wide enough for its label; the legend beside.
    pub(super) fn size(&self) -> (u32, u32) {
        let bars = (self.groups.len() * self.series.len().max(1)) as u32;
        ((160 + 48 * bars).clamp(1100, 2400) + self.legend().width(), 680)
    }

    /// Draws the headings, the bars with their whiskers and value labels, the group labels and the legend.
    pub(super) fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let body = draw_headings(root, &self.title, &self.subtitle)?;
        let (width, _) = body.dim_in_pixel();
        let legend = self.legend();
        let (body, legend_area) = body.split_horizontally(width - legend.width());
        legend.draw(&legend_area, 24)?;
        let (y_title, area) = body.split_horizontally(36);
        draw_y_title(&y_title, &self.y_label, 8, 18.0)?;
        let values = || self.series.iter().flat_map(|s| s.values.iter().flatten());
        let top = values().map(|v| v.high.max(v.mean)).filter(|v| v.is_finite()).fold(0.0_f64, f64::max);
        let y_max = if top > 0.0 { top * 1.12 } else { 1.0 };
        let groups = self.groups.len().max(1);
        let mut plot = ChartBuilder::on(&area)
            .margin(16)
            .margin_left(4)
            .x_label_area_size(if self.x_label.is_empty() { 40 } else { 66 })
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..(groups as f64 - 0.5), 0.0..y_max)
            .map_err(fail)?;
        plot.configure_mesh()
            .label_style((FONT, 15))
            .disable_x_mesh()
            .x_labels(0)
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .y_label_formatter(&|y| tick_label(*y))
            .draw()
            .map_err(fail)?;
        let count = self.series.len().max(1);
        let width = GROUP_FILL / count as f64;
        let coordinates = plot.as_coord_spec().clone();
        let pixel = |x: f64, y: f64| coordinates.translate(&(x, y));
        let bar_pixels = (pixel(width, 0.0).0 - pixel(0.0, 0.0).0).unsigned_abs();
        let font = (f64::from(bar_pixels) / 3.2).min(15.0);
        let labels: Vec<&str> = self.series.iter().map(|s| s.label.as_str()).collect();
        for ((s, series), colour) in self.series.iter().enumerate().zip(assign(&labels)) {
            let bars: Vec<(f64, Spread)> = series
                .values
                .iter()
                .enumerate()
                .filter_map(|(g, v)| v.map(|v| (g as f64 - GROUP_FILL / 2.0 + width * (s as f64 + 0.5), v)))
                .filter(|(_, v)| v.mean.is_finite())
                .collect();
            let rectangles = bars
                .iter()
                .map(|(x, v)| Rectangle::new([(x - width * 0.45, 0.0), (x + width * 0.45, v.mean)], colour.filled()));
            plot.draw_series(rectangles).map_err(fail)?;
            let whisker = BLACK.stroke_width(2);
            for (x, v) in bars.iter().filter(|(_, v)| v.high > v.low) {
                let cap = width * 0.15;
                plot.draw_series([
                    PathElement::new(vec![(*x, v.low), (*x, v.high)], whisker),
                    PathElement::new(vec![(x - cap, v.high), (x + cap, v.high)], whisker),
                    PathElement::new(vec![(x - cap, v.low), (x + cap, v.low)], whisker),
                ])
                .map_err(fail)?;
            }
            // Value labels only where they fit above their bar.
            if font >= 9.0 {
                let style = (FONT, font).into_font().color(&GREY).pos(Pos::new(HPos::Center, VPos::Bottom));
                let labels = bars.iter().map(|(x, v)| {
                    let above = v.high.max(v.mean);
                    Text::new(short_number(v.mean), (*x, above + y_max * 0.01), style.clone())
                });
                plot.draw_series(labels).map_err(fail)?;
            }
        }
        let base = area.get_base_pixel();
        for (g, name) in self.groups.iter().enumerate() {
            let (px, py) = pixel(g as f64, 0.0);
            let style = (FONT, 15).into_font().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Top));
            area.draw(&Text::new(name.as_str(), (px - base.0, py - base.1 + 8), style)).map_err(fail)?;
        }
        if !self.x_label.is_empty() {
            let (left, _) = pixel(-0.5, 0.0);
            let (right, bottom) = pixel(groups as f64 - 0.5, 0.0);
            let style = (FONT, 18).into_font().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Top));
            let at = ((left + right) / 2 - base.0, bottom - base.1 + 34);
            area.draw(&Text::new(self.x_label.as_str(), at, style)).map_err(fail)?;
        }
        Ok(())
    }
}

/// One bar per candidate of `retrylab tune`, best first: each its objective's mean with a whisker for its 95%
/// interval (`(label, mean, low, high)`), written as `stem.svg` and `stem.png`.
pub(crate) fn draw_candidates(
    title: String,
    subtitle: String,
    y_label: String,
    bars: Vec<(String, f64, f64, f64)>,
    stem: &std::path::Path,
) -> Result<Vec<std::path::PathBuf>, crate::Error> {
    let series = bars
        .into_iter()
        .map(|(label, mean, low, high)| BarSeries { label, values: vec![Some(Spread { mean, low, high })] })
        .collect();
    let bars = GroupedBars {
        title,
        subtitle,
        y_label,
        x_label: String::new(),
        legend_title: "candidates, best first".into(),
        groups: vec![String::new()],
        series,
    };
    super::charts::draw_grouped_bars(bars, stem)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::scenario::plan;
    use crate::stats::Estimate;

    /// A 2-layer chain's ledger asked for 3 layers: the third column is left out of summary.csv (NaN here).
    #[test]
    fn metrics_undefined_everywhere_are_left_out_and_a_chart_of_only_those_is_not_drawn() {
        let text = r#"schema_version = 1
[model]
kind = "layers"
layers = 2
[sweep]
limiter = ["none", "budget"]
[charts.bars]
metrics = ["amplification_l1", "amplification_l2", "amplification_l3"]
series = "limiter"
"#;
        let scenario = Scenario::from_source(Path::new("b.toml"), text.to_owned()).unwrap();
        let points = plan(&scenario).unwrap();
        let model = scenario.model;
        let third = model.metric_index("amplification_l3").unwrap();
        let summary = points
            .iter()
            .map(|_| {
                let mut estimates = vec![Estimate::symmetric(2.0, 0.0, 0.5); model.metrics().len()];
                estimates[third] = Estimate::UNDEFINED;
                estimates
            })
            .collect();
        let aggregate = Aggregate { summary, ..Aggregate::default() };
        let options = &scenario.charts.bars[0];
        let bars = GroupedBars::build(&scenario, &points, &aggregate, options).unwrap();
        assert_eq!(bars.groups, ["amplification_l1", "amplification_l2"]);
        assert_eq!(bars.series.len(), 2);
        assert_eq!(bars.series[0].values[0], Some(Spread { mean: 2.0, low: 1.5, high: 2.5 }));
        let mut only_the_third = options.clone();
        only_the_third.metrics = vec!["amplification_l3"];
        assert!(GroupedBars::build(&scenario, &points, &aggregate, &only_the_third).is_none());
    }

    #[test]
    fn metrics_that_differ_only_by_a_number_share_a_label() {
        let helps = ["calls reaching layer 1 per user request", "calls reaching layer 12 per user request"];
        assert_eq!(common_help(&helps), "calls reaching layer k per user request");
        assert_eq!(common_help(&["a thing"]), "a thing");
        let asides = [
            "attempts reaching service 1 (the entry) per user request",
            "attempts reaching service 2 per user request",
        ];
        assert_eq!(common_help(&asides), "attempts reaching service k per user request");
        assert_eq!(common_help(&["calls", "latency"]), "mean value");
    }

    #[test]
    fn the_y_title_names_the_shared_unit() {
        let spec = |name, help| MetricSpec { name, help, unit: Unit::PerRequest, formerly: None };
        let (one, two) = (spec("amplification_l1", "calls at 1"), spec("amplification_l2", "calls at 2"));
        assert_eq!(y_title(&[&one, &two]), "calls at k (per request)");
        assert_eq!(y_title(&[&one]), "amplification l1 (per request)");
        let other = MetricSpec { name: "x", help: "something else", unit: Unit::Count, formerly: None };
        assert_eq!(y_title(&[&one, &other]), "mean value");
    }
}
