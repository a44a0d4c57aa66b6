//! The grouped bar chart (`[charts.bars]`): one group per metric along x, one bar per value of the series
//! parameter in each group, each bar the metric's mean over replicates with a whisker of ± its 95% CI
//! half-width. The other swept parameters are pinned by `at`, or to the middle of their axis.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::aggregate::Aggregate;
use super::charts::{DrawResult, FONT, GREY, GRID, PALETTE, Pins, short_number};
use super::tables::format_number;
use crate::scenario::{BarsOptions, PlannedPoint, Scenario};
use crate::stats::Estimate;

/// Fraction of a group's width the bars take (the rest separates groups).
const GROUP_FILL: f64 = 0.8;

/// One colour of bars: a series value and its estimate for each metric.
struct Series {
    label: String,
    estimates: Vec<Estimate>,
}

pub(super) struct GroupedBars {
    pub title: String,
    subtitle: String,
    y_label: String,
    groups: Vec<&'static str>,
    series: Vec<Series>,
}

/// The metrics' common help with its numbers replaced by k ("calls reaching layer k per user request") when
/// they differ only in numbers; otherwise a generic label.
fn common_help(helps: &[&str]) -> String {
    let generic = |help: &str| {
        let mut out = String::new();
        for c in help.chars() {
            if !c.is_ascii_digit() {
                out.push(c);
            } else if !out.ends_with('k') {
                out.push('k');
            }
        }
        out
    };
    match helps {
        [one] => (*one).to_owned(),
        [first, rest @ ..] if rest.iter().all(|h| generic(h) == generic(first)) => generic(first),
        _ => "mean value".to_owned(),
    }
}

impl GroupedBars {
    /// The chart `options` asks for; a series that `--set` removed from the sweep becomes a single colour.
    pub(super) fn build(
        scenario: &Scenario,
        points: &[PlannedPoint],
        aggregate: &Aggregate,
        options: &BarsOptions,
    ) -> GroupedBars {
        let series_axis = options.series.and_then(|key| scenario.sweep.iter().position(|a| a.name == key));
        let pins = Pins::new(scenario, &options.at, |i| Some(i) != series_axis, true);
        let indices: Vec<usize> = options.metrics.iter().filter_map(|m| scenario.model.metric_index(m)).collect();
        let series = points
            .iter()
            .zip(&aggregate.summary)
            .filter(|(point, _)| pins.admit(point))
            .map(|(point, estimates)| Series {
                label: series_axis.map_or_else(|| scenario.name.clone(), |i| point.swept[i].to_string()),
                estimates: indices.iter().map(|&i| estimates[i]).collect(),
            })
            .collect();
        let metrics = scenario.model.metrics();
        let helps: Vec<&str> = indices.iter().map(|&i| metrics[i].help).collect();
        let groups: Vec<&'static str> = indices.iter().map(|&i| metrics[i].name).collect();
        let what = match groups.as_slice() {
            [one] => (*one).to_owned(),
            [first, .., last] if groups.len() > 2 => format!("{first} … {last}"),
            _ => groups.join(" and "),
        };
        let by = series_axis.map_or_else(String::new, |i| format!(" by {}", scenario.sweep[i].name));
        let at_text = pins.at_text(scenario);
        let at_text = at_text.trim_start();
        let separator = if at_text.is_empty() { "" } else { " · " };
        GroupedBars {
            title: format!("{}: {what}{by}", scenario.name),
            subtitle: format!("{at_text}{separator}mean of {} replicates; whiskers: 95% CI", scenario.replicates),
            y_label: common_help(&helps),
            groups,
            series,
        }
    }

    /// Pixels: wider when there are many bars, so each stays wide enough for its label.
    pub(super) fn size(&self) -> (u32, u32) {
        let bars = (self.groups.len() * self.series.len().max(1)) as u32;
        ((160 + 48 * bars).max(1100), 680)
    }

