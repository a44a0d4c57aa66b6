//! Waiting by the clock: periodic jobs on systemd-timer and cron semantics against exact balls-into-bins values,
//! retries aligned to the clock with and without offsets, Floyd & Jacobson's self-synchronising timers, and the
//! refusals of values that make no sense.

use retrylab::report::aggregate;
use retrylab::scenario::{Scenario, plan};
use retrylab::stats::Estimate;
use retrylab::sweep::{Run, SweepSettings, run_sweep};

use crate::common::{assert_refused, write_scenario};

/// Runs `text` (a scenario) with `overrides`; its model's metric index lookup, summaries and runs.
fn simulate(text: &str, overrides: &[&str]) -> (Scenario, Vec<Vec<Estimate>>, Vec<Run>) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_scenario(dir.path(), "clocks.toml", text);
    let overrides: Vec<String> = overrides.iter().map(|o| (*o).to_owned()).collect();
    let scenario = Scenario::load(&path, &overrides).unwrap();
    let points = plan(&scenario).unwrap();
    let runs = run_sweep(&points, SweepSettings::for_scenario(&scenario, None), &|| {}).unwrap();
    let summary = aggregate(scenario.model, points.len(), &runs).summary;
    (scenario, summary, runs)
}

/// Every run's value of `metric`, in run order.
fn values(scenario: &Scenario, runs: &[Run], metric: &str) -> Vec<f64> {
    let index = scenario.model.metric_index(metric).unwrap();
    runs.iter().map(|run| run.output.metrics[index]).collect()
}

/// 1,000 hosts with one job at 30 s on their clocks, against a server that serves everything at once: the
/// requests per second are the workload's own.
const HOSTS: &str = r#"schema_version = 1
seed = 60
replicates = 200
timeline_bucket = "1s"

[model]
kind = "server"
service = "constant"
service_mean = "1ms"

[workload]
kind = "periodic"
clients = 1000
period = "1h"
first_at = "30s"
duration = "11min"
accuracy = "1us"

[client]
strategy = "none"
"#;

/// The distribution of the busiest bin when `balls` balls fall independently into bins with probabilities
/// `bins`: P(max ≤ k) by dynamic programming over the bins (the count in each bin is binomial given the balls
/// left for it and the bins after it), exact up to rounding. Returns (mean, standard deviation) of the maximum.
fn busiest_bin(balls: usize, bins: &[f64]) -> (f64, f64) {
    let at_most = |k: usize| -> f64 {
        // ways[r]: P(the bins from here on each hold ≤ k | r balls fall in them).
        let mut ways: Vec<f64> = (0..=balls).map(|r| if r <= k { 1.0 } else { 0.0 }).collect();
        let mut mass_after = *bins.last().unwrap();
        for &p_bin in bins.iter().rev().skip(1) {
            let mass = mass_after + p_bin;
            let p = p_bin / mass;
            let next: Vec<f64> = (0..=balls)
                .map(|r| {
                    // Σ_j≤k Binomial(r, p)(j) · ways[r − j].
                    let mut pmf = (r as f64 * (1.0 - p).ln()).exp();
                    let mut total = 0.0;
                    for j in 0..=k.min(r) {
                        total += pmf * ways[r - j];
                        pmf *= (r - j) as f64 / (j + 1) as f64 * p / (1.0 - p);
                    }
                    total
                })
                .collect();
            ways = next;
            mass_after = mass;
        }
        ways[balls]
    };
    let (mut mean, mut second_moment) = (0.0, 0.0);
    for k in 0..balls {
        let above = 1.0 - at_most(k);
        if above < 1e-12 {
            break;
        }
        mean += above;
        second_moment += (2 * k + 1) as f64 * above;
    }
    (mean, (second_moment - mean * mean).sqrt())
}

#[test]
fn the_exact_busiest_bin_matches_cases_worked_by_hand() {
    // Two balls in two bins: both in one bin half the time.
    let (mean, sd) = busiest_bin(2, &[0.5, 0.5]);
    assert!((mean - 1.5).abs() < 1e-12 && (sd - 0.5).abs() < 1e-12, "{mean} {sd}");
    // Three balls in three bins: max 1 with probability 6/27, 3 with 3/27, else 2.
    let (mean, _) = busiest_bin(3, &[1.0 / 3.0; 3]);
    assert!((mean - (6.0 + 2.0 * 18.0 + 3.0 * 3.0) / 27.0).abs() < 1e-12, "{mean}");
}

