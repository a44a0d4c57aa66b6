//! The tidy CSV outputs: summary.csv (one row per point), runs.csv (one row per point × replicate),
//! timeline.csv (one row per point × bucket) and, for models that measure latency, latency.csv (one row per point
//! × latency histogram bucket).

use super::aggregate::Aggregate;
use crate::scenario::{PlannedPoint, Scenario};
use crate::sweep::Run;

/// Numbers as CSV text: whole numbers without a decimal point, others rounded to 7 significant digits (more
/// than any replicate count here can support), NaN as an empty cell. Pure function of the value, so files are
/// byte-identical whenever the numbers are.
pub fn format_number(x: f64) -> String {
    if x.is_nan() {
        return String::new();
    }
    if x == x.trunc() && x.abs() < 1e15 {
        return format!("{}", x as i64);
    }
    let rounded: f64 = format!("{x:.6e}").parse().unwrap_or(x);
    format!("{rounded}")
}

pub(crate) fn writer() -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new())
}

pub(crate) fn finish(writer: csv::Writer<Vec<u8>>) -> Vec<u8> {
    // Writing into a Vec cannot fail.
    writer.into_inner().unwrap_or_default()
}

pub(super) fn swept_header(scenario: &Scenario) -> Vec<String> {
    scenario.sweep.iter().map(|axis| axis.name.to_owned()).collect()
}

fn swept_cells(point: &PlannedPoint) -> Vec<String> {
    point.swept.iter().map(|value| value.to_string()).collect()
}

/// Whether each of the model's metrics was defined in some run of the study: a column no run could fill (the
/// ledger of services a graph does not have, recovery in a workload with nothing to recover from) is left out.
pub(super) fn filled_metrics(aggregate: &Aggregate) -> Vec<bool> {
    let count = aggregate.summary.first().map_or(0, Vec::len);
    (0..count).map(|metric| aggregate.summary.iter().any(|point| !point[metric].mean.is_nan())).collect()
}

pub(super) fn summary_csv(scenario: &Scenario, points: &[PlannedPoint], aggregate: &Aggregate) -> Vec<u8> {
    let filled = filled_metrics(aggregate);
    let mut out = writer();
    let mut header = swept_header(scenario);
    header.push("replicates".into());
    for (metric, _) in scenario.model.metrics().iter().zip(&filled).filter(|(_, filled)| **filled) {
        for suffix in ["mean", "sd", "ci95", "lo95", "hi95"] {
            header.push(format!("{}_{suffix}", metric.name));
        }
    }
    let _ = out.write_record(&header);
    for (point, estimates) in points.iter().zip(&aggregate.summary) {
        let mut row = swept_cells(point);
        row.push(scenario.replicates.to_string());
        for (estimate, _) in estimates.iter().zip(&filled).filter(|(_, filled)| **filled) {
            row.extend([estimate.mean, estimate.sd, estimate.ci95, estimate.lo95, estimate.hi95].map(format_number));
        }
        let _ = out.write_record(&row);
    }
    finish(out)
}

pub(super) fn runs_csv(scenario: &Scenario, points: &[PlannedPoint], runs: &[Run], filled: &[bool]) -> Vec<u8> {
    let mut out = writer();
    let mut header = swept_header(scenario);
    header.extend(["replicate".to_owned(), "seed".to_owned(), "truncated".to_owned()]);
    let metrics = scenario.model.metrics().iter().zip(filled).filter(|(_, filled)| **filled);
    header.extend(metrics.map(|(metric, _)| metric.name.to_owned()));
    let _ = out.write_record(&header);
    for run in runs {
        let mut row = swept_cells(&points[run.point]);
        row.extend([run.replicate.to_string(), run.seed.to_string(), u8::from(run.output.truncated).to_string()]);
        let values = run.output.metrics.iter().zip(filled).filter(|(_, filled)| **filled);
        row.extend(values.map(|(&value, _)| format_number(value)));
        let _ = out.write_record(&row);
    }
    finish(out)
}

