//! Every setting that decides a verdict is visible (issue 30, item 1): the server's queue bound, workers,
//! timeouts and network, defaults resolved, in `--list-points` and manifest.json; and a run whose queue was still
//! growing when new work stopped says so, in its summary line, on stderr and in the manifest's `warnings`.

use super::common::{retrylab, write_scenario};

/// Ten workers of 10 ms each serve 1,000 requests per second; the sweep offers 500 (healthy) and 1,500 (the
/// queue grows by about 500 a second for 20 s). No `queue_limit`: the default, unbounded.
const QUEUE: &str = r#"schema_version = 1
name = "queue-grows"
seed = 7
replicates = 2
timeline_bucket = "500ms"

[model]
kind = "server"
workers = 10
service = "constant"
service_mean = "10ms"

[workload]
kind = "open"
duration = "20s"

[client]
timeout = "2s"
max_attempts = 2

[sweep]
rate = [500, 1500]
"#;

/// Runs `text` with `sets`: stdout, stderr, the manifest and report.html.
fn run(text: &str, sets: &[&str]) -> (String, String, serde_json::Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "queue-grows.toml", text);
    let out = dir.path().join("out");
    let mut command = retrylab();
    command.args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    for set in sets {
        command.args(["--set", set]);
    }
    let output = command.assert().success().get_output().clone();
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    (stdout, stderr, serde_json::from_str(&manifest).unwrap(), html)
}

#[test]
fn list_points_shows_the_models_settings_with_defaults_resolved() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "queue-grows.toml", QUEUE);
    let assert = retrylab().args(["run", scenario.to_str().unwrap(), "--list-points"]).assert().success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    let mut lines = stdout.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let model = header.iter().position(|column| *column == "model").expect("a model column");
    let first: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let settings = first[model];
    assert!(
        settings.starts_with("workers 10, queue_limit unset: unlimited (default), service constant,"),
        "{settings}"
    );
    assert!(settings.contains("network constant (default), network_delay 0s (default)"), "{settings}");
    assert!(settings.contains("timeout 2s,") && settings.contains("on_timeout abandon (default)"), "{settings}");
    assert!(settings.contains("limiter_scope fleet (default)"), "{settings}");
}

#[test]
fn a_queue_still_growing_when_new_work_stops_is_warned_about_everywhere() {
    let (stdout, stderr, manifest, html) = run(QUEUE, &[]);
    let warnings = manifest["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "only the overloaded point: {warnings:?}");
    let warning = warnings[0].as_str().unwrap();
    assert!(
        warning.starts_with("rate=1500: the server's queue was still growing when new work stopped at 20 s"),
        "{warning}"
    );
    assert!(
        warning.contains("for clients that had already given up"),
        "the 2 s timeout expires in the queue: {warning}"
    );
    assert!(warning.contains("queue_limit unset: unlimited (default)"), "{warning}");
    assert!(warning.contains("To change it: bound the queue with [model] queue_limit"), "{warning}");
    assert!(stdout.contains("; 1 warning (above, and in manifest.json)"), "{stdout}");
    assert!(stderr.contains(&format!("warning: queue-grows: {warning}")), "{stderr}");
    let settings = manifest["settings"].as_array().unwrap();
    assert_eq!(settings.len(), 2);
    assert!(settings[0].as_str().unwrap().contains("queue_limit unset: unlimited (default)"));
    assert!(html.contains("<h2 id=\"warnings\">Warnings</h2>"), "report.html leads with the warning");
    assert!(html.contains("was still growing when new work stopped at 20 s"), "report.html");
    assert!(html.find("id=\"warnings\"") < html.find("id=\"charts\""), "above the charts");
    assert!(
        html.contains("<tr><th>model settings</th><td>workers 10, queue_limit unset: unlimited (default)"),
        "{html}"
    );
}

#[test]
fn a_bounded_queue_or_a_healthy_load_is_not_warned_about() {
    let (stdout, _, manifest, html) = run(QUEUE, &["queue_limit=200"]);
    assert_eq!(manifest["warnings"].as_array().unwrap().len(), 0, "held at its bound: {manifest}");
    assert!(!stdout.contains("warning"), "{stdout}");
    assert!(manifest["settings"][1].as_str().unwrap().contains("queue_limit 200,"), "{manifest}");
    assert!(!html.contains("id=\"warnings\""), "no warnings section");
    let (_, _, manifest, _) = run(QUEUE, &["rate=900"]);
    assert_eq!(manifest["warnings"].as_array().unwrap().len(), 0, "below capacity: {manifest}");
}

#[test]
fn show_prints_the_warnings_and_the_model_settings() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "queue-grows.toml", QUEUE);
    let out = dir.path().join("out");
    retrylab().args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"]).assert().success();
    let assert = retrylab().args(["show", out.to_str().unwrap()]).env("COLUMNS", "100").assert().success();
    let shown = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    let joined = shown.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    assert!(joined.contains("warning: rate=1500: the server's queue was still growing"), "{shown}");
    assert!(joined.contains("model settings: workers 10, queue_limit unset: unlimited (default)"), "{shown}");
    assert!(shown.lines().all(|line| line.chars().count() <= 100), "fits COLUMNS: {shown}");
}

#[test]
fn a_call_graphs_services_show_the_settings_they_set_themselves() {
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/call-graph.toml");
    let assert = retrylab().args(["run", scenario, "--list-points"]).assert().success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    let mut lines = stdout.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let model = header.iter().position(|column| *column == "model").expect("a model column");
    let settings = lines.next().unwrap().split('\t').nth(model).unwrap().to_owned();
    assert!(settings.starts_with("workers 0 (default), queue_limit unset: unbounded (default),"), "{settings}");
    assert!(settings.contains("; frontend: workers 64, service_mean 1ms;"), "{settings}");
    assert!(settings.contains("; users: service exponential, service_mean 2ms;"), "{settings}");
    assert!(!settings.contains("; auth: workers"), "auth sets no workers of its own: {settings}");
}
