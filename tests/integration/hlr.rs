//! Håstad, Leighton & Rogoff (1996) on the channel model (`scenarios/hlr-1996.toml`): N stations with Bernoulli
//! arrivals and per-slot backoff coins. Each test runs points of the committed scenario with its seeds, so the
//! numbers are the committed ones, and judges them by their own intervals (Wilson's for `growing`, Student's for
//! the rest).

use std::path::Path;

use retrylab::report::aggregate;
use retrylab::scenario::{Scenario, plan};
use retrylab::stats::Estimate;
use retrylab::sweep::{SweepSettings, run_sweep};

/// The estimates of `metrics` at one point of hlr-1996, per strategy (exponential first).
fn at(stations: u32, rate: f64, metrics: &[&str]) -> [Vec<Estimate>; 2] {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/hlr-1996.toml");
    let overrides = [format!("sweep.stations=[{stations}]"), format!("sweep.arrival_rate=[{rate}]")];
    let scenario = Scenario::load(&path, &overrides).unwrap();
    let points = plan(&scenario).unwrap();
    assert_eq!(points.len(), 2, "one point per strategy");
    let runs = run_sweep(&points, SweepSettings::for_scenario(&scenario, None), &|| {}).unwrap();
    let summary = aggregate(scenario.model, points.len(), &runs).summary;
    let indices: Vec<usize> = metrics.iter().map(|m| scenario.model.metric_index(m).unwrap()).collect();
    let pick = |point: &Vec<Estimate>| indices.iter().map(|&i| point[i]).collect::<Vec<_>>();
    [pick(&summary[0]), pick(&summary[1])]
}

/// HLR: binary exponential backoff is unstable for λ ≥ λ0 + 1/(4N − 2), λ0 ≈ 0.567. At that rate, for every N
/// of the scenario, its backlog rises beyond the interval of its slope, and most runs grow.
#[test]
fn binary_exponential_backoff_grows_at_hlrs_instability_bound_for_every_n() {
    for stations in [2_u32, 4, 8, 16, 64] {
        let bound = 0.567 + 1.0 / (4.0 * f64::from(stations) - 2.0);
        let rate = (bound * 100.0).ceil() / 100.0;
        let [exponential, _] = at(stations, rate, &["growing", "backlog_slope"]);
        let (growing, slope) = (exponential[0], exponential[1]);
        assert!(slope.lo95 > 0.0, "N={stations}, λ={rate}: slope {slope:?}");
        assert!(growing.mean >= 0.5, "N={stations}, λ={rate}: growing {growing:?}");
    }
}

/// Where the two differ: at 4 stations and 0.7 frames per slot exponential backoff's backlog grows in most runs,
/// polynomial backoff's in none, and it carries all that arrives.
#[test]
fn at_four_stations_exponential_backoff_grows_and_polynomial_backoff_carries_the_load() {
    let [exponential, polynomial] = at(4, 0.7, &["growing", "backlog_slope", "throughput"]);
    assert!(exponential[0].lo95 > 0.5, "exponential: {:?}", exponential[0]);
    assert!(exponential[1].lo95 > 0.0, "exponential: slope {:?}", exponential[1]);
    assert!(polynomial[0].hi95 < 0.5, "polynomial: {:?}", polynomial[0]);
    let carried = polynomial[2];
    assert!((carried.lo95..=carried.hi95).contains(&0.7) || (carried.mean - 0.7).abs() < 0.002, "{carried:?}");
}

/// Where the theorem is not reproduced: at 16 stations and 0.7 frames per slot polynomial backoff grows too. Its
/// stations settle in a fair state (the busiest one carries about 1/N of each bucket, no station captures the
/// channel) that carries about 0.49 frames per slot, so its backlog rises at λ − 0.49 = 0.21 frames per slot.
#[test]
fn at_sixteen_stations_polynomial_backoff_settles_in_a_fair_state_that_carries_half_a_frame_per_slot() {
    let [exponential, polynomial] = at(16, 0.7, &["growing", "throughput", "top_share", "backlog_slope"]);
    assert!(exponential[0].lo95 > 0.5 && polynomial[0].lo95 > 0.5, "{:?} {:?}", exponential[0], polynomial[0]);
    let (carried, top, slope) = (polynomial[1], polynomial[2], polynomial[3]);
    assert!(carried.lo95 > 0.47 && carried.hi95 < 0.51, "throughput {carried:?}");
    assert!(top.hi95 < 2.0 / 16.0, "no capture: {top:?}");
    assert!(
        (slope.lo95..=slope.hi95).contains(&(0.7 - carried.mean)) || (slope.mean - (0.7 - carried.mean)).abs() < 0.01,
        "{slope:?}"
    );
}

fn hlr_scenario() -> String {
    format!("{}/scenarios/hlr-1996.toml", env!("CARGO_MANIFEST_DIR"))
}

/// `boundary --verdict growing` bisects on the share of runs whose backlog grew: at 16 stations exponential
/// backoff tips well below HLR's bound, 0.567 + 1/62 = 0.583.
#[test]
fn boundary_judging_growing_puts_exponential_backoff_below_hlrs_bound_at_sixteen_stations() {
    let args =
        ["--over", "arrival_rate", "--verdict", "growing", "--set", "stations=16", "--set", "strategy=hlr-exponential"];
    let assert = crate::common::retrylab()
        .arg("boundary")
        .arg(hlr_scenario())
        .args(args)
        .args(["--tolerance", "0.05", "--csv"])
        .assert()
        .success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    let rows: Vec<Vec<&str>> = stdout.lines().skip(1).map(|line| line.split(',').collect()).collect();
    let boundary: f64 = rows[0][1].parse().unwrap();
    assert!((0.2..0.583).contains(&boundary), "{stdout}");
    assert!(rows.iter().any(|row| row[13] == "growing") && rows.iter().any(|row| row[13] == "stable"), "{stdout}");
}

#[test]
fn boundary_refuses_a_verdict_that_is_not_an_outcome_and_names_the_ones_there_are() {
    for (verdict, expected) in [
        (None, "judge one of its outcomes with --verdict: growing"),
        (Some("throughput"), "its outcomes: growing"),
        (Some("nope"), "--verdict nope is not an outcome of the channel model"),
    ] {
        let mut command = crate::common::retrylab();
        command.arg("boundary").arg(hlr_scenario()).args([
            "--over",
            "arrival_rate",
            "--set",
            "stations=4",
            "--set",
            "strategy=hlr-polynomial",
        ]);
        if let Some(verdict) = verdict {
            command.args(["--verdict", verdict]);
        }
        let assert = command.assert().code(2);
        let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
        assert!(stderr.contains(expected), "{verdict:?}: {stderr}");
    }
}
