//! Which sweep points a chart draws: the swept parameters it pins to one value ([`Pins`]) and the points of the
//! over-time charts ([`Focus`]).

use crate::params::Value;
use crate::scenario::{PlannedPoint, Scenario};

/// The points the over-time charts show: one per value of the series axis (the first non-numeric axis unless
/// `[charts] series` says otherwise), the other axes at `[charts] timeline_at` or their middle value.
pub(super) struct Focus {
    /// `(point index, label)` in sweep order: the series value, with its key when it is a number.
    pub points: Vec<(usize, String)>,
    /// Per point, the name its colour comes from: the series value alone (as a metric chart's legend writes
    /// it), or the scenario's name.
    pub keys: Vec<String>,
    /// The swept parameter whose values label the points, if any.
    pub series_name: Option<&'static str>,
    /// "at clients=100", or empty.
    pub at_text: String,
}

impl Focus {
    pub(super) fn choose(scenario: &Scenario, points: &[PlannedPoint], x_axis: Option<usize>) -> Focus {
        let series_index = scenario
            .charts
            .series
            .and_then(|key| scenario.sweep.iter().position(|axis| axis.name == key))
            .or_else(|| scenario.sweep.iter().position(|axis| axis.values.iter().any(|v| v.as_axis_number().is_none())))
            .or_else(|| (0..scenario.sweep.len()).find(|&i| Some(i) != x_axis));
        let pins = Pins::new(scenario, &scenario.charts.timeline_at, |i| Some(i) != series_index, true);
        let admitted = || points.iter().enumerate().filter(|(_, point)| pins.admit(point));
        let keys = admitted()
            .map(|(_, point)| series_index.map_or_else(|| scenario.name.clone(), |i| point.swept[i].to_string()))
            .collect();
        let chosen = admitted()
            .map(|(index, point)| {
                let label = series_index.map_or_else(
                    || scenario.name.clone(),
                    // A bare number would not say what it counts: "clients=100", but "full-jitter".
                    |i| match point.swept[i].as_axis_number() {
                        Some(_) => format!("{}={}", scenario.sweep[i].name, point.swept[i]),
                        None => point.swept[i].to_string(),
                    },
                );
                (index, label)
            })
            .collect();
        Focus {
            points: chosen,
            keys,
            series_name: series_index.map(|i| scenario.sweep[i].name),
            at_text: pins.at_text(scenario).trim_start().to_owned(),
        }
    }
}

/// Which swept parameters a chart pins to one value, and which it leaves free.
pub(in crate::report) struct Pins {
    /// Per swept axis: the value it is pinned to, if any.
    values: Vec<Option<Value>>,
    /// Per swept axis: could be pinned but is not (a heatmap's panels).
    free: Vec<bool>,
}

impl Pins {
    /// Every axis `pinnable(i)` accepts is pinned to its value in `at`, or, if `at` does not name it (or `--set`
    /// has since removed that value), to its middle value when `middle` is true and left free otherwise. The
    /// other axes (a chart's x, y or series) are neither.
    pub(in crate::report) fn new(
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

    /// Whether axis `index` is pinned.
    pub(in crate::report) fn pinned(&self, index: usize) -> bool {
        self.values.get(index).is_some_and(Option::is_some)
    }

    /// Whether `point` has every pinned value.
    pub(in crate::report) fn admit(&self, point: &PlannedPoint) -> bool {
        self.values.iter().zip(&point.swept).all(|(wanted, value)| wanted.as_ref().is_none_or(|w| w == value))
    }

    /// " at clients=100, strategy=none" over the pinned axes, or empty.
    pub(in crate::report) fn at_text(&self, scenario: &Scenario) -> String {
        let at: Vec<String> = scenario
            .sweep
            .iter()
            .zip(&self.values)
            .filter_map(|(axis, value)| value.as_ref().map(|v| format!("{}={v}", axis.name)))
            .collect();
        if at.is_empty() { String::new() } else { format!(" at {}", at.join(", ")) }
    }

    /// "limiter=none, workers=4" over the free axes of `point`, or empty.
    pub(in crate::report) fn free_label(&self, scenario: &Scenario, point: &PlannedPoint) -> String {
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
