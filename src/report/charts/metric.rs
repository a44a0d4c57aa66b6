//! A metric's chart: its mean against the sweep's numeric x axis with CI bands (small multiples when needed), or
//! bars when nothing numeric is swept.

use super::lines::{MAX_LINES, Sample, few, lay_out};
use super::over_time::dwarfed_note;
use super::pins::Pins;
use super::text::{TimeUnit, metric_phrase, metric_scale, title_by};
use super::{Bar, Chart, Frame, LinesChart, Spread, unit_range};
use crate::params::Value;
use crate::report::aggregate::Aggregate;
use crate::report::grouped_bars::{BarSeries, GroupedBars};
use crate::scenario::{PlannedPoint, Scenario, SweepAxis, YScale};

/// The swept axis on the x axis: the one `[charts] x` names, else the first numeric one.
pub(super) fn x_axis(scenario: &Scenario) -> Option<usize> {
    let numeric = |axis: &SweepAxis| axis.values.iter().all(|v| v.as_axis_number().is_some());
    match scenario.charts.x.and_then(|key| scenario.sweep.iter().position(|axis| axis.name == key)) {
        Some(index) if numeric(&scenario.sweep[index]) => Some(index),
        _ => scenario.sweep.iter().position(numeric),
    }
}

/// How an x axis of swept values is numbered: durations in the time unit their largest value calls for.
pub(in crate::report) struct XScale {
    pub unit: Option<TimeUnit>,
}

impl XScale {
    fn of(axis: &SweepAxis) -> XScale {
        let durations = axis.values.iter().all(|v| matches!(v, Value::Duration(_)));
        let largest = axis.values.iter().filter_map(Value::as_axis_number).fold(0.0, f64::max);
        XScale { unit: durations.then(|| TimeUnit::for_span(largest)) }
    }

    /// `value` (a number, or a duration in ms) in the axis's unit.
    pub(in crate::report) fn number(&self, value: f64) -> f64 {
        self.unit.map_or(value, |unit| value / unit.ms())
    }

    /// The axis title: the key, and the unit for durations ("outage_duration (ms)").
    pub(in crate::report) fn title(&self, key: &str) -> String {
        self.unit.map_or_else(|| key.to_owned(), |unit| format!("{key} ({})", unit.symbol()))
    }
}

/// The chart of `metric` at every point (the axes `[charts] at` pins held at their value), or `None` when the
/// metric is undefined everywhere (left out of summary.csv: no run could fill it).
pub(super) fn metric_chart(
    scenario: &Scenario,
    points: &[PlannedPoint],
    aggregate: &Aggregate,
    x_axis: Option<usize>,
    metric: &str,
) -> Option<Chart> {
    let metric_index = scenario.model.metric_index(metric)?;
    let spec = &scenario.model.metrics()[metric_index];
    if aggregate.summary.iter().all(|estimates| estimates[metric_index].mean.is_nan()) {
        return None;
    }
    let pins = Pins::new(scenario, &scenario.charts.at, |i| Some(i) != x_axis, false);
    let admitted: Vec<usize> = (0..points.len()).filter(|&i| pins.admit(&points[i])).collect();
    let free: Vec<usize> = (0..scenario.sweep.len()).filter(|&i| Some(i) != x_axis && !pins.pinned(i)).collect();
    let spread = |point: usize| Spread::of(&aggregate.summary[point][metric_index]);
    let largest = admitted.iter().map(|&p| spread(p).high).filter(|v| v.is_finite()).fold(0.0, f64::max);
    let (y_label, divisor) = metric_scale(spec, largest);
    let value = |point: usize| spread(point).scaled(divisor);
    let at_text = pins.at_text(scenario).trim_start().to_owned();
    let mut notes: Vec<String> = Vec::new();
    if !at_text.is_empty() {
        notes.push(at_text);
    }
    notes.push(format!("{}: {}", spec.name, replicates_note(scenario.replicates)));
    // An interval is claimed only where one is drawn (one replicate has none, except a share of runs' Wilson's).
    let drawn = admitted.iter().any(|&p| spread(p).has_interval());
    let interval = |drawn_as: &str| drawn.then(|| format!("{drawn_as}: 95% CI"));
    let Some(x_index) = x_axis else {
        notes.extend(interval("whiskers"));
        if scenario.charts.y_scale == YScale::Linear {
            let peaks: Vec<(String, f64)> =
                admitted.iter().map(|&p| (line_label(scenario, &points[p], &free), value(p).mean)).collect();
            notes.extend(dwarfed_note(&peaks));
        }
        let keys: Vec<&str> = free.iter().map(|&i| scenario.sweep[i].name).collect();
        let frame = Frame {
            title: title_by(&scenario.name, &metric_phrase(spec), &keys.join(" and ")),
            subtitle: notes.join(" · "),
            x_label: String::new(),
            y_label,
        };
        return Some(bars_chart(scenario, points, &admitted, &free, frame, &value));
    };
    let x_key = scenario.sweep[x_index].name;
    let scale = XScale::of(&scenario.sweep[x_index]);
    let names: Vec<String> = free.iter().map(|&i| scenario.sweep[i].name.to_owned()).collect();
    let series_axis = scenario.charts.series.and_then(|key| free.iter().position(|&i| scenario.sweep[i].name == key));
    let samples: Vec<Sample> = admitted
        .iter()
        .map(|&p| Sample {
            dims: free.iter().map(|&i| points[p].swept[i].to_string()).collect(),
            x: scale.number(points[p].swept[x_index].as_axis_number().unwrap_or(0.0)),
            y: value(p),
            tag: p,
        })
        .collect();
    let label = |pairs: &[(usize, &str)]| match pairs {
        [] => scenario.name.clone(),
        [(_, value)] => (*value).to_owned(),
        _ => pairs.iter().map(|(d, v)| format!("{}={v}", names[*d])).collect::<Vec<_>>().join(", "),
    };
    let mut layout = lay_out(&names, series_axis, &samples, &label);
    for line in layout.panels.iter_mut().flat_map(|panel| panel.lines.iter_mut()) {
        // The analytic curve, drawn densely between the first and last simulated x of the line.
        let (Some(first), Some(last)) = (line.points.first().map(|p| p.x), line.points.last().map(|p| p.x)) else {
            continue;
        };
        let config = &points[line.tag].config;
        let ms = scale.unit.map_or(1.0, TimeUnit::ms);
        line.theory = (0..=200)
            .map(|i| first + (last - first) * f64::from(i) / 200.0)
            .map_while(|x| config.theory(metric, x_key, x * ms).map(|y| (x, y)))
            .collect();
    }
    notes.extend(interval("band"));
    if layout.panels.iter().flat_map(|panel| &panel.lines).any(|line| !line.theory.is_empty()) {
        notes.push("black: theory".into());
    }
    if let Some(facet) = layout.facet {
        notes.push(format!("one panel per {} (more than {MAX_LINES} lines)", names[facet]));
    }
    if scenario.charts.y_scale == YScale::Linear {
        let lines = || layout.panels.iter().flat_map(|panel| &panel.lines);
        let peaks: Vec<(String, f64)> = (0..layout.series.len())
            .map(|series| {
                let means = lines().filter(|line| line.series == series).flat_map(|line| &line.points);
                (layout.series[series].clone(), means.map(|p| p.y.mean).filter(|y| y.is_finite()).fold(0.0, f64::max))
            })
            .collect();
        notes.extend(dwarfed_note(&peaks));
    }
    if !layout.left_out.is_empty() {
        notes.push(format!(
            "{} of {} lines drawn; left out: {}; pin parameters with [charts] at = {{ … }}",
            layout.series.len(),
            layout.series.len() + layout.left_out.len(),
            few(&layout.left_out)
        ));
    }
    let legend_title = match layout.line_dims.as_slice() {
        [only] => names[*only].clone(),
        _ => String::new(),
    };
    let domain_top = unit_range(spec.unit).1 / divisor;
    Some(Chart::Lines(LinesChart {
        frame: Frame {
            title: title_by(&scenario.name, &metric_phrase(spec), x_key),
            subtitle: notes.join(" · "),
            x_label: scale.title(x_key),
            y_label,
        },
        legend_title,
        series: std::mem::take(&mut layout.series),
        panels: layout.panels,
        y_ceiling: domain_top,
    }))
}

