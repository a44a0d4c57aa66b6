//! Same scenario and seed → byte-identical CSV, whatever the thread count, on every run.

use std::path::Path;

use crate::common::{SMALL, retrylab, write_scenario};

fn run(scenario: &Path, out: &Path, threads: &str, seed: &str) {
    retrylab()
        .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--threads", threads])
        .args(["--seed", seed, "--quiet"])
        .assert()
        .success();
}

fn csv_bytes(out: &Path) -> Vec<Vec<u8>> {
    ["summary.csv", "runs.csv", "timeline.csv"].iter().map(|name| std::fs::read(out.join(name)).unwrap()).collect()
}

#[test]
fn csv_is_byte_identical_on_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "small.toml", &SMALL.replace("replicates = 4", "replicates = 12"));
    let (one, two, again) = (dir.path().join("one"), dir.path().join("two"), dir.path().join("again"));
    run(&scenario, &one, "1", "99");
    run(&scenario, &two, "2", "99");
    run(&scenario, &again, "2", "99");
    assert_eq!(csv_bytes(&one), csv_bytes(&two));
    assert_eq!(csv_bytes(&two), csv_bytes(&again));
}

#[test]
fn a_different_seed_gives_different_runs() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "small.toml", SMALL);
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    run(&scenario, &a, "2", "1");
    run(&scenario, &b, "2", "2");
    assert_ne!(csv_bytes(&a)[1], csv_bytes(&b)[1]);
}

#[test]
fn library_sweeps_match_across_thread_pools() {
    use retrylab::scenario::{Scenario, plan};
    use retrylab::sweep::{SweepSettings, run_sweep};

    let scenario = Scenario::from_source(Path::new("small.toml"), SMALL.to_owned()).unwrap();
    let points = plan(&scenario).unwrap();
    let settings = |threads| SweepSettings {
        master_seed: 3,
        replicates: 6,
        ..SweepSettings::for_scenario(&scenario, Some(threads))
    };
    let one = run_sweep(&points, settings(1), &|| {}).unwrap();
    let two = run_sweep(&points, settings(2), &|| {}).unwrap();
    assert_eq!(one.len(), points.len() * 6);
    for (a, b) in one.iter().zip(&two) {
        assert_eq!((a.point, a.replicate, a.seed), (b.point, b.replicate, b.seed));
        assert_eq!(a.output, b.output);
    }
}

#[test]
fn the_call_graph_model_is_byte_identical_on_one_and_two_threads() {
    // Hedges, fan-out, cancellation, timeouts and retries all draw from one replicate's stream.
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/call-graph.toml");
    let dir = tempfile::tempdir().unwrap();
    let outputs: Vec<Vec<Vec<u8>>> = ["1", "2"]
        .iter()
        .map(|threads| {
            let out = dir.path().join(threads);
            retrylab()
                .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--threads", threads])
                .args(["--set", "requests=2000", "--quiet"])
                .assert()
                .success();
            csv_bytes(&out)
        })
        .collect();
    assert_eq!(outputs[0], outputs[1]);
}

/// The timeline.csv rows of `out` that start before `until_ms`, without their swept cells.
fn timeline_before(out: &Path, until_ms: f64) -> Vec<String> {
    let text = std::fs::read_to_string(out.join("timeline.csv")).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == "bucket_start_ms").unwrap();
    text.lines()
        .skip(1)
        .filter(|line| line.split(',').nth(at).unwrap().parse::<f64>().unwrap() < until_ms)
        .map(|line| line.split(',').skip(at).collect::<Vec<_>>().join(","))
        .collect()
}

#[test]
fn a_longer_run_extends_a_shorter_one_draw_for_draw() {
    // duration enters no seed: the first 14 s of a 30 s run are the 15 s run, bucket for bucket (the last second
    // aside, where the shorter run's arrivals stop), the 1 s outage at t = 10 s included.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let run = |duration: &str| {
        let out = dir.path().join(duration);
        retrylab()
            .current_dir(root)
            .args(["run", "scenarios/metastable.toml", "--out", out.to_str().unwrap(), "-q", "--replicates", "2"])
            .args(["--set", &format!("duration={duration}"), "--set", "outage_duration=1s", "--set", "rate=600"])
            .args(["--set", "limiter=none"])
            .assert()
            .success();
        out
    };
    let (short, long) = (run("15s"), run("30s"));
    let (short, long) = (timeline_before(&short, 14_000.0), timeline_before(&long, 14_000.0));
    assert_eq!(short.len(), 140, "{short:?}");
    assert_eq!(short, long);
    // A model parameter does move the world: the same run at another rate differs.
    let other = dir.path().join("rate");
    retrylab()
        .current_dir(root)
        .args(["run", "scenarios/metastable.toml", "--out", other.to_str().unwrap(), "-q", "--replicates", "2"])
        .args(["--set", "duration=30s", "--set", "outage_duration=1s", "--set", "rate=601", "--set", "limiter=none"])
        .assert()
        .success();
    assert_ne!(timeline_before(&other, 14_000.0), long);
}
