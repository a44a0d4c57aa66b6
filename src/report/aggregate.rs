//! Replicates folded into per-point estimates and mean timelines.

use crate::metrics::LatencyHistogram;
use crate::model::ModelKind;
use crate::stats::Estimate;
use crate::sweep::{PointTimelines, Run, Swept};

/// The groups of a point's runs by their value of the outcome metric `name`, when both values occur (runs where
/// it is undefined belong to neither); empty when every run agrees.
fn split_by_outcome(timelines: &PointTimelines, name: &str) -> Vec<OutcomeGroup> {
    let [yes, no, _] = &timelines.by_outcome;
    if yes.runs == 0 || no.runs == 0 {
        return Vec::new();
    }
    vec![
        OutcomeGroup { label: name.to_owned(), runs: yes.runs as usize, timeline: yes.mean() },
        OutcomeGroup { label: format!("not {name}"), runs: no.runs as usize, timeline: no.mean() },
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

/// Folds `runs` (ordered by point, then replicate, each with its whole timeline) into per-point results.
pub fn aggregate(model: ModelKind, point_count: usize, runs: &[Run]) -> Aggregate {
    aggregate_parts(model, runs, &PointTimelines::of_runs(model, point_count, runs))
}

/// Folds a sweep's runs (ordered by point, then replicate) and its summed timelines into per-point results.
pub fn aggregate_swept(model: ModelKind, swept: &Swept) -> Aggregate {
    aggregate_parts(model, &swept.runs, &swept.timelines)
}

/// The runs' estimates beside the points' timelines (one per point).
fn aggregate_parts(model: ModelKind, runs: &[Run], point_timelines: &[PointTimelines]) -> Aggregate {
    let point_count = point_timelines.len();
    let specs = model.metrics();
    let mut summary = Vec::with_capacity(point_count);
    let mut timelines = Vec::with_capacity(point_count);
    let mut outcome_groups = Vec::with_capacity(point_count);
    let outcome = model.outcome_metric();
    let mut latency = Vec::with_capacity(point_count);
    let mut highlights = Vec::with_capacity(point_count);
    let mut values = Vec::new();
    for (point, point_timelines) in point_timelines.iter().enumerate() {
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
        timelines.push(point_timelines.all().mean());
        outcome_groups.push(match outcome {
            Some(metric) => split_by_outcome(point_timelines, specs[metric].name),
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
