//! Replicates folded into per-point estimates and mean timelines.

use crate::metrics::LatencyHistogram;
use crate::model::{ModelKind, Unit};
use crate::stats::Estimate;
use crate::sweep::Run;

/// The bucket-major mean of `runs`' timelines (a run with fewer buckets counts 0 in the missing ones).
fn mean_timeline<'a>(runs: impl Iterator<Item = &'a Run> + Clone, series: usize) -> Vec<f64> {
    let buckets = runs.clone().map(|run| run.output.timeline.len() / series).max().unwrap_or(0);
    let mut mean = vec![0.0; buckets * series];
    let mut count = 0_u32;
    for run in runs {
        count += 1;
        for (slot, value) in mean.iter_mut().zip(&run.output.timeline) {
            *slot += value;
        }
    }
    let replicates = f64::from(count.max(1));
    mean.iter_mut().for_each(|slot| *slot /= replicates);
    mean
}

/// The groups of `runs` by their value of outcome `metric`, when both values occur (runs where it is undefined
/// belong to neither); empty when every run agrees.
fn split_by_outcome(runs: &[Run], metric: usize, name: &str, series: usize) -> Vec<OutcomeGroup> {
    let with = |value: f64| runs.iter().filter(move |run| run.output.metrics[metric] == value);
    let (yes, no) = (with(1.0).count(), with(0.0).count());
    if yes == 0 || no == 0 {
        return Vec::new();
    }
    vec![
        OutcomeGroup { label: name.to_owned(), runs: yes, timeline: mean_timeline(with(1.0), series) },
        OutcomeGroup { label: format!("not {name}"), runs: no, timeline: mean_timeline(with(0.0), series) },
    ]
}

/// The replicates of a point that ended one way, when its replicates disagree on an outcome (some recovered,
/// some stuck): a mean over all of them would show a state no run was in.
#[derive(Clone, Debug, PartialEq)]
pub struct OutcomeGroup {
    /// `recovered` or `not recovered` (the outcome metric's name, negated for the runs where it is 0).
    pub label: String,
    pub runs: usize,
    /// Bucket-major, as [`Aggregate::timelines`], over this group's replicates only.
    pub timeline: Vec<f64>,
}

/// Everything the writers need, aggregated once.
#[derive(Default)]
pub struct Aggregate {
    /// Per point, one estimate per model metric, its interval inside the metric's range.
    pub summary: Vec<Vec<Estimate>>,
    /// Per point, the bucket-major mean over replicates of each timeline series (missing buckets count as 0).
    pub timelines: Vec<Vec<f64>>,
    /// Per point whose replicates disagree on the model's outcome metric: one group per outcome, 1 first.
    pub outcome_groups: Vec<Vec<OutcomeGroup>>,
    /// Total engine events over all runs.
    pub events: u64,
    /// Runs that stopped at the event cap.
    pub truncated_runs: usize,
    /// Per point, the distribution of time to success over every replicate together, as `(upper bucket edge in
    /// ms, fraction of successes within it)` (models that measure latency; empty when nothing succeeded).
    pub latency: Vec<Option<Vec<(f64, f64)>>>,
    /// Per point, the spans in ms the model asks charts to shade (the same in every replicate).
    pub highlights: Vec<Vec<(f64, f64)>>,
}

/// Folds `runs` (ordered by point, then replicate) into per-point results.
pub fn aggregate(model: ModelKind, point_count: usize, runs: &[Run]) -> Aggregate {
    let specs = model.metrics();
    let series = model.timeline_series().len().max(1);
    let mut summary = Vec::with_capacity(point_count);
    let mut timelines = Vec::with_capacity(point_count);
    let mut outcome_groups = Vec::with_capacity(point_count);
    // The first metric that is an outcome (1 or 0 per run) splits a point's timelines when its runs disagree.
    let outcome = specs.iter().position(|spec| spec.unit == Unit::Outcome);
    let mut latency = Vec::with_capacity(point_count);
    let mut highlights = Vec::with_capacity(point_count);
    let mut values = Vec::new();
    for point in 0..point_count {
        let start = runs.partition_point(|run| run.point < point);
        let end = runs.partition_point(|run| run.point <= point);
        let point_runs = &runs[start..end];
        summary.push(
            specs
                .iter()
                .enumerate()
                .map(|(metric, spec)| {
                    values.clear();
                    values.extend(point_runs.iter().map(|run| run.output.metrics[metric]));
                    Estimate::within(&values, spec.unit.support())
                })
                .collect(),
        );
        timelines.push(mean_timeline(point_runs.iter(), series));
        outcome_groups.push(match outcome {
            Some(metric) => split_by_outcome(point_runs, metric, specs[metric].name, series),
            None => Vec::new(),
        });
        let mut merged: Option<LatencyHistogram> = None;
        for histogram in point_runs.iter().filter_map(|run| run.output.latency.as_ref()) {
            merged.get_or_insert_with(LatencyHistogram::default).merge(histogram);
        }
        latency.push(
            merged.map(|histogram| {
                histogram.cdf().into_iter().map(|(nanos, fraction)| (nanos / 1e6, fraction)).collect()
            }),
        );
        let spans = point_runs.first().map_or(&[][..], |run| &run.output.highlights[..]);
        highlights.push(spans.iter().map(|(start, end)| (start.as_millis_f64(), end.as_millis_f64())).collect());
    }
    Aggregate {
        summary,
        timelines,
        outcome_groups,
        events: runs.iter().map(|run| run.output.events).sum(),
        truncated_runs: runs.iter().filter(|run| run.output.truncated).count(),
        latency,
        highlights,
    }
}
