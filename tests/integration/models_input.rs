//! Each model's scenarios through the real binary: a small scenario of the server, the channel and a call graph
//! that runs, and each one's bad input refused with exit code 2 and a message naming file, position and key,
//! with nothing written; heatmap and grouped-bar options the same way.

use predicates::prelude::*;

use crate::common::{assert_refused, retrylab, write_scenario};

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
    assert!(
        timeline.starts_with("bucket_start_ms,calls,goodput,offered,retries,late,rejected,queue_max\n"),
        "{timeline}"
    );
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
    assert!(
        !headers.iter().any(|h| h.starts_with("amplification_l5")),
        "a graph of four services has no column for a fifth: {headers:?}"
    );
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
    for text in ["by outage_duration and rate", "recovery_ms", "limiter=none", "limiter=budget", "500ms", "150"] {
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
fn server_retry_on_with_an_unknown_outcome_or_a_status_that_is_no_error() {
    assert_bad_server_input(
        "timeout = \"1s\"",
        "timeout = \"1s\"\nretry_on = [\"503\", \"tiemout\"]",
        &["server.toml:19:12", "client.retry_on", "unknown outcome \"tiemout\"", "timeout, reset, rejected"],
    );
    assert_bad_server_input(
        "timeout = \"1s\"",
        "timeout = \"1s\"\nretry_on = [\"503\", 5]",
        &["server.toml:19:20", "client.retry_on", "found an integer in the list"],
    );
    assert_bad_server_input(
        "timeout = \"1s\"",
        "timeout = \"1s\"\nretry_on = \"200\"",
        &["server.toml:19:12", "client.retry_on", "not an error status"],
    );
}

#[test]
fn graph_retry_on_with_an_unknown_outcome_in_a_layer_table() {
    assert_bad_graph(
        "workers = 4\n",
        "workers = 4\nretry_on = [\"5xx\", \"later\"]\n",
        &["graph.toml:32:12", "layer.db.retry_on", "unknown outcome \"later\""],
    );
}

#[test]
fn graph_stacks_limiters_from_a_toml_array_and_refuses_an_unknown_member() {
    assert_bad_graph(
        "workers = 4\n",
        "workers = 4\nlimiter = [\"grpc\", \"budgte\"]\n",
        &["graph.toml:32:20", "layer.db.limiter", "unknown limiter \"budgte\""],
    );
    let dir = tempfile::tempdir().unwrap();
    let text =
        GRAPH.replace("timeout = \"1s\"", "timeout = \"1s\"\nmax_attempts = 3\nlimiter = [\"grpc\", \"budget\"]");
    let scenario = write_scenario(dir.path(), "graph.toml", &text);
    let listed = retrylab().args(["run", scenario.to_str().unwrap(), "--list-points"]).assert().success();
    let listed = String::from_utf8(listed.get_output().stdout.clone()).unwrap();
    assert!(listed.contains("limiter grpc (max_tokens 10, token_ratio 0.1) + budget 0.2"), "{listed}");
}