    pub(super) fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let top = self
            .series
            .iter()
            .flat_map(|s| s.estimates.iter())
            .map(|e| e.mean + if e.ci95.is_finite() { e.ci95 } else { 0.0 })
            .filter(|v| v.is_finite())
            .fold(0.0_f64, f64::max);
        let y_max = if top > 0.0 { top * 1.12 } else { 1.0 };
        let groups = self.groups.len().max(1);
        let mut plot = ChartBuilder::on(area)
            .caption(&self.subtitle, (FONT, 16).into_font().color(&GREY))
            .margin(16)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d(-0.5..(groups as f64 - 0.5), 0.0..y_max)
            .map_err(fail)?;
        plot.configure_mesh()
            .y_desc(&self.y_label)
            .axis_desc_style((FONT, 18))
            .label_style((FONT, 15))
            .disable_x_mesh()
            .x_labels(0)
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .y_label_formatter(&|y| format_number(*y))
            .draw()
            .map_err(fail)?;
        let count = self.series.len().max(1);
        let width = GROUP_FILL / count as f64;
        let coordinates = plot.as_coord_spec().clone();
        let pixel = |x: f64, y: f64| coordinates.translate(&(x, y));
        let bar_pixels = (pixel(width, 0.0).0 - pixel(0.0, 0.0).0).unsigned_abs();
        let font = (f64::from(bar_pixels) / 3.2).min(15.0);
        for (s, series) in self.series.iter().enumerate() {
            let colour = PALETTE[s % PALETTE.len()];
            let bars: Vec<(f64, Estimate)> = series
                .estimates
                .iter()
                .enumerate()
                .map(|(g, e)| (g as f64 - GROUP_FILL / 2.0 + width * (s as f64 + 0.5), *e))
                .filter(|(_, e)| e.mean.is_finite())
                .collect();
            let rectangles = bars
                .iter()
                .map(|(x, e)| Rectangle::new([(x - width * 0.45, 0.0), (x + width * 0.45, e.mean)], colour.filled()));
            plot.draw_series(rectangles)
                .map_err(fail)?
                .label(series.label.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], colour.filled()));
            let whisker = BLACK.stroke_width(2);
            for (x, e) in bars.iter().filter(|(_, e)| e.ci95.is_finite() && e.ci95 > 0.0) {
                let (low, high, cap) = ((e.mean - e.ci95).max(0.0), e.mean + e.ci95, width * 0.15);
                plot.draw_series([
                    PathElement::new(vec![(*x, low), (*x, high)], whisker),
                    PathElement::new(vec![(x - cap, high), (x + cap, high)], whisker),
                    PathElement::new(vec![(x - cap, low), (x + cap, low)], whisker),
                ])
                .map_err(fail)?;
            }
            // Value labels only where they fit above their bar.
            if font >= 9.0 {
                let style = (FONT, font).into_font().color(&GREY).pos(Pos::new(HPos::Center, VPos::Bottom));
                let labels = bars.iter().map(|(x, e)| {
                    let above = e.mean + if e.ci95.is_finite() { e.ci95 } else { 0.0 };
                    Text::new(short_number(e.mean), (*x, above + y_max * 0.01), style.clone())
                });
                plot.draw_series(labels).map_err(fail)?;
            }
        }
        let base = area.get_base_pixel();
        for (g, name) in self.groups.iter().enumerate() {
            let (px, py) = pixel(g as f64, 0.0);
            let style = (FONT, 15).into_font().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Top));
            area.draw(&Text::new(*name, (px - base.0, py - base.1 + 8), style)).map_err(fail)?;
        }
        if self.series.len() > 1 {
            plot.configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .label_font((FONT, 16))
                .background_style(WHITE.mix(0.85))
                .border_style(RGBColor(180, 180, 180))
                .draw()
                .map_err(fail)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_that_differ_only_by_a_number_share_a_label() {
        let helps = ["calls reaching layer 1 per user request", "calls reaching layer 12 per user request"];
        assert_eq!(common_help(&helps), "calls reaching layer k per user request");
        assert_eq!(common_help(&["a thing"]), "a thing");
        assert_eq!(common_help(&["calls", "latency"]), "mean value");
    }
}
