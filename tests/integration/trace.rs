//! `--trace`: every committed scenario exports a structurally valid Chrome trace of one replicate.

use std::collections::HashMap;
use std::path::Path;

use crate::common::retrylab;

/// (start µs, end µs, hedge?) of one span.
type Interval = (f64, f64, bool);

/// Checks a trace's structure; returns the number of attempt spans.
fn check_trace(json: &serde_json::Value, one_attempt_at_a_time: bool, name: &str) -> usize {
    let events = json["traceEvents"].as_array().unwrap_or_else(|| panic!("{name}: no traceEvents"));
    let mut by_thread: HashMap<(u64, u64), Vec<Interval>> = HashMap::new();
    let mut by_owner: HashMap<u64, Vec<Interval>> = HashMap::new();
    let mut spans = 0;
    for event in events {
        let ph = event["ph"].as_str().unwrap_or_else(|| panic!("{name}: event without ph: {event}"));
        let pid = event["pid"].as_u64().unwrap_or_else(|| panic!("{name}: event without pid: {event}"));
        if ph == "M" {
            assert!(event["args"]["name"].is_string() || event["args"]["sort_index"].is_u64(), "{name}: {event}");
            continue;
        }
        assert_eq!(ph, "X", "{name}: only complete events and metadata: {event}");
        spans += 1;
        assert!(event["name"].is_string() && event["cat"] == "attempt", "{name}: {event}");
        let ts = event["ts"].as_f64().unwrap_or_else(|| panic!("{name}: ts: {event}"));
        let dur = event["dur"].as_f64().unwrap_or_else(|| panic!("{name}: dur: {event}"));
        let tid = event["tid"].as_u64().unwrap_or_else(|| panic!("{name}: tid: {event}"));
        assert!(ts >= 0.0 && dur >= 0.0, "{name}: negative time: {event}");
        let args = &event["args"];
        assert!(args["attempt"].as_u64().is_some_and(|a| a >= 1), "{name}: attempt: {event}");
        for key in ["strategy", "outcome"] {
            assert!(args[key].is_string(), "{name}: args.{key}: {event}");
        }
        assert!(
            args["status"].is_u64() && args["backoff_slept_ms"].as_f64().is_some_and(|s| s >= 0.0),
            "{name}: {event}"
        );
        let hedge = args["hedge"].as_bool().unwrap_or_else(|| panic!("{name}: args.hedge: {event}"));
        by_thread.entry((pid, tid)).or_default().push((ts, ts + dur, hedge));
        by_owner.entry(pid).or_default().push((ts, ts + dur, hedge));
    }
    let overlapping = |list: &mut Vec<Interval>, allow_hedges: bool| {
        list.sort_by(|a, b| a.0.total_cmp(&b.0));
        list.windows(2).any(|pair| pair[1].0 < pair[0].1 - 1e-6 && !(allow_hedges && (pair[0].2 || pair[1].2)))
    };
    for (thread, list) in &mut by_thread {
        assert!(!overlapping(list, false), "{name}: spans of thread {thread:?} overlap");
    }
    if one_attempt_at_a_time {
        for (owner, list) in &mut by_owner {
            assert!(!overlapping(list, true), "{name}: attempts of owner {owner} overlap and are not hedges");
        }
    }
    spans
}

