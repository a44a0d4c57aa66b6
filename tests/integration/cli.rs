//! The real binary, driven as a user would: outputs, help, and bad input (exit code 2, a located message, no
//! panic, nothing written).

use crate::common::{SMALL, assert_refused, listing, retrylab, write_scenario};
use predicates::prelude::*;

const EXPECTED_FILES: &[&str] = &[
    "calls.png",
    "calls.svg",
    "completion_ms.png",
    "completion_ms.svg",
    "manifest.json",
    "paired.csv",
    "report.html",
    "retry_dispersion.png",
    "retry_dispersion.svg",
    "retry_peak_to_mean.png",
    "retry_peak_to_mean.svg",
    "runs.csv",
    "summary.csv",
    "timeline.csv",
    "timeline.png",
    "timeline.svg",
];

#[test]
fn run_writes_every_output_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "small.toml", SMALL);
    let out = dir.path().join("out");
    retrylab()
        .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("6 points × 4 replicates"));
    assert_eq!(listing(&out), EXPECTED_FILES);

    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let header = summary.lines().next().unwrap();
    for column in [
        "clients",
        "strategy",
        "replicates",
        "calls_mean",
        "calls_sd",
        "calls_ci95",
        "attempts_mean",
        "completion_ms_mean",
        "peak_calls_per_bucket_mean",
        "events_mean",
    ] {
        assert!(header.split(',').any(|c| c == column), "summary.csv lacks {column}: {header}");
    }
    assert_eq!(summary.lines().count(), 1 + 6);
    let runs = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    assert!(runs.starts_with("clients,strategy,replicate,seed,truncated,calls,"), "{runs}");
    assert_eq!(runs.lines().count(), 1 + 6 * 4);
    let timeline = std::fs::read_to_string(out.join("timeline.csv")).unwrap();
    assert!(timeline.starts_with("clients,strategy,bucket_start_ms,calls,retries\n"), "{timeline}");

    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["master_seed"], 11);
    assert_eq!(manifest["points"], 6);
    assert_eq!(manifest["scenario"]["sha256"].as_str().unwrap().len(), 64);
    assert!(manifest["events"].as_u64().unwrap() > 0);
    let png = std::fs::read(out.join("calls.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}

#[test]
fn run_defaults_to_results_folder_named_after_the_scenario() {
    let dir = tempfile::tempdir().unwrap();
    write_scenario(dir.path(), "tiny.toml", &SMALL.replace("replicates = 4", "replicates = 1"));
    retrylab().current_dir(dir.path()).args(["run", "tiny.toml", "--quiet"]).assert().success().stdout("");
    assert_eq!(listing(&dir.path().join("results").join("tiny")), EXPECTED_FILES);
}

#[test]
fn command_line_overrides_reach_the_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "small.toml", SMALL);
    let out = dir.path().join("out");
    retrylab()
        .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--seed", "5", "--replicates", "2"])
        .args(["--set", "strategy=none", "--set", "sweep.clients=[3, 4, 5]", "-q"])
        .assert()
        .success();
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(summary.starts_with("clients,replicates,"), "strategy is no longer swept: {summary}");
    assert_eq!(summary.lines().count(), 1 + 3);
    assert!(summary.lines().skip(1).all(|row| row.split(',').nth(1) == Some("2")));
}

#[test]
fn validate_checks_without_writing() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "small.toml", SMALL);
    retrylab()
        .current_dir(dir.path())
        .args(["validate", scenario.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("ok: ").and(predicate::str::contains("6 points × 4 replicates")));
    assert_eq!(listing(dir.path()), ["small.toml"]);
}

#[test]
fn validate_takes_set_like_run() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "small.toml", SMALL);
    retrylab()
        .current_dir(dir.path())
        .args(["validate", scenario.to_str().unwrap(), "--set", "strategy=none", "--set", "charts.timeline_until=1s"])
        .assert()
        .success()
        .stdout(predicate::str::contains("2 points × 4 replicates"));
    retrylab()
        .current_dir(dir.path())
        .args(["validate", scenario.to_str().unwrap(), "--set", "charts.timeline_until=soon"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("small.toml: --set charts.timeline_until=soon: charts.timeline_until:"));
    assert_eq!(listing(dir.path()), ["small.toml"]);
}

