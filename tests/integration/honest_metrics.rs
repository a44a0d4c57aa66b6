//! Numbers that say what the runs did. The herd metrics agree with the timeline: in
//! `scenarios/thundering-herd.toml`, un-jittered exponential backoff sends its retries in waves and full jitter
//! spreads them, so exponential's retry peak-to-mean and dispersion are far above full jitter's, beyond both
//! confidence intervals, and retries that arrive independently (a Poisson stream) have a dispersion of 1 within
//! the interval. A point whose replicates end apart (some recovered, some stuck) gets its timelines split by
//! outcome instead of only a mean no run experienced.

use std::path::Path;

use retrylab::model::ModelKind;
use retrylab::report::aggregate;
use retrylab::scenario::{Scenario, plan};
use retrylab::stats::{Estimate, t_975};
use retrylab::sweep::{SweepSettings, run_sweep};

/// Runs `text` (or the committed scenario `file`) with `overrides`; the estimates of `metric` per point.
fn estimates(scenario: Scenario, metric: &str) -> Vec<Estimate> {
    let points = plan(&scenario).unwrap();
    let runs = run_sweep(&points, SweepSettings::for_scenario(&scenario, None), &|| {}).unwrap();
    let index = scenario.model.metric_index(metric).unwrap();
    aggregate(scenario.model, points.len(), &runs).summary.iter().map(|point| point[index]).collect()
}

fn herd(metric: &str) -> (Estimate, Estimate) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/thundering-herd.toml");
    let overrides = ["strategy=[\"exponential\", \"full-jitter\"]".to_owned(), "replicates=10".to_owned()];
    let scenario = Scenario::load(&path, &overrides).unwrap();
    assert_eq!(scenario.model, ModelKind::Server);
    let points = estimates(scenario, metric);
    (points[0], points[1])
}

#[test]
fn exponential_backoff_retries_in_waves_and_full_jitter_spreads_them() {
    for metric in ["retry_peak_to_mean", "retry_dispersion"] {
        let (exponential, jittered) = herd(metric);
        // A wide margin: three times, at the near ends of both 95% intervals.
        assert!(
            exponential.mean - exponential.ci95 > 3.0 * (jittered.mean + jittered.ci95),
            "{metric}: exponential {exponential:?} vs full jitter {jittered:?}"
        );
    }
}

#[test]
fn independent_retries_have_a_dispersion_of_one() {
    // Poisson arrivals to a server with unlimited workers and a constant 10 ms service: answers leave as the
    // arrivals shifted by 10 ms, a Poisson stream, and a tenth of them fail and are retried at once, so retries
    // are a thinned Poisson stream, about 10 per 10 ms bucket, that starts and stops sharply (a gradual start or
    // end would add variance a stationary stream does not have).
    let text = r#"
schema_version = 1
replicates = 40
[model]
kind = "server"
service = "constant"
service_mean = "10ms"
error_probability = 0.1
[workload]
kind = "open"
rate = 10000
duration = "20s"
[client]
strategy = "none"
max_attempts = 2
"#;
    let scenario = Scenario::from_source("poisson.toml".as_ref(), text.to_owned()).unwrap();
    let dispersion = estimates(scenario, "retry_dispersion")[0];
    let half_width_99 = dispersion.ci95 / t_975(39) * 2.707913;
    assert!(half_width_99 < 0.05, "an interval tight enough to mean something: {dispersion:?}");
    assert!((dispersion.mean - 1.0).abs() < half_width_99, "{dispersion:?}, 99% half-width {half_width_99}");
}

#[test]
fn a_point_whose_runs_end_apart_is_split_by_outcome_in_its_own_timeline_file() {
    use crate::common::retrylab;
    // metastable at 620 requests/s with a 5 s outage and no limiter: 5 of its 8 runs recover.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    retrylab()
        .current_dir(root)
        .args(["run", "scenarios/metastable.toml", "--out", out.to_str().unwrap(), "-q"])
        .args(["--set", "outage_duration=5s", "--set", "rate=620", "--set", "limiter=none"])
        .assert()
        .success();
    let read = |name: &str| {
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        let mut lines = text.lines().map(|line| line.split(',').map(str::to_owned).collect::<Vec<_>>());
        let header = lines.next().unwrap();
        (header, lines.collect::<Vec<_>>())
    };
    let (header, rows) = read("timeline_by_outcome.csv");
    assert_eq!(header[..4], ["outcome", "runs", "bucket_start_ms", "calls"]);
    let runs = |label: &str| rows.iter().find(|row| row[0] == label).map(|row| row[1].parse::<f64>().unwrap());
    let (recovered, stuck) = (runs("recovered").unwrap(), runs("not recovered").unwrap());
    assert_eq!(recovered + stuck, 8.0, "every replicate is in one group");
    // The timeline and goodput charts draw the groups, each in a panel of its own, never only their mean.
    for chart in ["timeline.svg", "goodput.svg"] {
        let svg = std::fs::read_to_string(out.join(chart)).unwrap();
        for label in [format!("recovered ({recovered} of 8 runs)"), format!("not recovered ({stuck} of 8 runs)")] {
            assert!(svg.contains(&label), "{chart} has no panel {label:?}");
        }
        assert!(svg.contains("drawn per outcome"), "{chart} says why its panels are split");
    }
    // The groups' means, weighted by their runs, are the all-runs mean of timeline.csv, bucket by bucket.
    let (all_header, all) = read("timeline.csv");
    let goodput = header.iter().position(|h| h == "goodput").unwrap();
    let all_goodput = all_header.iter().position(|h| h == "goodput").unwrap();
    for (bucket, all_row) in all.iter().enumerate().step_by(50) {
        let value = |label: &str| {
            let row = rows.iter().filter(|row| row[0] == label).nth(bucket);
            row.map_or(0.0, |row| row[goodput].parse::<f64>().unwrap())
        };
        let mixed = (recovered * value("recovered") + stuck * value("not recovered")) / 8.0;
        let overall: f64 = all_row[all_goodput].parse().unwrap();
        assert!((mixed - overall).abs() <= 1e-6 * overall.max(1.0), "bucket {bucket}: {mixed} vs {overall}");
    }
}