#[test]
fn every_committed_scenario_exports_a_valid_trace() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut scenarios: Vec<_> = std::fs::read_dir(root.join("scenarios"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .collect();
    scenarios.sort();
    assert!(scenarios.len() >= 15, "{scenarios:?}");
    let dir = tempfile::tempdir().unwrap();
    for scenario in scenarios {
        let stem = scenario.file_stem().unwrap().to_string_lossy().into_owned();
        let file = dir.path().join(format!("{stem}.json"));
        let out = dir.path().join(&stem);
        retrylab()
            .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--replicates", "1", "-q"])
            .args(["--trace", file.to_str().unwrap()])
            .assert()
            .success();
        let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let text = std::fs::read_to_string(&scenario).unwrap();
        // The layered and fan-out models run many attempts of one request at once (fan-out, nested layers), and a
        // queue hands a message out again when its visibility runs out mid-processing.
        let concurrent = ["layers", "fanout", "queue"].iter().any(|kind| text.contains(&format!("kind = \"{kind}\"")));
        let spans = check_trace(&json, !concurrent, &stem);
        assert!(spans > 0, "{stem}: an empty trace");
        assert_eq!(json["otherData"]["spans"].as_u64(), Some(spans as u64), "{stem}");
        if stem == "aws-jitter-2015" {
            // The traced run is the one in runs.csv: one span per WRITE call of point 0, replicate 0.
            let runs = std::fs::read_to_string(out.join("runs.csv")).unwrap();
            let mut reader = csv::Reader::from_reader(runs.as_bytes());
            let column = reader.headers().unwrap().iter().position(|h| h == "calls").unwrap();
            let first = reader.records().next().unwrap().unwrap();
            assert_eq!(first[column].parse::<f64>().unwrap(), spans as f64);
        }
    }
}

#[test]
fn a_trace_request_outside_the_sweep_is_refused() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scenario = root.join("scenarios/thundering-herd.toml");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for (flag, value, expected) in [
        ("--trace-point", "4", "--trace-point 4 is out of range"),
        ("--trace-replicate", "99", "--trace-replicate 99 is out of range"),
    ] {
        let assert = retrylab()
            .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--trace", "t.json", flag, value])
            .assert()
            .code(2);
        let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
        assert!(stderr.contains(expected), "{stderr}");
        assert!(!out.exists(), "nothing written for bad input");
    }
}