#[test]
fn strategies_lists_every_strategy_with_its_formula_and_numbering() {
    let assert = retrylab().arg("strategies").assert().success();
    let text = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    for name in [
        "none",
        "constant",
        "linear",
        "exponential",
        "full-jitter",
        "equal-jitter",
        "decorrelated-jitter",
        "decorrelated-range-clamp",
        "polly-v2",
    ] {
        assert!(text.lines().any(|line| line.trim_start().starts_with(name)), "missing {name}");
    }
    assert!(text.contains("min(c, b·m^n)"));
    assert!(text.contains("first retry has n = 1"));
}

#[test]
fn help_shows_examples() {
    retrylab().args(["run", "--help"]).assert().success().stdout(predicate::str::contains("Examples:"));
    retrylab()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("retrylab run scenarios/aws-jitter-2015.toml"));
}

fn assert_bad_input(from: &str, to: &str, expected: &[&str]) {
    assert_refused(SMALL, "bad.toml", from, to, expected);
}

#[test]
fn malformed_toml() {
    assert_bad_input("[model]", "[model", &["bad.toml:7:", "invalid TOML"]);
}

#[test]
fn unknown_key() {
    assert_bad_input("seed = 11", "sede = 11", &["bad.toml:3:1", "sede", "valid keys:"]);
}

#[test]
fn wrong_type() {
    assert_bad_input(
        "clients = 10",
        "clients = \"ten\"",
        &["bad.toml:9:11", "model.clients", "expected a whole number"],
    );
}

#[test]
fn negative_duration() {
    assert_bad_input("base = \"5ms\"", "base = \"-5ms\"", &["bad.toml:13:8", "client.base", "negative"]);
}

#[test]
fn unitless_duration() {
    assert_bad_input("cap = \"2s\"", "cap = 2", &["bad.toml:14:7", "client.cap", "unit"]);
}

#[test]
fn cap_below_base() {
    assert_bad_input("cap = \"2s\"", "cap = \"1ms\"", &["bad.toml:14:7", "client.cap", "must be at least base"]);
}

#[test]
fn zero_clients() {
    assert_bad_input(
        "clients = [5, 15]",
        "clients = [5, 0]",
        &["bad.toml:17:15", "sweep.clients", "0 is out of range"],
    );
}

#[test]
fn zero_replicates() {
    assert_bad_input("replicates = 4", "replicates = 0", &["bad.toml:4:14", "replicates", "from 1"]);
}

#[test]
fn unknown_strategy() {
    assert_bad_input(
        "\"full-jitter\", \"decorrelated-jitter\"]",
        "\"full-jiter\", \"decorrelated-jitter\"]",
        &["bad.toml:18:28", "sweep.strategy", "unknown strategy \"full-jiter\"", "valid: none, constant, linear"],
    );
}

#[test]
fn missing_file_is_bad_input() {
    let assert = retrylab().args(["run", "no/such/scenario.toml"]).assert().code(2);
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert!(stderr.starts_with("Error: cannot read scenario no/such/scenario.toml: "), "{stderr}");
    assert_eq!(stderr.matches("os error").count(), 1, "the cause is printed once: {stderr}");
}

#[test]
fn a_parameter_swept_twice() {
    assert_bad_input(
        "clients = [5, 15]",
        "clients = [5, 15]\n\"model.clients\" = [3, 4]",
        &["bad.toml:18:1", "already swept"],
    );
}

#[test]
fn a_timeline_bucket_too_fine_to_store() {
    assert_bad_input("timeline_bucket = \"10ms\"", "timeline_bucket = \"1ns\"", &["bad.toml:5:19", "at least 1us"]);
}

#[test]
fn a_range_too_long_to_run() {
    assert_bad_input(
        "clients = [5, 15]",
        "base = { from = \"0ns\", to = \"18446744073709551615ns\", step = \"1ns\" }",
        &["sweep.base", "more than"],
    );
}

#[test]
fn timeline_falls_back_when_set_moves_the_pinned_point() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{SMALL}\n[charts]\ntimeline_at = {{ clients = 15 }}\n");
    let scenario = write_scenario(dir.path(), "small.toml", &text);
    let out = dir.path().join("out");
    retrylab()
        .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"])
        .args(["--set", "sweep.clients=[2, 3, 4]"])
        .assert()
        .success();
    let svg = std::fs::read_to_string(out.join("timeline.svg")).unwrap();
    assert!(svg.contains("at clients=3"), "the middle of the new axis is drawn");
}