pub(super) fn timeline_csv(scenario: &Scenario, points: &[PlannedPoint], aggregate: &Aggregate) -> Vec<u8> {
    let mut out = writer();
    let series = scenario.model.timeline_series();
    let mut header = swept_header(scenario);
    header.push("bucket_start_ms".into());
    header.extend(series.iter().map(|name| (*name).to_owned()));
    let _ = out.write_record(&header);
    let bucket_ms = scenario.timeline_bucket.as_millis_f64();
    for (point, timeline) in points.iter().zip(&aggregate.timelines) {
        let cells = swept_cells(point);
        for (bucket, values) in timeline.chunks(series.len().max(1)).enumerate() {
            let mut row = cells.clone();
            row.push(format_number(bucket as f64 * bucket_ms));
            row.extend(values.iter().map(|&value| format_number(value)));
            let _ = out.write_record(&row);
        }
    }
    finish(out)
}

/// timeline_by_outcome.csv, for studies where some point's replicates disagree on an outcome (some recovered,
/// some stuck): for those points, one mean timeline per group of replicates, `outcome` naming the group and `runs`
/// counting them. `None` when every point's replicates agree.
pub(super) fn outcome_timeline_csv(
    scenario: &Scenario,
    points: &[PlannedPoint],
    aggregate: &Aggregate,
) -> Option<Vec<u8>> {
    if aggregate.outcome_groups.iter().all(Vec::is_empty) {
        return None;
    }
    let mut out = writer();
    let series = scenario.model.timeline_series();
    let mut header = swept_header(scenario);
    header.extend(["outcome".to_owned(), "runs".to_owned(), "bucket_start_ms".to_owned()]);
    header.extend(series.iter().map(|name| (*name).to_owned()));
    let _ = out.write_record(&header);
    let bucket_ms = scenario.timeline_bucket.as_millis_f64();
    for (point, groups) in points.iter().zip(&aggregate.outcome_groups) {
        for group in groups {
            let mut cells = swept_cells(point);
            cells.extend([group.label.clone(), group.runs.to_string()]);
            for (bucket, values) in group.timeline.chunks(series.len().max(1)).enumerate() {
                let mut row = cells.clone();
                row.push(format_number(bucket as f64 * bucket_ms));
                row.extend(values.iter().map(|&value| format_number(value)));
                let _ = out.write_record(&row);
            }
        }
    }
    Some(finish(out))
}

/// latency.csv: per point, the cumulative distribution of time to success (`latency_ms`: upper edge of a
/// histogram bucket; `fraction`: share of successful requests done within it). `None` for models that do not
/// measure latency.
pub(super) fn latency_csv(scenario: &Scenario, points: &[PlannedPoint], aggregate: &Aggregate) -> Option<Vec<u8>> {
    if aggregate.latency.iter().all(Option::is_none) {
        return None;
    }
    let mut out = writer();
    let mut header = swept_header(scenario);
    header.extend(["latency_ms".to_owned(), "fraction".to_owned()]);
    let _ = out.write_record(&header);
    for (point, cdf) in points.iter().zip(&aggregate.latency) {
        let cells = swept_cells(point);
        for &(ms, fraction) in cdf.iter().flatten() {
            let mut row = cells.clone();
            row.extend([format_number(ms), format_number(fraction)]);
            let _ = out.write_record(&row);
        }
    }
    Some(finish(out))
}

#[cfg(test)]
mod tests {
    use super::format_number;

    #[test]
    fn numbers_are_short_and_stable() {
        assert_eq!(format_number(100.0), "100");
        assert_eq!(format_number(-3.0), "-3");
        assert_eq!(format_number(0.1 + 0.2), "0.3");
        assert_eq!(format_number(1234.567891), "1234.568");
        assert_eq!(format_number(0.000_001_234_567_89), "0.000001234568");
        assert_eq!(format_number(f64::NAN), "");
    }
}
