//! `retrylab fluid` on the real binary: the storm's regimes and verdict, CSV with the simulation's columns,
//! Bronson's boundaries along the load, and refusals of what the fluid limit cannot express.

use std::path::Path;

use crate::common::{SMALL, retrylab, write_scenario};

fn scenario(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml")).to_string_lossy().into_owned()
}

fn stdout_of(args: &[&str]) -> String {
    let output = retrylab().arg("fluid").args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

fn refused(args: &[&str]) -> String {
    let assert = retrylab().arg("fluid").args(args).assert().code(2);
    String::from_utf8(assert.get_output().stderr.clone()).unwrap()
}

#[test]
fn the_storm_has_a_healthy_a_stuck_and_an_unstable_regime_and_its_trajectory_sticks() {
    let text = stdout_of(&[&scenario("descartes-retry-storm")]);
    let row = |name: &str| text.lines().find(|line| line.trim_start().starts_with(name)).unwrap_or_default().to_owned();
    assert!(row("healthy").contains("yes") && row("healthy").contains("9.3"), "{text}");
    assert!(row("separatrix").contains(" no ") && row("separatrix").contains("37.3"), "{text}");
    let stuck = row("stuck");
    for number in ["18.51", "9.207", "8.507", "100", "10 s"] {
        assert!(stuck.contains(number), "{number} in {stuck}");
    }
    assert!(text.contains("verdict: stuck"), "{text}");
}

#[test]
fn a_fleet_budget_shows_its_refusals_and_caps_the_stuck_storms_retries() {
    let text = stdout_of(&[&scenario("descartes-retry-storm"), "--set", "limiter=budget", "--set", "budget=0.5"]);
    let header = text.lines().find(|line| line.trim_start().starts_with("regime ")).unwrap();
    assert!(header.contains("rejected") && header.contains("refused"), "{header}");
    let stuck = text.lines().find(|line| line.trim_start().starts_with("stuck")).unwrap();
    for number in ["13.95", "4.65", "3.95"] {
        assert!(stuck.contains(number), "{number} in {stuck}");
    }
    assert!(text.contains("(the fleet's budget: 50% of requests + 0 retries/s)"), "{text}");
    let csv = stdout_of(&[&scenario("descartes-retry-storm"), "--set", "limiter=budget", "--csv", "regimes"]);
    assert!(csv.contains(",retries_rps,rejected_rps,refused_rps,late_rps,"), "{csv}");
    let without = stdout_of(&[&scenario("descartes-retry-storm")]);
    assert!(!without.contains("refused") && !without.contains("fleet's budget"), "no budget, no column: {without}");
}

#[test]
fn the_timeline_has_the_simulations_columns_and_a_row_per_bucket() {
    let text = stdout_of(&[&scenario("descartes-retry-storm"), "--csv", "timeline"]);
    let committed = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("results/descartes-retry-storm/timeline.csv"),
    )
    .unwrap();
    assert_eq!(text.lines().next(), committed.lines().next(), "the same header");
    let rows: Vec<Vec<f64>> =
        text.lines().skip(1).map(|line| line.split(',').map(|cell| cell.parse().unwrap()).collect()).collect();
    assert!(rows.len() >= 400, "400 s of arrivals and the drain: {}", rows.len());
    assert_eq!(rows[130][0], 130_000.0, "bucket starts in ms");
    // Stuck after the spike: calls at the storm's rate, no goodput.
    assert!((rows[200][1] - 18.507).abs() < 0.2 && rows[200][2] < 1e-6, "{:?}", rows[200]);
    // A swept scenario gets the swept keys first.
    let swept = stdout_of(&[&scenario("bronson-2021"), "--csv", "timeline", "--set", "sweep.rate=[100, 160]"]);
    assert!(swept.starts_with("rate,faults,bucket_start_ms,calls,"), "{}", &swept[..80]);
}

#[test]
fn bronsons_boundaries_are_the_fluid_arithmetic_and_the_trajectory_sticks_just_below() {
    let blip = "faults=\"60s..70s slowdown x10\"";
    let text = stdout_of(&[&scenario("bronson-2021"), "--over", "rate", "--between", "100", "200", "--set", blip]);
    assert!(text.contains("stuck regime           rate = 150 (absent at 100, present at 200)"), "{text}");
    assert!(text.contains("healthy regime         present throughout"), "{text}");
    let trajectory = text.lines().find(|line| line.contains("trajectory ends")).unwrap();
    let value: f64 = trajectory.split("rate = ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!((145.31..=146.88).contains(&value), "inside the simulated bracket: {trajectory}");
    assert!(text.contains("bistable (hysteresis)  rate from 150 to beyond 200"), "{text}");
    let csv = stdout_of(&[
        &scenario("bronson-2021"),
        "--over",
        "rate",
        "--between",
        "100",
        "200",
        "--set",
        blip,
        "--csv",
        "regimes",
    ]);
    assert!(csv.starts_with("key,what,boundary,low,high,at_low,at_high\nrate,stuck_regime,150"), "{csv}");
}

#[test]
fn what_the_fluid_limit_cannot_express_is_refused_with_the_key_and_what_to_change() {
    let dir = tempfile::tempdir().unwrap();
    let small = write_scenario(dir.path(), "small.toml", SMALL);
    let stderr = refused(&[small.to_str().unwrap()]);
    assert!(stderr.contains("server model only") && stderr.contains("model.kind"), "{stderr}");
    let storm = scenario("descartes-retry-storm");
    let stderr = refused(&[&storm, "--set", "limiter=grpc"]);
    assert!(stderr.contains("cannot express this retry limiter") && stderr.contains("client.limiter"), "{stderr}");
    assert!(stderr.contains("limiter = \"budget\" or \"finagle\""), "what would be valid: {stderr}");
    let stderr = refused(&[&storm, "--set", "network=exponential", "--set", "network_delay=1ms"]);
    assert!(stderr.contains("random network delay") && stderr.contains("network = \"constant\""), "{stderr}");
    for (args, expected) in [
        (vec!["--scale", "0"], "--scale 0: must be greater than 0"),
        (vec!["--step", "0s"], "--step 0s: must be longer than 0"),
        (vec!["--step", "soon"], "--step soon"),
        (vec!["--over", "nonsense", "--between", "1", "2"], "no parameter `nonsense`"),
        (vec!["--over", "strategy", "--between", "1", "2"], "not a number or a duration"),
        (vec!["--over", "workers", "--between", "3", "2"], "from a smaller to a larger value"),
        (vec!["--over", "workers"], "not swept"),
    ] {
        let mut all = vec![storm.as_str()];
        all.extend(args.iter().copied());
        let stderr = refused(&all);
        assert!(stderr.starts_with("Error: ") && stderr.contains(expected), "{args:?}: {stderr}");
    }
}
