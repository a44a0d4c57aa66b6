//! Stuck states judged per run, the boundary between stable and stuck, and the scenarios that reproduce the
//! field's references: Bronson et al.'s retry boundary C/(R + 1), DesCartes' retry storm against its fluid fixed
//! point, Metafor's Service52 boundary in the trigger's length, and Brooker's two simulators (the collapse that
//! splits runs, the breaker that lets no extra load through).

use std::path::Path;

use retrylab::report::aggregate;
use retrylab::scenario::{Scenario, plan};
use retrylab::stats::Estimate;
use retrylab::sweep::{SweepSettings, run_sweep};

use crate::common::{SMALL, retrylab, write_scenario};

fn bronson() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/bronson-2021.toml").to_string_lossy().into_owned()
}

const BLIP: &str = "faults=\"60s..70s slowdown x10\"";

/// Runs the committed scenario `name` with `overrides`; its points' summaries and its runs.
fn committed(name: &str, overrides: &[&str]) -> (Scenario, Vec<Vec<Estimate>>, Vec<retrylab::sweep::Run>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml"));
    let overrides: Vec<String> = overrides.iter().map(|o| (*o).to_owned()).collect();
    let scenario = Scenario::load(&path, &overrides).unwrap();
    let points = plan(&scenario).unwrap();
    let runs = run_sweep(&points, SweepSettings::for_scenario(&scenario, None), &|| {}).unwrap();
    let summary = aggregate(scenario.model, points.len(), &runs).summary;
    (scenario, summary, runs)
}

/// The estimates of `metrics` per point of bronson-2021 at `rates`, with the 10 s blip.
fn bronson_estimates(rates: &str, metrics: &[&str]) -> Vec<Vec<Estimate>> {
    let rates = format!("sweep.rate={rates}");
    let (scenario, summary, _) = committed("bronson-2021", &[BLIP, &rates]);
    let indices: Vec<usize> = metrics.iter().map(|m| scenario.model.metric_index(m).unwrap()).collect();
    summary.iter().map(|point| indices.iter().map(|&i| point[i]).collect()).collect()
}

#[test]
fn bronson_is_stable_below_c_over_r_plus_one_and_stuck_above_with_recovery_growing_towards_it() {
    let points = bronson_estimates("[120, 140, 160]", &["stuck", "recovery_ms", "tipped"]);
    let [below, near, above] = [&points[0], &points[1], &points[2]];
    // Stable: the Wilson interval of the stuck fraction lies below one half, stuck above it.
    assert!(below[0].hi95 < 0.5 && near[0].hi95 < 0.5, "{:?} {:?}", below[0], near[0]);
    assert!(above[0].lo95 > 0.5, "{:?}", above[0]);
    // The blip tips every load (the backlog outlasts the 10 s hold), but only above 150 does it stay.
    assert!(below[2].lo95 > 0.5 && above[2].lo95 > 0.5);
    // Recovery slows as the load nears 150: beyond both 95% intervals, and more than twice as long.
    let (slow, fast) = (near[1], below[1]);
    assert!(slow.mean - slow.ci95 > 2.0 * (fast.mean + fast.ci95), "140/s: {slow:?}, 120/s: {fast:?}");
}

#[test]
fn boundary_finds_bronsons_150_requests_per_second() {
    let assert = retrylab()
        .args(["boundary", &bronson(), "--over", "rate", "--between", "100", "200", "--set", BLIP, "--csv"])
        .assert()
        .success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    let mut lines = stdout.lines();
    assert!(lines.next().unwrap().starts_with("key,boundary,low,high,runs,"), "{stdout}");
    let fields: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(fields[0], "rate");
    let [boundary, low, high]: [f64; 3] = std::array::from_fn(|i| fields[1 + i].parse().unwrap());
    assert!((135.0..=165.0).contains(&boundary), "150 ± 10%: {stdout}");
    assert!(low <= boundary && boundary <= high && high - low <= 100.0 / 64.0 + 1e-9, "{stdout}");
    assert!(fields[4].parse::<u32>().unwrap() >= 20, "{stdout}");
}

