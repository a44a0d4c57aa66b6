//! The real binary, driven as a user would: outputs, help, and bad input (exit code 2, a located message, no
//! panic, nothing written).

use crate::common::{SMALL, listing, retrylab, write_scenario};
use predicates::prelude::*;

const EXPECTED_FILES: &[&str] = &[
    "calls.png",
    "calls.svg",
    "completion_ms.png",
    "completion_ms.svg",
    "manifest.json",
    "report.html",
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
    assert!(timeline.starts_with("clients,strategy,bucket_start_ms,calls\n"));

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

/// Runs `run` on a scenario made from `base` with one substitution, saved as `name`, and checks the failure:
/// exit code 2, one `Error:` line naming the file and containing every `expected` piece, no panic, no output.
fn assert_refused(base: &str, name: &str, from: &str, to: &str, expected: &[&str]) {
    let text = base.replace(from, to);
    assert_ne!(text, base, "substitution {from} → {to} changed nothing");
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), name, &text);
    let out = dir.path().join("out");
    let assert = retrylab().args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()]).assert().code(2);
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert!(stderr.starts_with("Error: "), "{stderr}");
    assert!(stderr.contains(&format!("{name}:")), "names the file: {stderr}");
    for piece in expected {
        assert!(stderr.contains(piece), "expected {piece:?} in: {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one clear message: {stderr}");
    assert!(!out.exists(), "nothing may be written for bad input");
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
        .stderr(predicate::str::contains("cannot write to output folder"));
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

/// A small server scenario for the server model's bad-input cases.
const SERVER: &str = r#"schema_version = 1
replicates = 2

[model]
kind = "server"
workers = 2
queue_limit = 10
error_probability = 0.1
faults = "2s..3s fail-fast"

[workload]
kind = "open"
rate = 50
duration = "5s"

[client]
strategy = "full-jitter"
timeout = "1s"
"#;

fn assert_bad_server_input(from: &str, to: &str, expected: &[&str]) {
    assert_refused(SERVER, "server.toml", from, to, expected);
}

#[test]
fn the_server_scenario_runs() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "server.toml", SERVER);
    let out = dir.path().join("out");
    retrylab().args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"]).assert().success();
    for file in ["summary.csv", "timeline.svg", "goodput.png", "latency_cdf.svg", "calls.png"] {
        assert!(out.join(file).exists(), "{file}");
    }
    let timeline = std::fs::read_to_string(out.join("timeline.csv")).unwrap();
    assert!(timeline.starts_with("bucket_start_ms,calls,goodput,offered,queue_max\n"), "{timeline}");
}

#[test]
fn server_probability_outside_zero_to_one() {
    assert_bad_server_input(
        "error_probability = 0.1",
        "error_probability = 1.5",
        &["server.toml:8:21", "model.error_probability", "out of range"],
    );
}

#[test]
fn server_inverted_fault_window() {
    assert_bad_server_input(
        "\"2s..3s fail-fast\"",
        "\"3s..2s fail-fast\"",
        &["server.toml:9:10", "model.faults", "ends before it starts"],
    );
}

#[test]
fn server_overlapping_fault_windows() {
    assert_bad_server_input(
        "\"2s..3s fail-fast\"",
        "\"2s..3s fail-fast, 2.5s..4s black-hole\"",
        &["server.toml:9:10", "model.faults", "overlaps"],
    );
}

#[test]
fn server_schedule_with_a_gap_or_a_negative_rate() {
    assert_bad_server_input(
        "rate = 50",
        "schedule = \"1s=50\"",
        &["server.toml:13:12", "workload.schedule", "must start at 0s"],
    );
    assert_bad_server_input("rate = 50", "schedule = \"0s=50, 2s=-5\"", &["workload.schedule", "from 0 to 1e9"]);
}

#[test]
fn server_without_workers() {
    assert_bad_server_input("workers = 2", "workers = 0", &["server.toml:6:11", "model.workers", "0 is out of range"]);
    assert_bad_server_input("workers = 2\n", "", &["model.queue_limit", "needs a finite number of workers"]);
}

#[test]
fn server_black_hole_without_a_timeout() {
    let text = SERVER.replace("timeout = \"1s\"\n", "").replace("fail-fast", "black-hole");
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "server.toml", &text);
    retrylab()
        .args(["validate", scenario.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("model.faults: a black-hole window needs a client `timeout`"));
}

