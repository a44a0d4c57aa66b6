//! `retrylab serve` (issue 31) on the real binary, spoken to over raw TCP so that malformed and hostile requests
//! can be sent as they are: the API's numbers equal `retrylab run`'s CSV cell for cell, bad input is a 4xx with
//! the CLI's message, foreign Host and Origin are refused, bodies are bounded, a newer run on a channel cancels the
//! older one, and Ctrl-C stops the server.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::retrylab;

/// A lab server on a free loopback port, stopped when dropped.
struct Lab {
    child: Child,
    port: u16,
}

impl Lab {
    fn start(inputs: &[&str]) -> Lab {
        let mut child = Command::new(env!("CARGO_BIN_EXE_retrylab"))
            .args(["serve", "--port", "0"])
            .args(inputs)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line
            .split("http://127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("no URL in the first line: {line:?}"));
        Lab { child, port }
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Sends `head` (request line and headers, without the blank line) and `body`; returns status and body.
    fn raw(&self, head: &str, body: &[u8]) -> (u16, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        let request = format!("{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
        stream.write_all(request.as_bytes()).unwrap();
        // A server may answer (413) before it has read a body it refuses; the rest of the write may then fail.
        let _ = stream.write_all(body);
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        let answer = String::from_utf8_lossy(&answer).into_owned();
        let status = answer.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
        let body = answer.split_once("\r\n\r\n").map_or(String::new(), |(_, body)| body.to_owned());
        (status, body)
    }

    fn get(&self, path: &str) -> (u16, Value) {
        let (status, body) = self.raw(&format!("GET {path} HTTP/1.1\r\nHost: {}", self.host()), b"");
        (status, serde_json::from_str(&body).unwrap_or(Value::String(body)))
    }

    fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let head = format!("POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json", self.host());
        let (status, body) = self.raw(&head, body.to_string().as_bytes());
        (status, serde_json::from_str(&body).unwrap_or(Value::String(body)))
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A CSV file as the API gives a table: its header and its rows of cells.
fn csv_table(path: &Path) -> Value {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let columns: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
    let rows: Vec<Vec<String>> =
        reader.records().map(|record| record.unwrap().iter().map(str::to_owned).collect()).collect();
    json!({ "columns": columns, "rows": rows })
}

#[test]
fn the_api_lists_the_committed_scenarios_and_gives_their_text() {
    let lab = Lab::start(&[]);
    let (status, catalog) = lab.get("/api/scenarios");
    assert_eq!(status, 200);
    let names: Vec<&str> =
        catalog["scenarios"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"thundering-herd") && names.contains(&"aws-jitter-2015"), "{names:?}");
    let (status, herd) = lab.get("/api/scenarios/thundering-herd");
    assert_eq!(status, 200);
    assert_eq!(herd["source"].as_str().unwrap(), std::fs::read_to_string("scenarios/thundering-herd.toml").unwrap());
    assert_eq!(herd["path"], "scenarios/thundering-herd.toml");
    let (status, page) = lab.get("/");
    assert_eq!(status, 200);
    assert!(page.as_str().unwrap().contains("<script src=\"/lab.js\">"));
}

#[test]
fn a_run_answers_the_cells_retrylab_run_writes() {
    let set = ["clients=300", "replicates=3", r#"strategy=["exponential", "full-jitter"]"#];
    let lab = Lab::start(&[]);
    let (status, answer) = lab.post("/api/run", &json!({ "scenario": "thundering-herd", "set": set }));
    assert_eq!(status, 200, "{answer}");
    let out = tempfile::tempdir().unwrap();
    let mut cli = retrylab();
    cli.args(["run", "scenarios/thundering-herd.toml", "--quiet", "--out"]).arg(out.path());
    for argument in set {
        cli.args(["--set", argument]);
    }
    assert!(cli.output().unwrap().status.success());
    assert_eq!(answer["summary"], csv_table(&out.path().join("summary.csv")));
    assert_eq!(answer["timeline"], csv_table(&out.path().join("timeline.csv")));
    assert_eq!(answer["paired"], csv_table(&out.path().join("paired.csv")));
    assert_eq!(answer["latency"], csv_table(&out.path().join("latency.csv")));
    let manifest: Value = serde_json::from_slice(&std::fs::read(out.path().join("manifest.json")).unwrap()).unwrap();
    assert_eq!(answer["warnings"], manifest["warnings"]);
    // The effective policy of each point, as the manifest names it, each distinct one once.
    let mut policies: Vec<Value> = Vec::new();
    for policy in manifest["policies"].as_array().unwrap() {
        if !policies.contains(policy) {
            policies.push(policy.clone());
        }
    }
    assert_eq!(policies.len(), 2, "{policies:?}");
    assert_eq!(answer["policies"], Value::Array(policies));
    assert_eq!(
        answer["command"],
        r#"retrylab run scenarios/thundering-herd.toml --set clients=300 --set replicates=3 --set 'strategy=["exponential", "full-jitter"]'"#
    );
}

/// `text` with every byte but letters and digits percent-encoded, as a query value.
fn query_value(text: &str) -> String {
    text.bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

#[test]
fn the_downloaded_scenario_gives_the_numbers_the_page_showed() {
    let set = ["clients=200", "replicates=2", r#"strategy=["none", "equal-jitter"]"#, "seed=11"];
    let lab = Lab::start(&[]);
    let (status, answer) = lab.post("/api/run", &json!({ "scenario": "thundering-herd", "set": set }));
    assert_eq!(status, 200, "{answer}");
    let query: Vec<String> = set.iter().map(|argument| format!("set={}", query_value(argument))).collect();
    let path = format!("/api/scenarios/thundering-herd/toml?{}", query.join("&"));
    let (status, text) = lab.raw(&format!("GET {path} HTTP/1.1\r\nHost: {}", lab.host()), b"");
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("set = [\n  \"clients=200\",\n"), "{text}");
    // Saved elsewhere under another name and run with no --set, it gives the page's cells.
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("my-herd.toml");
    std::fs::write(&file, &text).unwrap();
    let out = folder.path().join("out");
    let run = retrylab().arg("run").arg(&file).args(["--quiet", "--out"]).arg(&out).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert_eq!(answer["summary"], csv_table(&out.join("summary.csv")));
    assert_eq!(answer["timeline"], csv_table(&out.join("timeline.csv")));
    assert_eq!(answer["paired"], csv_table(&out.join("paired.csv")));
    // A bad override, or another query parameter, is refused as the run refuses it.
    let (status, answer) = lab.get(&format!("/api/scenarios/thundering-herd/toml?set={}", query_value("cap=fast")));
    assert_eq!((status, answer["field"].as_str()), (400, Some("set")), "{answer}");
    assert!(answer["error"].as_str().unwrap().contains("--set cap=fast: client.cap"), "{answer}");
    assert_eq!(lab.get("/api/scenarios/thundering-herd/toml?seed=3").0, 400);
    assert_eq!(lab.get("/api/scenarios/nothing/toml").0, 404);
}

#[test]
fn bad_input_gets_the_clis_message_and_a_4xx() {
    let lab = Lab::start(&[]);
    let (status, answer) = lab.post("/api/run", &json!({ "scenario": "thundering-herd", "set": ["clients=abc"] }));
    assert_eq!(status, 400);
    assert_eq!(answer["field"], "set");
    let cli = retrylab().args(["run", "scenarios/thundering-herd.toml", "--set", "clients=abc"]).output().unwrap();
    assert_eq!(cli.status.code(), Some(2));
    let printed = String::from_utf8(cli.stderr).unwrap();
    assert_eq!(printed.trim_end().strip_prefix("Error: ").unwrap(), answer["error"].as_str().unwrap());

    let cases: [(&str, &[u8], u16, &str); 6] = [
        ("POST /api/run", b"{not json", 400, "request body"),
        ("POST /api/run", br#"{"scenario": "thundering-herd", "sets": []}"#, 400, "unknown field `sets`"),
        ("POST /api/run", br#"{"scenario": "../../etc/passwd"}"#, 404, "no scenario named"),
        ("POST /api/run", br#"{"scenario": "thundering-herd", "set": [1]}"#, 400, "request body"),
        ("GET /results/../Cargo.toml", b"", 404, ""),
        ("GET /api/nothing-here", b"", 404, "no such page"),
    ];
    for (line, body, expected, says) in cases {
        let (status, answer) = lab.raw(&format!("{line} HTTP/1.1\r\nHost: {}", lab.host()), body);
        assert_eq!(status, expected, "{line} {}: {answer}", String::from_utf8_lossy(body));
        assert!(answer.contains(says), "{line}: {answer}");
    }
    let (status, answer) =
        lab.post("/api/run", &json!({ "scenario": "thundering-herd", "set": ["clients=100000000"] }));
    assert_eq!(status, 422, "{answer}");
    let message = answer["error"].as_str().unwrap();
    assert!(message.contains("too large for the lab") && message.contains("retrylab run scenarios/"), "{message}");

    // At most 64 overrides (or claims) a request: 64 bad overrides are judged on their text, 65 are too many.
    for (field, count, too_many) in [("set", 64, false), ("set", 65, true), ("claims", 65, true)] {
        let many = vec!["clients=abc"; count];
        let (status, answer) = lab.post("/api/run", &json!({ "scenario": "thundering-herd", field: many }));
        let said_too_many = answer["error"].as_str().unwrap_or("").starts_with("at most 64");
        assert_eq!((status, answer["field"].as_str(), said_too_many), (400, Some(field), too_many), "{answer}");
    }
    let query = vec![format!("set={}", query_value("clients=abc")); 65].join("&");
    let (status, answer) = lab.get(&format!("/api/scenarios/thundering-herd/toml?{query}"));
    assert_eq!((status, answer["error"].as_str()), (400, Some("at most 64 overrides")), "{answer}");
}

#[test]
fn foreign_hosts_and_origins_and_large_bodies_are_refused() {
    let lab = Lab::start(&[]);
    let (status, _) = lab.raw("GET /api/scenarios HTTP/1.1\r\nHost: attacker.example:80", b"");
    assert_eq!(status, 421, "a DNS name rebound to this machine");
    let (status, _) = lab.raw("GET /api/scenarios HTTP/1.1", b"");
    assert_eq!(status, 421, "no Host at all");
    let head = format!("GET /api/scenarios HTTP/1.1\r\nHost: {}\r\nOrigin: http://attacker.example", lab.host());
    assert_eq!(lab.raw(&head, b"").0, 403, "another site's page");
    let head = format!("GET /api/scenarios HTTP/1.1\r\nHost: {0}\r\nOrigin: http://{0}", lab.host());
    assert_eq!(lab.raw(&head, b"").0, 200, "the lab's own page");
    let head = format!("GET /api/scenarios HTTP/1.1\r\nHost: localhost:{}", lab.port);
    assert_eq!(lab.raw(&head, b"").0, 200, "localhost names a loopback server too");
    let huge = vec![b' '; retrylab::lab::MAX_BODY_BYTES + 1];
    let head = format!("POST /api/run HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json", lab.host());
    assert_eq!(lab.raw(&head, &huge).0, 413);
    assert_eq!(lab.get("/api/scenarios").0, 200, "the server keeps serving");
}

/// A study that takes seconds (4 strategies × 10 herds of 100,000 clients, just within the lab's size limit), so
/// that a request sent once it shows in /api/progress finds it still running.
const LONG_RUN: [&str; 2] = ["clients=100000", "replicates=10"];

#[test]
fn a_newer_run_on_a_channel_cancels_the_older() {
    let lab = std::sync::Arc::new(Lab::start(&[]));
    let first = {
        let lab = std::sync::Arc::clone(&lab);
        std::thread::spawn(move || {
            let set = LONG_RUN;
            lab.post("/api/run", &json!({ "scenario": "thundering-herd", "set": set, "channel": "pane" }))
        })
    };
    // Its progress counts the runs finished (4 strategies × 10 replicates in all) while it goes on.
    let started = Instant::now();
    loop {
        let (_, progress) = lab.get("/api/progress");
        let runs = progress["runs"].as_array().unwrap();
        if let Some(run) = runs.iter().find(|run| run["channel"] == "pane" && run["done"].as_u64() >= Some(1)) {
            assert_eq!(run["total"], 40, "{progress}");
            assert!(run["done"].as_u64() <= Some(40), "{progress}");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "the first run never showed progress: {progress}");
        std::thread::sleep(Duration::from_millis(10));
    }
    let (status, second) =
        lab.post("/api/run", &json!({ "scenario": "thundering-herd", "set": ["replicates=1"], "channel": "pane" }));
    assert_eq!(status, 200, "{second}");
    let (status, first) = first.join().unwrap();
    assert_eq!(status, 409, "{first}");
    assert!(first["error"].as_str().unwrap().contains("cancelled"));
}

#[test]
fn a_results_folder_given_is_served_by_file_name_only() {
    let lab = Lab::start(&["results/retry-after"]);
    let (status, catalog) = lab.get("/api/scenarios");
    assert_eq!(status, 200);
    let folder = &catalog["results"][0];
    assert_eq!(folder["name"], "retry-after");
    assert!(folder["files"].as_array().unwrap().contains(&json!("summary.csv")));
    let (status, summary) =
        lab.raw(&format!("GET /results/retry-after/summary.csv HTTP/1.1\r\nHost: {}", lab.host()), b"");
    assert_eq!(status, 200);
    assert_eq!(summary, std::fs::read_to_string("results/retry-after/summary.csv").unwrap());
    for path in [
        "/results/retry-after/..%2Fthundering-herd%2Fsummary.csv",
        "/results/retry-after/.%2E",
        "/results/x/summary.csv",
    ] {
        let (status, _) = lab.raw(&format!("GET {path} HTTP/1.1\r\nHost: {}", lab.host()), b"");
        assert_eq!(status, 404, "{path}");
    }
}

#[test]
fn bad_inputs_to_serve_are_refused_before_it_listens() {
    let scenario = retrylab().args(["serve", "--port", "0", "Cargo.toml"]).output().unwrap();
    assert_eq!(scenario.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&scenario.stderr).contains("Cargo.toml"));
    let folder = retrylab().args(["serve", "--port", "0", "src"]).output().unwrap();
    assert_eq!(folder.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&folder.stderr).contains("holds no summary.csv"));
}

#[test]
fn ctrl_c_stops_the_server_cleanly() {
    let mut lab = Lab::start(&[]);
    assert_eq!(lab.get("/api/scenarios").0, 200);
    let sent = Command::new("kill").args(["-INT", &lab.child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = lab.child.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "still serving 10 s after SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_run_whose_page_went_away_is_stopped() {
    let lab = Lab::start(&[]);
    let body = json!({ "scenario": "thundering-herd", "set": LONG_RUN, "channel": "gone" }).to_string();
    let mut stream = TcpStream::connect(("127.0.0.1", lab.port)).unwrap();
    let head = format!("POST /api/run HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n\r\n", lab.host(), body.len());
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let running = || {
        let (_, progress) = lab.get("/api/progress");
        progress["runs"].as_array().unwrap().iter().find(|run| run["channel"] == "gone").cloned()
    };
    let started = Instant::now();
    while running().is_none() {
        assert!(started.elapsed() < Duration::from_secs(60), "the run never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(stream);
    let mut last = Value::Null;
    while let Some(run) = running() {
        last = run;
        assert!(started.elapsed() < Duration::from_secs(120), "the run went on after its page went away");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Cancelled at once, it stops with few of its 40 runs done; left to finish, it would be seen near 40.
    assert!(last.is_null() || last["done"].as_u64().unwrap() <= 20, "stopped only at {last}");
}

#[test]
fn a_replay_is_the_run_the_summary_counted() {
    let lab = Lab::start(&[]);
    let set = ["replicates=2"];
    let request = json!({ "scenario": "thundering-herd", "set": set, "point": 1, "replicate": 1 });
    let (status, replay) = lab.post("/api/replay", &request);
    assert_eq!(status, 200, "{replay}");
    assert_eq!((replay["owners"].as_u64(), replay["shown"].as_u64()), (Some(1000), Some(1000)));
    let out = tempfile::tempdir().unwrap();
    let cli = retrylab()
        .args(["run", "scenarios/thundering-herd.toml", "--quiet", "--set", set[0], "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    assert!(cli.status.success());
    let runs = csv_table(&out.path().join("runs.csv"));
    let column = |name: &str| runs["columns"].as_array().unwrap().iter().position(|c| c == name).unwrap();
    let row = runs["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row[column("strategy")] == "exponential" && row[column("replicate")] == "1")
        .unwrap();
    let calls: usize = row[column("calls")].as_str().unwrap().parse().unwrap();
    assert_eq!(replay["attempts"].as_array().unwrap().len(), calls, "one attempt per call of that very run");
    // Each attempt reached the server after it left; a served one had a worker from after its arrival to before
    // its end; and the server's 10 workers are given for the page to draw.
    assert_eq!(replay["workers"], 10);
    let mut served = 0;
    for attempt in replay["attempts"].as_array().unwrap() {
        let at = |i: usize| attempt[i].as_f64();
        let (start, end, arrived) = (at(1).unwrap(), at(2).unwrap(), at(6).expect("every attempt arrives"));
        assert!(start < arrived && arrived <= end, "{attempt}");
        if attempt[4] == "success" {
            let (from, to) = (at(7).unwrap(), at(8).unwrap());
            assert!(arrived <= from && from < to && to < end, "{attempt}");
            served += 1;
        } else {
            assert_eq!((at(7), at(8)), (None, None), "the herd's only failures are refusals on arrival: {attempt}");
        }
    }
    assert_eq!(served, 1000, "every client is served once");

    let sampled = lab.post("/api/replay", &json!({ "scenario": "thundering-herd", "set": set, "owners": 100 })).1;
    assert_eq!((sampled["shown"].as_u64(), sampled["sampled"].as_str()), (Some(100), Some("every 10th owner of 1000")));
    for (bad, field) in
        [(json!({ "point": 9 }), "point"), (json!({ "replicate": 2 }), "replicate"), (json!({ "owners": 0 }), "owners")]
    {
        let mut request = json!({ "scenario": "thundering-herd", "set": set });
        request.as_object_mut().unwrap().extend(bad.as_object().unwrap().clone());
        let (status, answer) = lab.post("/api/replay", &request);
        assert_eq!((status, answer["field"].as_str()), (400, Some(field)), "{answer}");
    }
}

#[test]
fn every_lessons_claims_hold_with_its_defaults_and_break_when_they_should() {
    let lab = Lab::start(&[]);
    let (_, catalog) = lab.get("/api/scenarios");
    let lessons = catalog["lessons"].as_array().unwrap();
    assert!(lessons.len() >= 5, "{catalog}");
    let mut checked = 0;
    for listed in lessons {
        let (status, lesson) = lab.get(&format!("/api/lessons/{}", listed["name"].as_str().unwrap()));
        assert_eq!(status, 200, "{lesson}");
        for figure in lesson["figures"].as_array().unwrap() {
            let mut set = lesson["set"].as_array().unwrap().clone();
            set.extend(figure["set"].as_array().unwrap().iter().cloned());
            let request = json!({ "scenario": lesson["scenario"], "set": set, "claims": figure["claims"] });
            let (status, answer) = lab.post("/api/run", &request);
            assert_eq!(status, 200, "{}: {answer}", lesson["name"]);
            for claim in answer["claims"].as_array().unwrap() {
                assert_eq!(claim["holds"], true, "{}: {claim}", lesson["name"]);
                checked += 1;
            }
        }
    }
    assert!(checked >= 5, "{checked} claims");
    // The amplification lesson's 3^5 claim stops holding at three layers, and the answer says so.
    let request = json!({
        "scenario": "layered-amplification",
        "set": ["layers=3", "attempts=3", "placement=every", "limiter=none"],
        "claims": ["bottom_calls_per_request >= 243", "bottom_calls_per_request[limiter=budget] < 1"],
    });
    let (status, answer) = lab.post("/api/run", &request);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["claims"][0]["holds"], false);
    assert_eq!(answer["claims"][0]["left"], 27.0);
    assert_eq!(answer["claims"][1]["holds"], Value::Null);
    let (status, answer) = lab.post("/api/run", &json!({ "scenario": "thundering-herd", "claims": ["calls is low"] }));
    assert_eq!((status, answer["field"].as_str()), (400, Some("claims")), "{answer}");
    assert_eq!(lab.get("/api/lessons/nothing").0, 404);
}