/// "mean of 8 replicates", or "1 replicate".
pub(in crate::report) fn replicates_note(replicates: u32) -> String {
    if replicates > 1 { format!("mean of {replicates} replicates") } else { "1 replicate".to_owned() }
}

/// A point's label over the `free` axes: the value alone for one axis, `key=value` pairs for more, the
/// scenario's name for none.
fn line_label(scenario: &Scenario, point: &PlannedPoint, free: &[usize]) -> String {
    match free {
        [] => scenario.name.clone(),
        [i] => point.swept[*i].to_string(),
        _ => free
            .iter()
            .map(|&i| format!("{}={}", scenario.sweep[i].name, point.swept[i]))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// A metric's chart when nothing numeric is swept, around `frame` (its x title is filled in here): one bar per
/// point when one parameter (or none) is free;
/// with more, grouped bars: one colour per value of the series parameter (`[charts] series`, else the last free
/// one), one group per combination of the others.
fn bars_chart(
    scenario: &Scenario,
    points: &[PlannedPoint],
    admitted: &[usize],
    free: &[usize],
    mut frame: Frame,
    value: &dyn Fn(usize) -> Spread,
) -> Chart {
    if free.len() < 2 {
        let bars = admitted.iter().map(|&p| Bar { label: line_label(scenario, &points[p], free), value: value(p) });
        frame.x_label = free.iter().map(|&i| scenario.sweep[i].name).collect();
        return Chart::Bars { frame, bars: bars.collect() };
    }
    let named = scenario.charts.series.and_then(|key| free.iter().copied().find(|&i| scenario.sweep[i].name == key));
    let series_axis = named.unwrap_or(free[free.len() - 1]);
    let group_axes: Vec<usize> = free.iter().copied().filter(|&i| i != series_axis).collect();
    let mut groups: Vec<String> = Vec::new();
    let mut series: Vec<BarSeries> = Vec::new();
    for &p in admitted {
        let point = &points[p];
        let group = line_label(scenario, point, &group_axes);
        let group_index = match groups.iter().position(|g| *g == group) {
            Some(index) => index,
            None => {
                groups.push(group);
                groups.len() - 1
            }
        };
        let label = point.swept[series_axis].to_string();
        let index = match series.iter().position(|s| s.label == label) {
            Some(index) => index,
            None => {
                series.push(BarSeries { label, values: Vec::new() });
                series.len() - 1
            }
        };
        let values = &mut series[index].values;
        values.resize(values.len().max(group_index + 1), None);
        values[group_index] = Some(value(p));
    }
    Chart::GroupedBars(GroupedBars {
        title: frame.title,
        subtitle: frame.subtitle,
        y_label: frame.y_label,
        x_label: group_axes.iter().map(|&i| scenario.sweep[i].name).collect::<Vec<_>>().join(", "),
        legend_title: scenario.sweep[series_axis].name.to_owned(),
        groups,
        series,
    })
}