/// A small channel scenario for the channel model's bad-input cases.
const CHANNEL: &str = r#"schema_version = 1
replicates = 2

[model]
kind = "channel"
protocol = "ethernet"
population = "saturated"
stations = 4
frame_bytes = 512
slot_time = "51.2us"
slots = 1000

[sweep]
load = [0.5, 1.0]
"#;

fn assert_bad_channel_input(from: &str, to: &str, expected: &[&str]) {
    assert_refused(CHANNEL, "channel.toml", from, to, expected);
}

#[test]
fn the_channel_scenario_runs() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "channel.toml", CHANNEL);
    let out = dir.path().join("out");
    retrylab().args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"]).assert().success();
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(summary.starts_with("load,replicates,throughput_mean,"), "{summary}");
}

#[test]
fn channel_load_must_be_positive() {
    assert_bad_channel_input(
        "load = [0.5, 1.0]",
        "load = [0.5, 0.0]",
        &["channel.toml:14:1", "model.load", "greater than 0"],
    );
}

#[test]
fn channel_frame_sizes_stay_within_ethernet_limits() {
    assert_bad_channel_input(
        "frame_bytes = 512",
        "frame_bytes = 1519",
        &["channel.toml:9:15", "model.frame_bytes", "from 64 to 1518"],
    );
    assert_bad_channel_input("frame_bytes = 512", "frame_bytes = 63", &["model.frame_bytes", "out of range"]);
}

#[test]
fn channel_needs_stations_and_a_slot() {
    assert_bad_channel_input("stations = 4", "stations = 0", &["channel.toml:8:12", "model.stations", "out of range"]);
    assert_bad_channel_input(
        "slot_time = \"51.2us\"",
        "slot_time = \"0s\"",
        &["channel.toml:10:13", "model.slot_time", "longer than 0"],
    );
}

/// A call graph: api calls auth and catalog, both call db.
const GRAPH: &str = r#"schema_version = 1
name = "graph"
seed = 5
replicates = 2

[model]
kind = "layers"
failure_probability = 0.01

[workload]
requests = 200

[client]
timeout = "1s"

[layer.api]
calls = ["auth", "catalog"]
workers = 8

[layer.auth]
calls = "db"

[layer.catalog]
calls = "db"
fanout = 3
hedge = "fixed"
hedge_delay = "20ms"
hedge_max_extra = 0.1

[layer.db]
workers = 4
service = "exponential"
"#;

fn assert_bad_graph(from: &str, to: &str, expected: &[&str]) {
    assert_refused(GRAPH, "graph.toml", from, to, expected);
}

#[test]
fn the_graph_scenario_runs_and_reports_every_service() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "graph.toml", GRAPH);
    let out = dir.path().join("out");
    retrylab().args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()]).assert().success();
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(summary.as_bytes());
    let headers = rows.headers().unwrap().clone();
    let row = rows.records().next().unwrap().unwrap();
    let value = |name: &str| -> f64 {
        let index = headers.iter().position(|h| h == name).unwrap_or_else(|| panic!("no {name} in {headers:?}"));
        if row[index].is_empty() { f64::NAN } else { row[index].parse().unwrap() }
    };
    // api, auth, catalog, db: db gets 1 call via auth and 3 via catalog per request, plus retries and hedges.
    assert!(value("amplification_l1_mean") >= 1.0);
    assert!(value("amplification_l4_mean") >= 4.0);
    assert!(value("amplification_l5_mean").is_nan());
}

#[test]
fn graph_refers_to_a_missing_layer() {
    assert_bad_graph(
        "calls = \"db\"\n\n[layer.catalog]",
        "calls = \"dbx\"\n\n[layer.catalog]",
        &["graph.toml:21:9", "layer.auth.calls", "there is no [layer.dbx]", "layer.api, layer.auth"],
    );
}

#[test]
fn graph_with_a_cycle() {
    assert_bad_graph(
        "workers = 4\nservice",
        "workers = 4\ncalls = \"auth\"\nservice",
        &["graph.toml:", "layer.", "cycle in the graph", "auth → db → auth"],
    );
}

#[test]
fn graph_with_two_entries() {
    assert_bad_graph(
        "[layer.db]",
        "[layer.extra]\n\n[layer.db]",
        &["graph.toml:", "layer.extra", "nothing links to api or extra"],
    );
}