#[test]
fn set_on_an_unknown_key() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "small.toml", SMALL);
    let out = dir.path().join("out");
    retrylab()
        .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--set", "clientz=3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--set clientz=3: clientz: unknown key `clientz`; valid keys:"));
    assert!(!out.exists());
}

#[test]
fn unwritable_output_folder() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "small.toml", SMALL);
    // A regular file where a folder is needed cannot be written into, even by root.
    let blocker = dir.path().join("blocker");
    std::fs::write(&blocker, "not a folder").unwrap();
    let out = blocker.join("out");
    retrylab()
        .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!("--out {}: {} is a file", out.display(), blocker.display())));
    assert!(blocker.is_file(), "the file stays as it was");
}

#[test]
fn usage_errors_exit_2() {
    retrylab().args(["run"]).assert().code(2);
    retrylab().args(["run", "x.toml", "--threads", "0"]).assert().code(2);
    retrylab().args(["frobnicate"]).assert().code(2);
}

#[test]
fn runs_that_hit_the_event_cap_are_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "small.toml", SMALL);
    let out = dir.path().join("out");
    let assert = retrylab()
        .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"])
        .args(["--set", "max_events_per_run=1000", "--set", "sweep.clients=[5, 200]"])
        .assert()
        .success();
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("warning: small: 12 of 24 runs stopped at max_events_per_run = 1000"), "{stderr}");
    let runs = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    let truncated = runs.lines().skip(1).filter(|row| row.split(',').nth(4) == Some("1")).count();
    assert_eq!(truncated, 12, "every 200-client run needs more than 1000 events");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["truncated_runs"], 12);
}

#[test]
fn list_points_prints_the_canonical_points_with_stable_ids_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "small.toml", SMALL);
    let list = |extra: &[&str]| -> Vec<Vec<String>> {
        let assert = retrylab()
            .current_dir(dir.path())
            .args(["run", scenario.to_str().unwrap(), "--list-points"])
            .args(extra)
            .assert()
            .success();
        let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
        stdout.lines().map(|line| line.split('\t').map(str::to_owned).collect()).collect()
    };
    let lines = list(&[]);
    assert_eq!(lines[0][..3], ["scenario", "index", "id"]);
    assert_eq!(lines.len(), 1 + 6, "a header and the 6 points of SMALL: {lines:?}");
    for (row, line) in lines[1..].iter().enumerate() {
        assert_eq!(line[1], row.to_string());
        assert!(line[2].len() == 12 && line[2].chars().all(|c| c.is_ascii_hexdigit()), "{line:?}");
    }
    assert_eq!(list(&[]), lines, "the same ids every time");
    // A point keeps its id when the sweep around it changes (the id hashes every parameter of the point).
    let narrowed = list(&["--set", "sweep.clients=[5]"]);
    assert!(narrowed[1..].iter().all(|line| lines[1..].iter().any(|l| l[2] == line[2] && l[3..] == line[3..])));
    assert!(!dir.path().join("results").exists(), "nothing is run or written");
}

#[test]
fn delays_prints_a_table_csv_or_raw_samples_and_is_deterministic() {
    let run = |args: &[&str]| {
        let assert = retrylab().arg("delays").args(args).assert().success();
        String::from_utf8(assert.get_output().stdout.clone()).unwrap()
    };
    let csv = run(&["k8s-crashloop", "--retries", "4", "--csv"]);
    assert_eq!(
        csv,
        "retry,mean_ms,p10_ms,p50_ms,p90_ms,min_ms,max_ms,at_mean_ms\n1,0,0,0,0,0,0,0\n\
         2,10000,10000,10000,10000,10000,10000,10000\n3,20000,20000,20000,20000,20000,20000,30000\n\
         4,40000,40000,40000,40000,40000,40000,70000\n"
    );
    let table = run(&["botocore-standard", "--samples", "1000"]);
    assert!(table.contains("b=50ms (1s after throttling)") && table.contains("--error throttling"), "{table}");
    let raw = run(&["full-jitter", "--set", "base=10ms", "--retries", "2", "--samples", "50", "--seed", "3", "--raw"]);
    assert_eq!(raw.lines().count(), 1 + 2 * 50);
    assert_eq!(
        raw,
        run(&["full-jitter", "--set", "base=10ms", "--retries", "2", "--samples", "50", "--seed", "3", "--raw"])
    );
}

