//! `retrylab emulate --check`: the scenario simulated and emulated, each into its own results folder, then held
//! against each other metric by metric from the folders as written (the report's tables, never a run's
//! internals). A metric agrees when the two means differ by no more than both 95% intervals plus the overhead the
//! emulation measured (timer lateness plus the client-to-server trip, both in scenario time): for a time, the
//! mean overhead once per timed wait on a request's path (four per attempt: the trip out, the service, the trip
//! back and the sleep before it) plus one 99th percentile; for a count or a ratio, the mean overhead as a share
//! of the mean service time, of the value.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use crate::Error;
use crate::report::read::ResultsFolder;
use crate::scenario::{PlannedPoint, Scenario};

/// The metrics compared, and whether each is a time (its allowance grows with the waits on a request's path).
const METRICS: &[(&str, Kind)] = &[
    ("calls", Kind::Count),
    ("success_rate", Kind::Count),
    ("completion_ms", Kind::Time),
    ("latency_p50_ms", Kind::Time),
    ("latency_p99_ms", Kind::Time),
    ("retry_peak_to_mean", Kind::Count),
    ("retry_dispersion", Kind::Count),
    ("success_rate_during", Kind::Count),
    ("recovered", Kind::Count),
];

/// The first waves of retries compared per point.
const WAVES: usize = 4;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Count,
    Time,
}

/// One comparison: a metric (or a wave's time) at a point.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Comparison {
    pub(crate) point: String,
    pub(crate) metric: String,
    pub(crate) simulated: (f64, f64),
    pub(crate) emulated: (f64, f64),
    pub(crate) allowed: f64,
}

impl Comparison {
    pub(crate) fn agrees(&self) -> bool {
        (self.emulated.0 - self.simulated.0).abs() <= self.simulated.1 + self.emulated.1 + self.allowed
    }
}

/// Timed waits on a request's path per attempt: the trip out, the service, the trip back, the sleep before it.
const WAITS_PER_ATTEMPT: f64 = 4.0;

/// The overhead the emulation measured per timed wait, in scenario ms (mean and 99th percentile), and the mean
/// service time it is judged against.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Overhead {
    pub(crate) mean_ms: f64,
    pub(crate) tail_ms: f64,
    pub(crate) service_mean_ms: Option<f64>,
}

impl Overhead {
    /// What a metric of `kind` may differ by beyond the intervals, at a point with `attempts` per request.
    fn allowance(&self, kind: Kind, value: f64, attempts: f64) -> f64 {
        match kind {
            Kind::Time => self.waits(attempts.max(1.0)),
            Kind::Count => self.service_mean_ms.map_or(0.0, |mean| self.mean_ms / mean * value.abs()),
        }
    }

    /// The overhead of `attempts` attempts' timed waits: their mean sum plus one tail.
    fn waits(&self, attempts: f64) -> f64 {
        self.mean_ms * WAITS_PER_ATTEMPT * attempts + self.tail_ms
    }
}

/// Compares the two folders' points.
pub(crate) fn compare(
    scenario: &Scenario,
    points: &[PlannedPoint],
    simulated: &Path,
    emulated: &Path,
    overhead: Overhead,
) -> Result<Vec<Comparison>, Error> {
    let (simulated, emulated) = (ResultsFolder::open(simulated)?, ResultsFolder::open(emulated)?);
    let (sim, emu) = (simulated.aggregate()?, emulated.aggregate()?);
    let specs = scenario.model.metrics();
    let index = |name: &str| specs.iter().position(|spec| spec.name == name);
    let series = scenario.model.timeline_series();
    let retries = series.iter().position(|name| *name == "retries").unwrap_or(0);
    let bucket_ms = scenario.timeline_bucket.as_millis_f64();
    let mut comparisons = Vec::new();
    for (point, (sim_row, emu_row)) in points.iter().zip(sim.summary.iter().zip(&emu.summary)) {
        let label = label(scenario, point);
        let attempts = index("amplification").map_or(1.0, |i| emu_row[i].mean);
        let attempts = if attempts.is_finite() { attempts } else { 1.0 };
        for &(name, kind) in METRICS {
            let Some(i) = index(name) else { continue };
            let (s, e) = (&sim_row[i], &emu_row[i]);
            if !s.mean.is_finite() || !e.mean.is_finite() {
                continue;
            }
            comparisons.push(Comparison {
                point: label.clone(),
                metric: name.to_owned(),
                simulated: (s.mean, finite(s.ci95)),
                emulated: (e.mean, finite(e.ci95)),
                allowed: overhead.allowance(kind, s.mean, attempts),
            });
        }
        let waves_of = |timelines: &[Vec<f64>]| {
            let retries: Vec<f64> = timelines[point.index].chunks(series.len()).map(|bucket| bucket[retries]).collect();
            wave_times(&retries, bucket_ms)
        };
        let (sim_waves, emu_waves) = (waves_of(&sim.timelines), waves_of(&emu.timelines));
        for (wave, (s, e)) in sim_waves.iter().zip(&emu_waves).take(WAVES).enumerate() {
            comparisons.push(Comparison {
                point: label.clone(),
                metric: format!("wave_{}_ms", wave + 1),
                simulated: (*s, 0.0),
                emulated: (*e, 0.0),
                allowed: bucket_ms + overhead.waits((wave + 1) as f64),
            });
        }
    }
    Ok(comparisons)
}