#[test]
fn graph_and_a_layer_count_together() {
    assert_bad_graph(
        "failure_probability = 0.01",
        "failure_probability = 0.01\nlayers = 4",
        &["graph.toml:9:10", "model.layers", "remove `layers`"],
    );
}

#[test]
fn graph_unknown_key_in_a_layer() {
    assert_bad_graph(
        "fanout = 3",
        "fanout = 3\nworkerz = 2",
        &["graph.toml:", "layer.catalog.workerz", "valid keys: calls"],
    );
}

#[test]
fn graph_hedge_delay_zero_without_a_cap() {
    assert_bad_graph(
        "hedge_delay = \"20ms\"\nhedge_max_extra = 0.1",
        "hedge_delay = \"0ms\"",
        &["graph.toml:27:15", "layer.catalog.hedge_delay", "zero delay", "hedge_max_extra"],
    );
}

#[test]
fn graph_budget_above_100_percent() {
    assert_bad_graph(
        "workers = 8",
        "workers = 8\nlimiter = \"budget\"\nbudget = 1.5",
        &["graph.toml:20:10", "layer.api.budget", "out of range"],
    );
}

#[test]
fn graph_black_hole_without_a_timeout() {
    let without_timeouts = GRAPH.replace("timeout = \"1s\"\n", "");
    assert_refused(
        &without_timeouts,
        "graph.toml",
        "workers = 4\n",
        "workers = 4\nfaults = \"1s..2s black-hole\"\n",
        &["graph.toml:", "layer.db.faults", "black-hole window at \"db\"", "need a `timeout`"],
    );
}

#[test]
fn layer_tables_in_a_model_without_parts() {
    assert_refused(
        SERVER,
        "server.toml",
        "[client]",
        "[layer.a]\n\n[client]",
        &["server.toml:", "takes no [layer.*] tables"],
    );
}

/// A small server sweep over a trigger's length and the load, with a heatmap and grouped bars.
const TRIGGERED: &str = r#"schema_version = 1
replicates = 2
timeline_bucket = "100ms"

[model]
kind = "server"
workers = 2
outage_start = "1s"

[workload]
kind = "open"
duration = "3s"

[client]
timeout = "200ms"
max_attempts = 3

[sweep]
outage_duration = ["0s", "500ms"]
rate = [50, 150]
limiter = ["none", "budget"]

[charts]
heatmap = { x = "outage_duration", y = "rate", metric = "recovery_ms" }

[charts.bars]
metrics = ["amplification", "success_rate"]
series = "limiter"
at = { rate = 150 }
name = "per_limiter"
"#;

#[test]
fn heatmap_and_grouped_bars_are_written_as_svg_and_png() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "triggered.toml", TRIGGERED);
    let out = dir.path().join("out");
    retrylab().args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"]).assert().success();
    for stem in ["heatmap_recovery_ms", "per_limiter"] {
        let svg = std::fs::read_to_string(out.join(format!("{stem}.svg"))).unwrap();
        assert!(svg.starts_with("<svg"), "{stem}.svg");
        let png = std::fs::read(out.join(format!("{stem}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{stem}.png");
    }
    let heatmap = std::fs::read_to_string(out.join("heatmap_recovery_ms.svg")).unwrap();
    for text in ["recovery_ms by outage_duration and rate", "limiter=none", "limiter=budget", "500ms", "150"] {
        assert!(heatmap.contains(text), "the heatmap shows {text:?}");
    }
    let bars = std::fs::read_to_string(out.join("per_limiter.svg")).unwrap();
    for text in ["amplification and success_rate by limiter", "at outage_duration=500ms, rate=150", "budget"] {
        assert!(bars.contains(text), "the bars chart shows {text:?}");
    }
}

#[test]
fn a_heatmap_whose_axis_set_removed_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "triggered.toml", TRIGGERED);
    let out = dir.path().join("out");
    retrylab()
        .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q", "--set", "rate=150"])
        .assert()
        .success();
    assert!(!out.join("heatmap_recovery_ms.svg").exists(), "rate is no longer swept");
    assert!(out.join("per_limiter.svg").exists(), "the bars chart does not need rate");
}

fn assert_bad_triggered_input(from: &str, to: &str, expected: &[&str]) {
    assert_refused(TRIGGERED, "triggered.toml", from, to, expected);
}

