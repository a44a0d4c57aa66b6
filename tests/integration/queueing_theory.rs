//! With retries off, the server model must behave as queueing theory says (docs/references.md#queues).
//!
//! Each test runs independent replicates, takes the mean of the per-replicate estimates and its confidence
//! interval, and asserts (1) that the theoretical value lies inside the 99% interval and (2) that the interval is
//! tighter than the stated tolerance, so the test cannot pass by being vague.

use std::path::Path;

use retrylab::model::ModelKind;
use retrylab::report::aggregate;
use retrylab::scenario::{Scenario, plan};
use retrylab::stats::{Estimate, t_975};
use retrylab::sweep::{SweepSettings, run_sweep};

/// Runs a server scenario (no sweep) and returns the replicate estimate of each named metric.
fn estimates(text: &str, metrics: &[&str]) -> Vec<(Estimate, usize)> {
    let scenario = Scenario::from_source(Path::new("theory.toml"), text.to_owned()).unwrap();
    let points = plan(&scenario).unwrap();
    let settings = SweepSettings::for_scenario(&scenario, None);
    let runs = run_sweep(&points, settings, &|| {}).unwrap();
    let results = aggregate(scenario.model, 1, &runs);
    metrics.iter().map(|name| (results.summary[0][ModelKind::Server.metric_index(name).unwrap()], runs.len())).collect()
}

/// Student's t, 99.5% quantile, 39 degrees of freedom (the 40 replicates every test here runs).
const T_995_DF39: f64 = 2.707913;

/// The theoretical value is inside the 99% CI, and the 95% CI is within `tolerance` (relative) of it.
fn assert_matches(what: &str, (estimate, replicates): (Estimate, usize), theory: f64, tolerance: f64) {
    assert_eq!(replicates, 40, "T_995_DF39 assumes 40 replicates");
    let ci99 = estimate.ci95 / t_975(replicates - 1) * T_995_DF39;
    assert!(
        (estimate.mean - theory).abs() <= ci99,
        "{what}: {} ± {ci99} (99% CI) misses the theoretical {theory}",
        estimate.mean
    );
    assert!(
        estimate.ci95 <= tolerance * theory,
        "{what}: the 95% CI ±{} is wider than the tolerance {}; run longer",
        estimate.ci95,
        tolerance * theory
    );
}

fn open_queue(workers: u32, rate: f64, service: &str, duration_s: u32) -> String {
    format!(
        r#"schema_version = 1
seed = 17
replicates = 40
timeline_bucket = "1000s"
[model]
kind = "server"
workers = {workers}
service = "{service}"
service_mean = "1s"
[workload]
kind = "open"
rate = {rate}
duration = "{duration_s}s"
warmup = "500s"
[client]
strategy = "none"
max_attempts = 1
"#
    )
}

#[test]
fn mm1_response_and_wait_times() {
    // M/M/1, λ = 0.8, μ = 1: W = 5.0, Wq = 4.0. 40 × 20,000 s ≈ 640,000 customers.
    let found = estimates(&open_queue(1, 0.8, "exponential", 20_500), &["latency_mean_ms", "wait_mean_ms"]);
    assert_matches("M/M/1 W (ms)", found[0], 5_000.0, 0.03);
    assert_matches("M/M/1 Wq (ms)", found[1], 4_000.0, 0.035);
}

#[test]
fn mmc_wait_time() {
    // M/M/4, λ = 3.2, μ = 1: Erlang C = 0.596432, Wq = C/(cμ − λ) = 0.745541.
    let found = estimates(&open_queue(4, 3.2, "exponential", 6_500), &["wait_mean_ms", "latency_mean_ms"]);
    assert_matches("M/M/4 Wq (ms)", found[0], 745.541, 0.04);
    assert_matches("M/M/4 W (ms)", found[1], 1_745.541, 0.02);
}

#[test]
fn md1_wait_time() {
    // M/D/1, λ = 0.8, service 1: Wq = ρ/(2μ(1 − ρ)) = 2.0, W = 3.0.
    let found = estimates(&open_queue(1, 0.8, "constant", 10_500), &["wait_mean_ms", "latency_mean_ms"]);
    assert_matches("M/D/1 Wq (ms)", found[0], 2_000.0, 0.03);
    assert_matches("M/D/1 W (ms)", found[1], 3_000.0, 0.02);
}

#[test]
fn closed_system_throughput_and_response_time() {
    // Machine repairman: N = 10, think Exp(9), service Exp(1), one server: X = 0.832037, R = 3.018700.
    let text = r#"schema_version = 1
seed = 23
replicates = 40
timeline_bucket = "1000s"
[model]
kind = "server"
workers = 1
service = "exponential"
service_mean = "1s"
[workload]
kind = "closed"
clients = 10
think_time = "9s"
duration = "10500s"
warmup = "500s"
[client]
strategy = "none"
max_attempts = 1
"#;
    let found = estimates(text, &["goodput_rps", "latency_mean_ms"]);
    assert_matches("closed X (1/s)", found[0], 0.832037, 0.01);
    assert_matches("closed R (ms)", found[1], 3_018.700, 0.02);
}
