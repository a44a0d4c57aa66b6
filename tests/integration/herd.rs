//! The herd metrics say what the timeline shows: in `scenarios/thundering-herd.toml`, un-jittered exponential
//! backoff sends its retries in waves and full jitter spreads them, so exponential's retry peak-to-mean and
//! dispersion are far above full jitter's, beyond both confidence intervals; and retries that arrive
//! independently (a Poisson stream) have a dispersion of 1 within the interval.

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