#[test]
fn boundary_refuses_what_it_cannot_search_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let small = write_scenario(dir.path(), "small.toml", SMALL);
    let small = small.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (&["--over", "nope", "--between", "1", "2", "--set", BLIP], "has no parameter `nope`"),
        (&["--over", "strategy", "--between", "1", "2", "--set", BLIP], "not a number or a duration"),
        (&["--over", "rate", "--set", BLIP, "--set", "rate=100"], "give --between"),
        (&["--over", "rate", "--between", "100", "120", "--set", BLIP], "widen --between"),
        (&["--over", "rate", "--between", "100", "200"], "pin faults with --set"),
    ];
    for (args, expected) in cases {
        let assert = retrylab().arg("boundary").arg(bronson()).args(args).assert().code(2);
        let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
        assert!(stderr.starts_with("Error: ") && stderr.contains(expected), "{args:?}: {stderr}");
    }
    let assert = retrylab().args(["boundary", small, "--over", "clients"]).assert().code(2);
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("no stuck-state verdict"), "{stderr}");
}

/// The stuck state of DesCartes' retry storm as `retrylab fluid` solves it: with the queue full, a share q of the
/// arriving attempts is admitted, every admitted one times out and comes back at once while retries last, so
/// attempts arrive at a = λ(1 + q + q² + q³) with q·a = μ. Returns (attempts, retries, refusals, late services) per
/// second, read from `--csv regimes`.
fn retry_storm_fixed_point() -> [f64; 4] {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/descartes-retry-storm.toml");
    let output = retrylab().arg("fluid").arg(path).args(["--csv", "regimes"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let stuck: Vec<&str> =
        text.lines().find(|line| line.contains(",stuck,")).expect("a stuck regime").split(',').collect();
    let cell = |name: &str| stuck[header.iter().position(|h| *h == name).unwrap()].parse::<f64>().unwrap();
    [cell("attempts_rps"), cell("retries_rps"), cell("rejected_rps"), cell("late_rps")]
}

#[test]
fn descartes_retry_storm_stays_stuck_at_the_rates_the_fluid_argument_predicts() {
    let (scenario, _, runs) = committed("descartes-retry-storm", &[]);
    let names = scenario.model.timeline_series();
    let column = |name: &str| names.iter().position(|n| *n == name).unwrap();
    // Per run, the mean per 1 s bucket of a series over [from, to) seconds.
    let rate = |timeline: &[f64], name: &str, from: usize, to: usize| {
        (from..to).map(|bucket| timeline[bucket * names.len() + column(name)]).sum::<f64>() / (to - from) as f64
    };
    let stuck_index = scenario.model.metric_index("stuck").unwrap();
    assert!(runs.iter().all(|run| run.output.metrics[stuck_index] == 1.0), "every run stays stuck");
    // Before the spike most runs are healthy: no retry at all in the first 120 s.
    let healthy_before = runs.iter().filter(|run| rate(&run.output.timeline, "retries", 0, 120) == 0.0).count();
    assert!(healthy_before >= runs.len() / 2, "{healthy_before} of {} healthy before the spike", runs.len());
    let predicted = retry_storm_fixed_point();
    for (index, name) in ["calls", "retries", "rejected", "late"].into_iter().enumerate() {
        let per_run: Vec<f64> = runs.iter().map(|run| rate(&run.output.timeline, name, 130, 400)).collect();
        let estimate = Estimate::of(&per_run);
        // The 99% interval of 10 replicates: t(0.995, 9)/t(0.975, 9) times the 95% half-width.
        let ci99 = estimate.ci95 * 3.2498 / 2.2622;
        assert!((estimate.mean - predicted[index]).abs() <= ci99, "{name}: {estimate:?} vs {}", predicted[index]);
    }
    for run in &runs {
        assert_eq!(rate(&run.output.timeline, "goodput", 130, 400), 0.0, "no request succeeds in time after 130 s");
    }
}

#[test]
fn metafor_service52_recovers_from_a_short_capacity_cut_and_sticks_after_a_long_one() {
    let faults = "sweep.faults=[\"10s..13s slowdown x5\", \"10s..15s slowdown x5\"]";
    let (scenario, summary, _) = committed("metafor-service52", &[faults, "replicates=5", "duration=40s"]);
    let [stuck, amplification] = ["stuck", "amplification_after"].map(|m| scenario.model.metric_index(m).unwrap());
    let (short, long) = (&summary[0], &summary[1]);
    assert!(short[stuck].hi95 < 0.5, "a 3 s cut recovers: {:?}", short[stuck]);
    assert!(long[stuck].lo95 > 0.5, "a 5 s cut sticks: {:?}", long[stuck]);
    // Stuck, every request sent after the cut spends most of its 5 attempts: at least 3 per request.
    let after = long[amplification];
    assert!(after.mean - after.ci95 >= 3.0, "{after:?}");
}

/// Brooker's simple_collapse_sim (mbrooker/simulator_example @ bbfe3946, sim.py unchanged, Python's `random`
/// seeded 0 to 299 in turn), spike scenario without backoff: runs whose goodput over [40 s, 80 s) was below 1 per
/// second, of all. Every one of his runs either collapsed (212 at 0, 2 at 0.6 and 0.7 per second) or recovered
/// (38 to 42 per second).
const BROOKER_COLLAPSED: (f64, f64) = (214.0, 300.0);

#[test]
fn brooker_collapse_splits_runs_as_his_simulator_does_and_stuck_agrees_with_the_timeline() {
    let (scenario, summary, runs) =
        committed("brooker-2023-collapse", &["schedule=\"0s=40, 20s=80, 25s=40\"", "strategy=\"none\""]);
    let names = scenario.model.timeline_series();
    let goodput = names.iter().position(|n| *n == "goodput").unwrap();
    let stuck = scenario.model.metric_index("stuck").unwrap();
    let mut collapsed = 0;
    for run in &runs {
        let per_second: f64 = (40..80).map(|b| run.output.timeline[b * names.len() + goodput]).sum::<f64>() / 40.0;
        // Bimodal, as his: a run collapses to nothing or recovers to the offered 40 per second.
        assert!(!(1.0..=30.0).contains(&per_second), "{per_second} per second");
        let is_stuck = run.output.metrics[stuck] == 1.0;
        assert_eq!(is_stuck, per_second < 1.0, "the verdict agrees with the timeline");
        collapsed += usize::from(is_stuck);
    }
    // Ours against his: the difference of two proportions within its 95% interval.
    let (his_collapsed, his_runs) = BROOKER_COLLAPSED;
    let (p_his, n_ours) = (his_collapsed / his_runs, runs.len() as f64);
    let p_ours = collapsed as f64 / n_ours;
    let half_width = 1.96 * (p_his * (1.0 - p_his) / his_runs + p_ours * (1.0 - p_ours) / n_ours).sqrt();
    assert!((p_ours - p_his).abs() <= half_width, "ours {p_ours} of {n_ours}, his {p_his} of {his_runs}");
    assert!((summary[0][stuck].mean - p_ours).abs() < 1e-12);
}

#[test]
fn brookers_ratio_gate_breaker_lets_no_extra_load_through_at_half_failure_for_any_client_count() {
    let extra = |style: &str, clients: u32| {
        let style = format!("breaker_style=\"{style}\"");
        let clients = format!("clients={clients}");
        let (scenario, summary, _) = committed(
            "brooker-2022-token-bucket",
            &["failure_probability=0.5", "attempts=4", "limiter=\"breaker\"", &style, &clients, "replicates=3"],
        );
        let calls = scenario.model.metric_index("bottom_calls_per_request").unwrap();
        summary[0][calls].mean - 1.0
    };
    // His simulator: 0 to 0.018% extra load at p = 0.5 with 10, 100 or 1,000 clients (three seeds each).
    for clients in [10, 100, 1000] {
        let gate = extra("ratio-gate", clients);
        assert!(gate <= 0.001, "{clients} clients: {gate}");
    }
    // A three-state breaker probing once a second lets through what the issue measured (7%, 21%).
    assert!(extra("three-state", 1000) > 0.1);
}