fn finite(value: f64) -> f64 {
    if value.is_finite() { value } else { 0.0 }
}

/// A point's swept values, `key=value, …` (the scenario's name for a point that sweeps nothing).
fn label(scenario: &Scenario, point: &PlannedPoint) -> String {
    if scenario.sweep.is_empty() {
        return scenario.name.clone();
    }
    let pairs: Vec<String> =
        scenario.sweep.iter().zip(&point.swept).map(|(axis, value)| format!("{}={value}", axis.name)).collect();
    pairs.join(", ")
}

/// When the waves of retries came, in ms: the retries per bucket above a fifth of the largest, grouped where
/// they are consecutive, each group at its count-weighted mean time.
pub(crate) fn wave_times(retries: &[f64], bucket_ms: f64) -> Vec<f64> {
    let peak = retries.iter().copied().fold(0.0, f64::max);
    if peak <= 0.0 {
        return Vec::new();
    }
    let threshold = peak / 5.0;
    let mut waves = Vec::new();
    let (mut weight, mut moment) = (0.0, 0.0);
    for (bucket, &count) in retries.iter().chain(std::iter::once(&0.0)).enumerate() {
        if count >= threshold {
            weight += count;
            moment += count * (bucket as f64 + 0.5) * bucket_ms;
        } else if weight > 0.0 {
            waves.push(moment / weight);
            (weight, moment) = (0.0, 0.0);
        }
    }
    waves
}

/// The comparison as a table for people, each row with its verdict.
pub(crate) fn table(comparisons: &[Comparison]) -> String {
    let mut text = String::new();
    let width = comparisons.iter().map(|c| c.point.len()).max().unwrap_or(5).max(5);
    let _ = writeln!(
        text,
        "{:<width$}  {:<20}  {:>20}  {:>20}  {:>10}  verdict",
        "point", "metric", "simulated ± CI95", "emulated ± CI95", "overhead"
    );
    for c in comparisons {
        let pair = |(mean, ci): (f64, f64)| format!("{} ± {}", number(mean), number(ci));
        let verdict = if c.agrees() { "agrees" } else { "DIFFERS" };
        let _ = writeln!(
            text,
            "{:<width$}  {:<20}  {:>20}  {:>20}  {:>10}  {verdict}",
            c.point,
            c.metric,
            pair(c.simulated),
            pair(c.emulated),
            number(c.allowed)
        );
    }
    text
}

fn number(value: f64) -> String {
    crate::report::format_number(value)
}

/// check.csv: one row per comparison.
pub(crate) fn write_csv(comparisons: &[Comparison], path: &Path) -> Result<(), Error> {
    let mut bytes = Vec::new();
    let _ = writeln!(
        bytes,
        "point,metric,simulated_mean,simulated_ci95,emulated_mean,emulated_ci95,overhead_allowed,verdict"
    );
    for c in comparisons {
        let verdict = if c.agrees() { "agrees" } else { "differs" };
        let _ = writeln!(
            bytes,
            "\"{}\",{},{},{},{},{},{},{verdict}",
            c.point.replace('"', "\"\""),
            c.metric,
            number(c.simulated.0),
            number(c.simulated.1),
            number(c.emulated.0),
            number(c.emulated.1),
            number(c.allowed)
        );
    }
    crate::report::atomic::write_atomic(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waves_are_the_weighted_middles_of_busy_stretches() {
        let retries = [0.0, 10.0, 30.0, 0.0, 1.0, 0.0, 0.0, 20.0, 0.0];
        assert_eq!(wave_times(&retries, 10.0), [(10.0 * 15.0 + 30.0 * 25.0) / 40.0, 75.0]);
        assert_eq!(wave_times(&[0.0; 4], 10.0), Vec::<f64>::new());
        assert_eq!(wave_times(&[5.0, 5.0], 2.0), [2.0], "a wave still going at the end counts");
    }

    #[test]
    fn a_comparison_agrees_within_both_intervals_and_the_overhead() {
        let mut c = Comparison {
            point: "p".into(),
            metric: "calls".into(),
            simulated: (100.0, 5.0),
            emulated: (112.0, 4.0),
            allowed: 3.0,
        };
        assert!(c.agrees(), "12 ≤ 5 + 4 + 3");
        c.allowed = 2.9;
        assert!(!c.agrees());
        c.emulated.0 = 88.0;
        assert!(!c.agrees(), "either side");
        let overhead = Overhead { mean_ms: 0.5, tail_ms: 2.0, service_mean_ms: Some(10.0) };
        assert_eq!(overhead.allowance(Kind::Time, 123.0, 3.0), 0.5 * 4.0 * 3.0 + 2.0);
        assert_eq!(overhead.allowance(Kind::Time, 123.0, 0.0), 0.5 * 4.0 + 2.0, "at least one attempt");
        assert_eq!(overhead.allowance(Kind::Count, -200.0, 3.0), 10.0);
        let unknown = Overhead { mean_ms: 0.5, tail_ms: 2.0, service_mean_ms: None };
        assert_eq!(unknown.allowance(Kind::Count, 200.0, 3.0), 0.0);
    }
}
