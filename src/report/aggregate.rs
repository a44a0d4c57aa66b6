//! Replicates folded into per-point estimates and mean timelines.

use crate::metrics::LatencyHistogram;
use crate::model::ModelKind;
use crate::stats::Estimate;
use crate::sweep::Run;

/// Everything the writers need, aggregated once.
pub struct Aggregate {
    /// Per point, one estimate per model metric, its interval inside the metric's range.
    pub summary: Vec<Vec<Estimate>>,
    /// Per point, the bucket-major mean over replicates of each timeline series (missing buckets count as 0).
    pub timelines: Vec<Vec<f64>>,
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
        let buckets = point_runs.iter().map(|run| run.output.timeline.len() / series).max().unwrap_or(0);
        let mut mean = vec![0.0; buckets * series];
        for run in point_runs {
            for (slot, value) in mean.iter_mut().zip(&run.output.timeline) {
                *slot += value;
            }
        }
        let replicates = point_runs.len().max(1) as f64;
        mean.iter_mut().for_each(|slot| *slot /= replicates);
        timelines.push(mean);
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
        events: runs.iter().map(|run| run.output.events).sum(),
        truncated_runs: runs.iter().filter(|run| run.output.truncated).count(),
        latency,
        highlights,
    }
}