#[test]
fn delays_refuses_bad_arguments_with_exit_2_and_the_argument_named() {
    for (args, expected) in [
        (vec!["ful-jitter"], "STRATEGY: \"ful-jitter\" is neither a strategy nor a preset"),
        (vec!["full-jitter", "--set", "clients=5"], "--set clients=5: clients: not a backoff key"),
        (vec!["full-jitter", "--set", "cap=soon"], "--set cap=soon: client.cap: \"soon\" is not a duration"),
        (vec!["full-jitter", "--set", "base=2s", "--set", "cap=1s"], "cap (1s) must be at least base (2s)"),
        (vec!["full-jitter", "--set", "max_attempts=1"], "never retries (max_attempts = 1)"),
        (vec!["full-jitter", "--retries", "0"], "--retries"),
        (vec!["full-jitter", "--error", "slow"], "--error"),
    ] {
        let assert = retrylab().arg("delays").args(&args).assert().code(2);
        let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn list_points_and_show_say_which_policy_each_point_runs_with_presets_resolved() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"schema_version = 1
replicates = 1
[model]
kind = "server"
[workload]
kind = "burst"
clients = 20
[sweep]
strategy = ["botocore-standard", "full-jitter"]
limiter = ["preset", "off"]
"#;
    let scenario = write_scenario(dir.path(), "policies.toml", text);
    let listed = retrylab().args(["run", scenario.to_str().unwrap(), "--list-points"]).assert().success();
    let listed = String::from_utf8(listed.get_output().stdout.clone()).unwrap();
    let lines: Vec<&str> = listed.lines().collect();
    assert!(lines[0].ends_with("strategy\tlimiter\tpolicy\tmodel"), "{listed}");
    // `preset` runs the preset's limiter, and the policy column names it; `off` runs none; a plain strategy has
    // no preset, so `preset` runs none there.
    assert!(
        lines[1].contains("botocore-standard\tpreset\t") && lines[1].contains("limiter aws-quota-2026 (the preset's)")
    );
    assert!(lines[2].contains("botocore-standard\toff\t") && lines[2].contains("limiter none"), "{listed}");
    assert!(lines[3].contains("full-jitter\tpreset\tfull-jitter b=5ms c=2s m=2, unlimited attempts"), "{listed}");
    assert!(lines[3].contains("limiter none, retry_on 429, 502, 503, 504, timeout, reset, rejected\t"), "{listed}");
    let out = dir.path().join("out");
    retrylab().args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"]).assert().success();
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["policies"].as_array().unwrap().len(), 4);
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(summary.lines().nth(1).unwrap().starts_with("botocore-standard,preset,"), "{summary}");
    // A swept `none` beside a preset that brings a limiter is refused, with what to write instead.
    let none = write_scenario(dir.path(), "none.toml", &text.replace("\"preset\", \"off\"", "\"none\", \"off\""));
    let refused = retrylab().args(["validate", none.to_str().unwrap()]).assert().code(2);
    let stderr = String::from_utf8(refused.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("none.toml:10:1: client.limiter") && stderr.contains("write \"preset\" for that"),
        "{stderr}"
    );
    let shown = retrylab().env("COLUMNS", "200").args(["show", out.to_str().unwrap()]).assert().success();
    let shown = String::from_utf8(shown.get_output().stdout.clone()).unwrap();
    assert!(shown.contains("client policy per point:"), "{shown}");
    assert!(shown.contains("strategy=botocore-standard limiter=off: full-jitter-from-base b=50ms"), "{shown}");
}

#[test]
fn a_reader_that_stops_early_ends_the_output_quietly_with_success() {
    use std::io::Read;
    // About 10 MB of samples: far more than a pipe holds, so the writer meets the closed pipe.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(["delays", "full-jitter", "--raw", "--samples", "1000000", "--retries", "1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0_u8; 100];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{:?}: {}", output.status, String::from_utf8_lossy(&output.stderr));
    assert!(output.stderr.is_empty(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&head).starts_with("retry,sleep_ms"));
}