/// Checks the runs' mean busiest second against the exact balls-into-bins value: inside the runs' 99.9% interval
/// (3.29 standard errors of their own spread), and the runs' spread near the exact one.
fn assert_busiest_second(peaks: &[f64], bins: &[f64]) {
    let (exact_mean, exact_sd) = busiest_bin(1000, bins);
    let n = peaks.len() as f64;
    let mean = peaks.iter().sum::<f64>() / n;
    let sd = (peaks.iter().map(|p| (p - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    assert!((mean - exact_mean).abs() <= 3.29 * sd / n.sqrt(), "runs {mean} ± {sd}, exact {exact_mean} ± {exact_sd}");
    assert!((sd / exact_sd - 1.0).abs() < 0.3, "spread {sd} against the exact {exact_sd}");
}

#[test]
fn accuracy_of_one_microsecond_puts_every_host_in_the_same_second() {
    let (scenario, _, runs) = simulate(HOSTS, &["replicates=3"]);
    assert_eq!(values(&scenario, &runs, "peak_rps"), vec![1000.0; 3]);
    assert_eq!(values(&scenario, &runs, "request_peak_to_mean"), vec![3600.0; 3]);
}

#[test]
fn the_default_accuracy_of_one_minute_spreads_hosts_as_balls_into_sixty_bins() {
    let (scenario, _, runs) = simulate(HOSTS, &["accuracy=\"1min\""]);
    let peaks = values(&scenario, &runs, "peak_rps");
    // sd-event places each host at its stable offset within [30 s, 90 s): sixty equal one-second bins.
    assert_busiest_second(&peaks, &[1.0 / 60.0; 60]);
    let (exact, _) = busiest_bin(1000, &[1.0 / 60.0; 60]);
    assert!((26.0..30.0).contains(&exact), "{exact}");
}

#[test]
fn a_randomized_delay_of_ten_minutes_spreads_hosts_as_balls_into_six_hundred_bins() {
    let (scenario, _, runs) = simulate(HOSTS, &["randomized_delay=\"600s\""]);
    assert_busiest_second(&values(&scenario, &runs, "peak_rps"), &[1.0 / 600.0; 600]);
}

#[test]
fn clock_skew_moves_the_herd_but_does_not_spread_it_beyond_its_own_width() {
    // Clocks within ±100 ms of true time, the boundary half a second into a bucket: still one second.
    let (scenario, _, runs) = simulate(HOSTS, &["replicates=3", "first_at=\"30.5s\"", "clock_skew=\"uniform 100ms\""]);
    assert_eq!(values(&scenario, &runs, "peak_rps"), vec![1000.0; 3]);
    // Clocks within ±2 s: the herd spreads over four or five seconds, no more than about a third per second.
    let (scenario, _, runs) = simulate(HOSTS, &["replicates=3", "clock_skew=\"uniform 2s\""]);
    for peak in values(&scenario, &runs, "peak_rps") {
        assert!((200.0..350.0).contains(&peak), "{peak}");
    }
}

/// 100 clients at once against a server that refuses everything for 25 s; each retries at most twice, when its
/// clock next shows a multiple of 10 s.
const ALIGNED: &str = r#"schema_version = 1
seed = 10
replicates = 5
timeline_bucket = "1s"

[model]
kind = "server"
workers = 10
service = "constant"
service_mean = "1ms"
outage_start = "0s"
outage_duration = "25s"
outage_kind = "fail-fast"

[workload]
kind = "burst"
clients = 100

[client]
strategy = "none"
max_attempts = 3
align = "10s"
"#;

#[test]
fn clock_aligned_retries_without_an_offset_all_land_on_the_boundary() {
    let (scenario, _, runs) = simulate(ALIGNED, &[]);
    // Both retries of every client come in the seconds starting at 10 s and 20 s: 100 at a time.
    assert_eq!(values(&scenario, &runs, "retries"), vec![200.0; 5]);
    assert_eq!(values(&scenario, &runs, "retry_peak_per_bucket"), vec![100.0; 5]);
    // With a per-client offset the same retries spread over each period's ten seconds.
    let (scenario, _, runs) = simulate(ALIGNED, &["align_offset=\"per-client\""]);
    for peak in values(&scenario, &runs, "retry_peak_per_bucket") {
        assert!(peak < 30.0, "100 clients over 10 seconds: {peak}");
    }
    // A deadline that an aligned sleep would pass ends the request instead.
    let (scenario, _, runs) = simulate(ALIGNED, &["deadline=\"15s\""]);
    assert_eq!(values(&scenario, &runs, "retries"), vec![100.0; 5], "only the retry at 10 s fits");
}

#[test]
fn layered_callers_align_their_retries_too() {
    let layered = r#"schema_version = 1
seed = 3
replicates = 3
timeline_bucket = "1s"

[model]
kind = "layers"
layers = 1
failure_probability = 0
faults = "0s..15s fail-fast"

[workload]
requests = 50
rate = 1000

[client]
strategy = "none"
max_attempts = 3
align = "10s"
"#;
    let (scenario, _, runs) = simulate(layered, &[]);
    // Every request, sent in the first 50 ms, fails at once and at 10 s, inside the fault window, and succeeds at 20 s.
    for latency in values(&scenario, &runs, "latency_p50_ms") {
        assert!((19_900.0..20_100.0).contains(&latency), "{latency}");
    }
    assert_eq!(values(&scenario, &runs, "success_rate"), vec![1.0; 3]);
}

/// Floyd & Jacobson's model at a scale that runs fast: 20 nodes, Tp = 10 s, Tc = 110 ms, 2,000 periods.
const ROUTERS: &str = r#"schema_version = 1
seed = 1994
replicates = 20
timeline_bucket = "10s"

[model]
kind = "periodic-sync"
nodes = 20
period = "10s"
busy_per_message = "110ms"
duration = "20000s"
"#;

#[test]
fn without_jitter_timers_fall_into_step_from_a_random_start() {
    let (scenario, _, runs) = simulate(ROUTERS, &["jitter=\"0s\""]);
    // A group forms when two nodes start within Tc of each other: P(no pair) = (1 − N·Tc/Tp)^(N−1) = 0.009
    // for a random start; a group drifts into the rest, so at least 18 of 20 runs end fully synchronised.
    let synced = values(&scenario, &runs, "time_to_sync_ms").iter().filter(|t| t.is_finite()).count();
    assert!(synced >= 18, "{synced} of 20 synchronised within 2,000 periods");
    let largest = values(&scenario, &runs, "largest_cluster");
    assert!(largest.iter().filter(|&&n| n == 20.0).count() >= 18);
}

#[test]
fn a_jitter_of_half_the_period_keeps_the_timers_apart_and_breaks_a_synchronised_start() {
    let (scenario, _, runs) = simulate(ROUTERS, &["jitter=\"5s\""]);
    let largest = values(&scenario, &runs, "largest_cluster");
    let mean_size = values(&scenario, &runs, "mean_cluster_size");
    for ((fraction, largest), mean_size) in
        values(&scenario, &runs, "synchronised_fraction").iter().zip(largest).zip(mean_size)
    {
        // The network is busy 22% of the time (N·Tc/Tp), so chance meetings make clusters of a few nodes, and
        // now and then a dozen; never all 20, and a message's cluster averages under 2 nodes (20 in step).
        assert_eq!(*fraction, 0.0);
        assert!(largest <= 12.0 && mean_size < 2.0, "a cluster of {largest} of 20 nodes, mean {mean_size}");
    }
    // From a synchronised start the clusters break up within the first few periods: synchronised at most the
    // first round's worth (Tp + Tr + 2·N·Tc = 19.4 s) of 20,000 s, twice over.
    let (scenario, _, runs) = simulate(ROUTERS, &["jitter=\"5s\"", "start=\"synchronised\""]);
    for fraction in values(&scenario, &runs, "synchronised_fraction") {
        assert!(fraction <= 2.0 * 19.4 / 20_000.0, "{fraction}");
    }
    // Without jitter a synchronised start never breaks.
    let (scenario, _, runs) = simulate(ROUTERS, &["jitter=\"0s\"", "start=\"synchronised\"", "replicates=2"]);
    for size in values(&scenario, &runs, "mean_cluster_size") {
        assert_eq!(size, 20.0);
    }
}

#[test]
fn clock_values_that_make_no_sense_are_refused_with_their_place() {
    let refused = |from: &str, to: &str, expected: &[&str]| assert_refused(ALIGNED, "aligned.toml", from, to, expected);
    refused("align = \"10s\"", "align = \"0s\"", &["align", "a period of 0 aligns nothing"]);
    refused("align = \"10s\"", "align_offset = \"per-client\"", &["align_offset", "has no effect without `align`"]);
    refused("align = \"10s\"", "clock_skew = \"normal 1s\"", &["clock_skew", "moves only what runs by the clock"]);
    refused(
        "align = \"10s\"",
        "align = \"10s\"\nclock_skew = \"uniform 10s\"",
        &["clock_skew", "a whole period of `align` (10s)"],
    );
    refused("align = \"10s\"", "align = \"10s\"\nclock_skew = \"gaussian 1s\"", &["clock_skew", "unknown shape"]);
    let hosts = |from: &str, to: &str, expected: &[&str]| assert_refused(HOSTS, "hosts.toml", from, to, expected);
    hosts("period = \"1h\"", "period = \"0s\"", &["workload.period", "a period of 0"]);
    hosts("first_at = \"30s\"", "first_at = \"1h\"", &["first_at", "must come before `duration`"]);
    hosts("kind = \"periodic\"", "kind = \"closed\"", &["workload.period", "belongs to kind = \"periodic\""]);
    let routers = |from: &str, to: &str, expected: &[&str]| assert_refused(ROUTERS, "routers.toml", from, to, expected);
    routers("nodes = 20", "nodes = 20\njitter = \"11s\"", &["jitter", "at most the period"]);
    routers("period = \"10s\"", "period = \"0s\"", &["period", "a period of 0"]);
}