#[test]
fn heatmap_options_are_checked() {
    assert_bad_triggered_input(
        "y = \"rate\"",
        "y = \"workers\"",
        &["triggered.toml:24:40", "charts.heatmap.y", "\"workers\" is not swept; swept parameters: outage_duration"],
    );
    assert_bad_triggered_input(
        "metric = \"recovery_ms\"",
        "metric = \"recovery\"",
        &["triggered.toml:24:57", "charts.heatmap.metric", "unknown metric \"recovery\"; valid: calls"],
    );
    assert_bad_triggered_input(
        "metric = \"recovery_ms\" }",
        "metric = \"recovery_ms\", at = { limiter = \"breaker\" } }",
        &["triggered.toml:24:", "charts.heatmap.at.limiter", "breaker is not one of the swept values"],
    );
}

#[test]
fn bars_options_are_checked() {
    assert_bad_triggered_input(
        "\"success_rate\"]",
        "\"succes_rate\"]",
        &["triggered.toml:27:29", "charts.bars.metrics", "unknown metric \"succes_rate\""],
    );
    assert_bad_triggered_input(
        "at = { rate = 150 }",
        "at = { rate = 100 }",
        &["triggered.toml:29:15", "charts.bars.at.rate", "100 is not one of the swept values"],
    );
    assert_bad_triggered_input(
        "name = \"per_limiter\"",
        "name = \"goodput\"",
        &["triggered.toml:30:8", "charts.bars.name", "already written as \"goodput\""],
    );
}

#[test]
fn outage_parameters_are_checked() {
    assert_bad_triggered_input(
        "outage_duration = [\"0s\", \"500ms\"]",
        "outage_duration = [\"0s\", \"-5ms\"]",
        &["triggered.toml:19:26", "sweep.outage_duration", "negative"],
    );
    assert_bad_triggered_input(
        "outage_start = \"1s\"\n",
        "",
        &["triggered.toml:18:1", "model.outage_duration", "an outage needs `outage_start`"],
    );
    assert_bad_triggered_input(
        "workers = 2\n",
        "workers = 2\noutage_kind = \"melt-down\"\n",
        &[
            "triggered.toml:8:15",
            "model.outage_kind",
            "unknown outage_kind \"melt-down\"; valid: black-hole, fail-fast",
        ],
    );
    assert_bad_triggered_input(
        "timeout = \"200ms\"\n",
        "",
        &["triggered.toml:18:1", "model.outage_duration", "needs a client `timeout`"],
    );
}

#[test]
fn amplification_per_layer_as_grouped_bars() {
    let committed = std::fs::read_to_string("scenarios/layered-amplification.toml").unwrap();
    // The committed file draws its own bars (5 layers, by limiter); this test draws 3 layers by placement.
    let layered = &committed[..committed.find("[charts.bars]").unwrap_or(committed.len())];
    let text = format!(
        "{layered}\n[charts.bars]\nmetrics = [\"amplification_l1\", \"amplification_l2\", \"amplification_l3\"]\n\
         series = \"placement\"\nat = {{ layers = 3, attempts = 3, limiter = \"none\" }}\n"
    )
    .replace("requests = 200", "requests = 20");
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "layers.toml", &text);
    let out = dir.path().join("out");
    retrylab().args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"]).assert().success();
    let svg = std::fs::read_to_string(out.join("bars.svg")).unwrap();
    assert!(svg.contains("amplification_l1 … amplification_l3 by placement"), "the title names metrics and series");
    assert!(svg.contains("at layers=3, attempts=3, limiter=none"), "the pinned point is stated");
    // Bottom hard down, every layer retrying 3 attempts: 3, 9 and 27 calls per request reach layers 1 to 3.
    for value in ["3.00", "9.00", "27.0"] {
        assert!(svg.contains(&format!("\n{value}\n")), "value label {value} is drawn");
    }
    assert!(out.join("bars.png").exists());
}

#[test]
fn graph_token_ratio_must_be_positive() {
    assert_bad_graph(
        "workers = 8",
        "workers = 8\nlimiter = \"grpc\"\ntoken_ratio = 0",
        &["graph.toml:20:15", "layer.api.token_ratio", "must be greater than 0"],
    );
    assert_bad_graph(
        "workers = 8",
        "workers = 8\ntoken_ratio = -0.1",
        &["graph.toml:19:15", "layer.api.token_ratio", "out of range"],
    );
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
