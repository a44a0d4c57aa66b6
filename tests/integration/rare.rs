//! `retrylab rare`: the same output on one thread and two, the report, and every refusal before any run (exit 2,
//! a message that says what to change). Splitting's accuracy is tested in the library (src/analysis/rare/tests.rs).

use super::common::{SMALL, retrylab, write_scenario};

/// An M/M/1 queue at 50% load for 10 s: its live queue reaches 10 with probability about 1e-2.
const MM1: &str = r#"schema_version = 1
name = "mm1"
seed = 1
replicates = 1
timeline_bucket = "1s"

[model]
kind = "server"
workers = 1
queue_limit = 40
service = "exponential"
service_mean = "100ms"
network_delay = "0s"

[workload]
kind = "open"
rate = 5
duration = "10s"

[client]
strategy = "none"
timeout = "4s"
max_attempts = 4
retry_on = ["timeout"]
"#;

fn mm1() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_scenario(dir.path(), "mm1.toml", MM1);
    (dir, path)
}

fn output(args: &[&str]) -> (i32, String, String) {
    let out = retrylab().args(args).output().unwrap();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
}

#[test]
fn rare_prints_the_same_csv_on_one_thread_and_two() {
    let (_dir, path) = mm1();
    let path = path.to_str().unwrap();
    let args = |threads: &'static str| {
        vec!["rare", path, "--within", "10s", "--event", "queue>=10", "--budget", "3000", "--csv", "--threads", threads]
    };
    let (one, two) = (output(&args("1")), output(&args("2")));
    assert_eq!(one.0, 0, "{}", one.2);
    assert_eq!(one.1, two.1);
    let lines: Vec<&str> = one.1.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0], retrylab::commands::RARE_CSV_HEADER);
    assert!(lines[1].starts_with("queue>=10,10000,queue,"), "{}", lines[1]);
}

#[test]
fn rare_reports_the_estimate_its_interval_and_the_cost_against_brute_force() {
    let (_dir, path) = mm1();
    let (code, stdout, stderr) =
        output(&["rare", path.to_str().unwrap(), "--within", "10s", "--event", "queue >= 10", "--budget", "3000"]);
    assert_eq!(code, 0, "{stderr}");
    for needle in [
        "P(queue>=10 within 10s) = ",
        "95% interval [",
        "levels (auto, from a pilot of",
        "brute force",
        "variance ratio",
    ] {
        assert!(stdout.contains(needle), "{needle} in {stdout}");
    }
    // Judged at the end: a condition on the metrics, with explicit levels.
    let (code, stdout, stderr) = output(&[
        "rare",
        path.to_str().unwrap(),
        "--within",
        "10s",
        "--event",
        "latency_p99_ms >= 1500",
        "--levels",
        "4,8",
        "--budget",
        "1500",
        "--replications",
        "3",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("levels (given;") && stdout.contains("4, 8"), "{stdout}");
}

/// Runs `rare` with `args` after the scenario and expects exit 2 and `needles` in its message.
fn refused(scenario: &str, args: &[&str], needles: &[&str]) {
    let mut all = vec!["rare", scenario];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = output(&all);
    assert_eq!(code, 2, "{all:?}: {stdout}{stderr}");
    assert!(stdout.is_empty(), "{all:?}: nothing on stdout: {stdout}");
    for needle in needles {
        assert!(stderr.contains(needle), "{all:?}: {needle:?} in {stderr}");
    }
}

#[test]
fn rare_refuses_what_it_cannot_split_before_any_run() {
    let (dir, path) = mm1();
    let mm1 = path.to_str().unwrap();
    let occ = write_scenario(dir.path(), "occ.toml", SMALL);
    refused(occ.to_str().unwrap(), &["--within", "1s"], &["occ.toml:", "server model only"]);
    refused(mm1, &["--within", "10s", "--trace", "t.json"], &["--trace"]);
    refused("scenarios/cron-herd.toml", &["--within", "1h"], &["periodic"]);
    refused("scenarios/clock-aligned-retries.toml", &["--within", "1min"], &["align", "clocks"]);
    refused(mm1, &["--within", "10s", "--event", "queue>=41"], &["mm1.toml:", "queue_limit", "can never occur"]);
    refused(mm1, &["--within", "5s", "--event", "stuck"], &["stuck_hold", "raise --within"]);
    refused(mm1, &["--within", "10s", "--event", "goodput <= 3"], &["column 1", "goodput", "queue>=N"]);
    refused(mm1, &["--within", "10s", "--event", "queue>=x"], &["queue>="]);
    refused(mm1, &["--within", "0s"], &["--within"]);
    refused(mm1, &["--within", "10s", "--levels", "5,3"], &["--levels", "rising"]);
    refused(mm1, &["--within", "10s", "--levels", "50"], &["--levels", "queue limit 40"]);
    refused(
        mm1,
        &["--within", "10s", "--event", "queue>=10", "--levels", "3,6,9", "--budget", "100"],
        &["raise --budget to about 810"],
    );
    refused(mm1, &["--within", "10s", "--event", "queue>=30", "--budget", "200"], &["raise --budget to about"]);
    refused(mm1, &["--within", "10s", "--set", "workers=[1, 2]"], &["one point", "--set"]);
    let unlimited = write_scenario(
        dir.path(),
        "unlimited.toml",
        &MM1.replace("workers = 1\n", "").replace("queue_limit = 40\n", ""),
    );
    refused(unlimited.to_str().unwrap(), &["--within", "10s"], &["workers", "--importance backlog"]);
}