#[test]
fn an_otlp_trace_has_a_trace_per_request_and_a_span_per_attempt_under_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let (file, out) = (dir.path().join("herd.otlp.json"), dir.path().join("herd"));
    retrylab()
        .args(["run", root.join("scenarios/thundering-herd.toml").to_str().unwrap(), "-q", "--replicates", "1"])
        .args(["--set", "clients=50", "--out", out.to_str().unwrap(), "--trace", file.to_str().unwrap()])
        .args(["--trace-point", "1", "--trace-format", "otlp"])
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let spans = json["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap();
    let runs = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(runs.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let row = reader.records().nth(1).unwrap().unwrap();
    let metric = |name: &str| row[headers.iter().position(|h| h == name).unwrap()].parse::<f64>().unwrap();
    let roots: Vec<_> = spans.iter().filter(|s| s.get("parentSpanId").is_none()).collect();
    let attempts: Vec<_> = spans.iter().filter(|s| s.get("parentSpanId").is_some()).collect();
    assert_eq!(roots.len() as f64, metric("requests"));
    assert_eq!(
        attempts.len() as f64,
        metric("calls"),
        "point 1 is exponential backoff: every attempt reaches the server"
    );
    let attribute = |span: &serde_json::Value, key: &str| {
        span["attributes"].as_array().unwrap().iter().find(|a| a["key"] == key).map(|a| a["value"].clone())
    };
    for attempt in &attempts {
        let root = roots.iter().find(|r| r["traceId"] == attempt["traceId"]).expect("a root in its trace");
        assert_eq!(attempt["parentSpanId"], root["spanId"]);
        let number: u64 =
            attribute(attempt, "retrylab.attempt").unwrap()["intValue"].as_str().unwrap().parse().unwrap();
        let resend = attribute(attempt, "http.request.resend_count");
        match number {
            1 => assert!(resend.is_none(), "a first attempt carries no resend count"),
            n => assert_eq!(resend.unwrap()["intValue"], (n - 1).to_string()),
        }
        assert!(attempt["startTimeUnixNano"].as_str().unwrap().starts_with("17672256"), "from 2026-01-01");
    }
    let succeeded = roots.iter().filter(|r| r["status"]["code"] == 1).count();
    assert_eq!(succeeded as f64, metric("succeeded"));
}

/// Runs `scenario` with `sets`, tracing point 0 replicate 0 as OTLP into `file`; returns stdout.
fn otlp_trace(scenario: &str, sets: &[&str], file: &Path, out: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut command = retrylab();
    command
        .args(["run", root.join(scenario).to_str().unwrap(), "--replicates", "1", "--out", out.to_str().unwrap()])
        .args(["--trace", file.to_str().unwrap(), "--trace-format", "otlp"]);
    for set in sets {
        command.args(["--set", set]);
    }
    let assert = command.assert().success();
    String::from_utf8(assert.get_output().stdout.clone()).unwrap()
}

/// Every span of an OTLP file with the `service.name` of its resource.
fn spans_by_service(json: &serde_json::Value) -> Vec<(String, serde_json::Value)> {
    let mut all = Vec::new();
    for resource in json["resourceSpans"].as_array().unwrap() {
        let attributes = resource["resource"]["attributes"].as_array().unwrap();
        let name =
            attributes.iter().find(|a| a["key"] == "service.name").expect("a service.name")["value"]["stringValue"]
                .as_str()
                .unwrap()
                .to_owned();
        for span in resource["scopeSpans"][0]["spans"].as_array().unwrap() {
            all.push((name.clone(), span.clone()));
        }
    }
    all
}

fn has_attribute(span: &serde_json::Value, key: &str) -> bool {
    span["attributes"].as_array().unwrap().iter().any(|a| a["key"] == key)
}

#[test]
fn an_otlp_trace_has_a_service_per_layer_operation_names_and_drawn_trace_ids() {
    let dir = tempfile::tempdir().unwrap();
    let (file, out) = (dir.path().join("graph.json"), dir.path().join("graph"));
    let stdout = otlp_trace("scenarios/call-graph.toml", &["requests=300"], &file, &out);
    // The hint names tools that read OTLP, not Perfetto, which does not.
    assert!(stdout.contains("OpenTelemetry collector") && stdout.contains("Jaeger") && stdout.contains("Tempo"));
    assert!(!stdout.contains("perfetto"), "{stdout}");
    let bytes = std::fs::read(&file).unwrap();
    let all = spans_by_service(&serde_json::from_slice(&bytes).unwrap());
    let services: std::collections::BTreeSet<&str> = all.iter().map(|(service, _)| service.as_str()).collect();
    for service in ["clients", "frontend", "auth", "users", "search", "shard"] {
        assert!(services.contains(service), "{service} in {services:?}");
    }
    let mut names = std::collections::BTreeSet::new();
    let mut roots = Vec::new();
    for (service, span) in &all {
        let name = span["name"].as_str().unwrap();
        assert!(!name.chars().any(|c| c.is_ascii_digit()), "a number in the span name {name:?}");
        names.insert(name.to_owned());
        assert!(has_attribute(span, "retrylab.request"), "the request's number on {span}");
        if span.get("parentSpanId").is_none() {
            assert_eq!(service, "clients", "roots are the client fleet's");
            assert!(has_attribute(span, "retrylab.attempts") && has_attribute(span, "retrylab.outcome"), "{span}");
            roots.push(span["traceId"].as_str().unwrap().to_owned());
        } else if let Some(address) =
            span["attributes"].as_array().unwrap().iter().find(|a| a["key"] == "server.address")
        {
            assert_eq!(address["value"]["stringValue"], service.as_str(), "an attempt is filed under its service");
        }
    }
    assert!(names.len() <= 6, "a handful of operations: {names:?}");
    assert_eq!(roots.len(), 300, "a trace per request");
    // Drawn, not counted: no two traces share either 64-bit half of their ids.
    let halves: std::collections::BTreeSet<&str> = roots.iter().flat_map(|id| [&id[..16], &id[16..]]).collect();
    assert_eq!(halves.len(), 2 * roots.len());
    // The same run writes the same bytes.
    let again = dir.path().join("again.json");
    otlp_trace("scenarios/call-graph.toml", &["requests=300"], &again, &dir.path().join("again"));
    assert!(std::fs::read(&again).unwrap() == bytes, "the same seed, the same trace");
}

#[test]
fn a_queues_receives_are_its_consumers_and_its_messages_the_producers() {
    let dir = tempfile::tempdir().unwrap();
    let (file, out) = (dir.path().join("queue.json"), dir.path().join("queue"));
    otlp_trace("scenarios/queue-outage.toml", &["sweep.max_receives=[5]", "rate=5"], &file, &out);
    let all = spans_by_service(&serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap());
    for (service, span) in &all {
        let expected = if span.get("parentSpanId").is_none() { "producers" } else { "consumers" };
        assert_eq!(service, expected, "{span}");
        assert!(has_attribute(span, "retrylab.message"), "{span}");
    }
    assert!(all.iter().any(|(_, span)| span["name"] == "redelivery"), "an outage makes redeliveries");
}
