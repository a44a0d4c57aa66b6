//! `retrylab emulate` on the real binary: the built-in server and fleet on loopback, `--target` against a server
//! written here, and bad input refused before any socket. Every socket is on 127.0.0.1.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command as StdCommand;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::common::{SMALL, listing, retrylab, write_scenario};

/// A burst against the built-in server; `{extra}` goes into [model], `{client}` into [client].
fn burst(clients: u32, model: &str, client: &str) -> String {
    format!(
        r#"schema_version = 1
name = "emulated"
seed = 3
replicates = 1
timeline_bucket = "10ms"

[model]
kind = "server"
{model}

[workload]
kind = "burst"
clients = {clients}

[client]
strategy = "exponential"
base = "10ms"
cap = "1s"
{client}
"#
    )
}

/// One runs.csv row as (column, value) pairs.
fn runs_row(dir: &Path, row: usize) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(dir.join("runs.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(str::to_owned).collect();
    let values: Vec<String> = lines.nth(row).unwrap().split(',').map(str::to_owned).collect();
    header.into_iter().zip(values).collect()
}

fn value(row: &[(String, String)], column: &str) -> f64 {
    let (_, text) = row.iter().find(|(name, _)| name == column).unwrap_or_else(|| panic!("no column {column}"));
    text.parse().unwrap_or_else(|_| panic!("{column} = {text:?}"))
}

fn emulate(scenario: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut command = retrylab();
    command.args(["emulate", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"]).args(extra);
    command.output().unwrap()
}

#[test]
fn a_small_burst_is_served_whole_and_written_like_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let text = burst(20, "workers = 2\nservice = \"constant\"\nservice_mean = \"5ms\"", "");
    let scenario = write_scenario(dir.path(), "burst.toml", &text);
    let (emulated, simulated) = (dir.path().join("emulated"), dir.path().join("simulated"));
    let output = emulate(&scenario, &emulated, &["--time-scale", "2", "--max-overhead", "1"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let row = runs_row(&emulated, 0);
    for column in ["requests", "calls", "succeeded"] {
        assert_eq!(value(&row, column), 20.0, "{column}");
    }
    assert_eq!((value(&row, "retries"), value(&row, "rejected"), value(&row, "success_rate")), (0.0, 0.0, 1.0));
    // Ten rounds of 5 ms on two workers: the last answer comes no earlier than 50 ms of scenario time.
    assert!(value(&row, "completion_ms") >= 50.0, "{row:?}");
    retrylab().args(["run", scenario.to_str().unwrap(), "--out", simulated.to_str().unwrap(), "-q"]).assert().success();
    assert_eq!(listing(&emulated), listing(&simulated), "the same files as `run`");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(emulated.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["mode"], "emulated");
    assert_eq!(manifest["emulation"]["server"], "built-in");
    assert_eq!(manifest["emulation"]["time_scale"], 2.0);
    assert!(manifest["emulation"]["timer_lag_p99_ms"].as_f64().unwrap() > 0.0, "timers are measured late");
    let html = std::fs::read_to_string(emulated.join("report.html")).unwrap();
    assert!(html.contains("Emulated: measured on real sockets"), "report.html says so");
    let simulated_manifest = std::fs::read_to_string(simulated.join("manifest.json")).unwrap();
    assert!(!simulated_manifest.contains("\"mode\""), "a simulated manifest is unchanged");
    let shown = retrylab().args(["show", emulated.to_str().unwrap()]).output().unwrap();
    assert!(String::from_utf8_lossy(&shown.stdout).contains("emulated"), "show says the folder was emulated");
    let chart = dir.path().join("calls.svg");
    retrylab()
        .args(["compare", simulated.to_str().unwrap(), emulated.to_str().unwrap(), "--metric", "calls"])
        .args(["--out", chart.to_str().unwrap()])
        .assert()
        .success();
    assert!(chart.exists());
}

#[test]
fn a_full_queue_answers_503_at_once_and_a_free_worker_serves() {
    let dir = tempfile::tempdir().unwrap();
    // One worker, one place in the queue, five clients at once that do not retry: one served, one queued and
    // served after it, three refused.
    let model = "workers = 1\nqueue_limit = 1\nservice = \"constant\"\nservice_mean = \"40ms\"";
    let scenario = write_scenario(dir.path(), "queue.toml", &burst(5, model, "max_attempts = 1"));
    let out = dir.path().join("out");
    let output = emulate(&scenario, &out, &["--time-scale", "1", "--max-overhead", "1"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let row = runs_row(&out, 0);
    let counts: Vec<f64> = ["calls", "succeeded", "rejected", "gave_up"].iter().map(|c| value(&row, c)).collect();
    assert_eq!(counts, [5.0, 2.0, 3.0, 3.0], "{row:?}");
    assert!(value(&row, "completion_ms") >= 80.0, "two services of 40 ms one after the other: {row:?}");
}

/// Runs `emulate` with `args` and checks the refusal: exit 2, one `Error:` line with every `expected` piece, and
/// no results folder.
fn assert_emulate_refused(args: &[&str], out: &Path, expected: &[&str]) {
    let output = retrylab().arg("emulate").args(args).args(["--out", out.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("Error: ") || stderr.starts_with("error: "), "{stderr}");
    for piece in expected {
        assert!(stderr.contains(piece), "expected {piece:?} in: {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!out.exists(), "nothing may be written for bad input");
}

#[test]
fn what_cannot_be_emulated_is_refused_where_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let occ = write_scenario(dir.path(), "occ.toml", SMALL);
    assert_emulate_refused(&[occ.to_str().unwrap()], &out, &["occ.toml:8:1", "server model only", "\"occ\""]);
    let periodic = burst(3, "workers = 1", "").replace(
        "kind = \"burst\"\nclients = 3",
        "kind = \"periodic\"\nclients = 3\nperiod = \"1s\"\nduration = \"2s\"",
    );
    let periodic = write_scenario(dir.path(), "periodic.toml", &periodic);
    assert_emulate_refused(&[periodic.to_str().unwrap()], &out, &["periodic.toml:", "periodic workload"]);
    let aligned = write_scenario(dir.path(), "aligned.toml", &burst(3, "workers = 1", "align = \"1s\""));
    assert_emulate_refused(&[aligned.to_str().unwrap()], &out, &["aligned.toml:", "client.align", "remove `align`"]);
    let fine = write_scenario(dir.path(), "fine.toml", &burst(3, "workers = 1", ""));
    let fine = fine.to_str().unwrap();
    assert_emulate_refused(&[fine, "--time-scale", "0"], &out, &["--time-scale", "0.01 to 1000"]);
    assert_emulate_refused(&[fine, "--max-overhead", "0"], &out, &["--max-overhead 0"]);
    assert_emulate_refused(&[fine, "--max-requests", "0"], &out, &["--max-requests 0"]);
    assert_emulate_refused(&[fine, "--set", "nonsense=1"], &out, &["nonsense"]);
    std::fs::write(dir.path().join("file"), "").unwrap();
    let file_out = dir.path().join("file");
    let output = retrylab().args(["emulate", fine, "--out", file_out.to_str().unwrap()]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(std::fs::read_to_string(&file_out).unwrap(), "", "the file given as --out is left as it was");
}

#[test]
fn a_target_off_loopback_is_refused_from_its_text_before_anything_else() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // The scenario does not exist: the target is refused before it is even read.
    let missing = dir.path().join("missing.toml");
    let missing = missing.to_str().unwrap();
    for (url, why) in [
        ("http://192.0.2.1:8080/", "192.0.2.1 is not a loopback address"),
        ("http://example.invalid/", "is a name, not a loopback address"),
        ("http://[2001:db8::1]/", "not a loopback address"),
        ("https://127.0.0.1/", "not supported"),
    ] {
        assert_emulate_refused(&[missing, "--target", url], &out, &["--target", why]);
    }
    // A loopback target with nothing listening: said before the results folder is made.
    let closed_port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let scenario = write_scenario(dir.path(), "fine.toml", &burst(1, "workers = 1", ""));
    let url = format!("http://{closed_port}/");
    assert_emulate_refused(
        &[scenario.to_str().unwrap(), "--target", &url],
        &out,
        &["cannot connect", "is the service running"],
    );
    // Under strace, where this machine allows it: the refused run opens no internet socket at all.
    let trace = dir.path().join("trace");
    let traced = StdCommand::new("strace")
        .args(["-f", "-qq", "-e", "trace=socket,connect", "-o", trace.to_str().unwrap()])
        .arg(env!("CARGO_BIN_EXE_retrylab"))
        .args(["emulate", missing, "--target", "http://192.0.2.1/", "--out", out.to_str().unwrap()])
        .output();
    if let Ok(traced) = traced
        && traced.status.code() == Some(2)
        && let Ok(calls) = std::fs::read_to_string(&trace)
    {
        assert!(!calls.contains("AF_INET"), "no IP socket: {calls}");
        assert!(!calls.contains("connect("), "no connect: {calls}");
    }
}

/// A service written for the test: it counts the requests it receives, answers the first `failures` with 503 and
/// `Retry-After: 1`, then 200, and notes when each came.
struct TestService {
    address: String,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

fn test_service(failures: usize, hint: &'static str) -> TestService {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let seen = arrivals.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut writer = stream.try_clone().unwrap();
                let mut reader = BufReader::new(stream);
                loop {
                    let mut line = String::new();
                    let Ok(1..) = reader.read_line(&mut line) else { return };
                    assert!(line.starts_with("GET /work HTTP/1.1"), "{line:?}");
                    while line != "\r\n" {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                    }
                    let count = {
                        let mut seen = seen.lock().unwrap();
                        seen.push(Instant::now());
                        seen.len()
                    };
                    let answer = if count <= failures {
                        format!("HTTP/1.1 503 Service Unavailable\r\n{hint}\r\ncontent-length: 4\r\n\r\nbusy")
                    } else {
                        "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok".to_owned()
                    };
                    if writer.write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    TestService { address, arrivals }
}

#[test]
fn target_counts_what_the_service_received_and_honours_its_retry_after() {
    const RETRY_AFTER: &str = "Retry-After: 1";
    const PUSHBACK: &str = "grpc-retry-pushback-ms: 1000";
    // A client reads the hint its protocol has: Retry-After with retry_after, gRPC's pushback with pushback.
    for (hint, retry_after, pushback, shortest_gap) in [
        (RETRY_AFTER, "honour", "ignore", 1.0),
        (RETRY_AFTER, "ignore", "ignore", 0.0),
        (RETRY_AFTER, "ignore", "honour", 0.0),
        (PUSHBACK, "ignore", "honour", 1.0),
        (PUSHBACK, "honour", "ignore", 0.0),
    ] {
        let service = test_service(2, hint);
        let dir = tempfile::tempdir().unwrap();
        let client = format!("retry_after = \"{retry_after}\"\npushback = \"{pushback}\"");
        let scenario = write_scenario(dir.path(), "target.toml", &burst(1, "workers = 1", &client));
        let out = dir.path().join("out");
        let url = format!("http://{}/work", service.address);
        let output = retrylab()
            .args(["emulate", scenario.to_str().unwrap(), "--target", &url, "--out", out.to_str().unwrap()])
            .args(["--max-requests", "50", "--max-duration", "20"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert!(
            stdout.contains("at most 50 attempts") && stdout.contains("stops after 20 s"),
            "bounds first: {stdout}"
        );
        let arrivals = service.arrivals.lock().unwrap().clone();
        let row = runs_row(&out, 0);
        assert_eq!(value(&row, "calls"), arrivals.len() as f64, "{row:?}");
        assert_eq!((value(&row, "calls"), value(&row, "rejected"), value(&row, "succeeded")), (3.0, 2.0, 1.0));
        assert_eq!((value(&row, "retries"), value(&row, "requests")), (2.0, 1.0));
        let gaps: Vec<f64> = arrivals.windows(2).map(|pair| (pair[1] - pair[0]).as_secs_f64()).collect();
        if shortest_gap > 0.0 {
            assert!(gaps.iter().all(|&gap| gap >= shortest_gap), "{hint}, {retry_after}, {pushback}: {gaps:?}");
        } else {
            // Exponential from 10 ms: 10 and 20 ms, far below the hint's second.
            assert!(gaps.iter().all(|&gap| gap < 0.5), "{hint}, {retry_after}, {pushback}: {gaps:?}");
        }
        let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
        assert!(manifest.contains(&format!("\"server\": \"{url}\"")), "{manifest}");
    }
}

/// check.csv's rows as (point, metric) → (verdict, simulated mean, emulated mean, overhead allowed).
fn check_rows(out: &Path) -> Vec<(String, String, String, f64, f64, f64)> {
    let mut reader = csv::Reader::from_path(out.join("check.csv")).unwrap();
    reader
        .records()
        .map(|record| {
            let r = record.unwrap();
            let number = |i: usize| r[i].parse::<f64>().unwrap();
            (r[0].to_owned(), r[1].to_owned(), r[7].to_owned(), number(2), number(4), number(6))
        })
        .collect()
}

fn verdict<'a>(
    rows: &'a [(String, String, String, f64, f64, f64)],
    point: &str,
    metric: &str,
) -> &'a (String, String, String, f64, f64, f64) {
    rows.iter().find(|row| row.0 == point && row.1 == metric).unwrap_or_else(|| panic!("no {point} {metric}: {rows:?}"))
}

#[test]
fn check_finds_the_herd_on_real_sockets_where_the_simulation_puts_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("check");
    let output = retrylab()
        .args(["emulate", "--check", "scenarios/emulate-herd.toml", "--replicates", "3", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Exit 0 when every comparison agrees, 1 when one differs: the rows below are the ones this test holds.
    assert!(matches!(output.status.code(), Some(0 | 1)), "{stdout}\n{stderr}");
    assert!(stdout.contains("simulated ± CI95") && stdout.contains("verdict"), "a side-by-side table: {stdout}");
    assert_eq!(listing(&out), ["check.csv", "emulated", "simulated"]);
    let rows = check_rows(&out);
    // The tolerance of each row is its two intervals plus the overhead the emulation measured (check.csv's
    // overhead_allowed, from the manifest's timer lag and client-to-server trip), never a constant of this test.
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("emulated/manifest.json")).unwrap()).unwrap();
    assert!(manifest["emulation"]["timer_lag_mean_ms"].as_f64().unwrap() > 0.0, "the overhead was measured");
    for (point, metric) in [
        ("strategy=exponential", "calls"),
        ("strategy=exponential", "success_rate"),
        ("strategy=exponential", "wave_1_ms"),
        ("strategy=exponential", "wave_2_ms"),
        ("strategy=exponential", "wave_3_ms"),
        ("strategy=full-jitter", "calls"),
        ("strategy=full-jitter", "success_rate"),
    ] {
        let row = verdict(&rows, point, metric);
        assert_eq!(row.2, "agrees", "{row:?}\n{stdout}");
        assert!(row.5 > 0.0 || metric == "success_rate", "an overhead allowance from the measurement: {row:?}");
    }
    // Full jitter spreads the retries on real sockets too: its dispersion stays far below exponential's.
    let exponential = verdict(&rows, "strategy=exponential", "retry_dispersion").4;
    let jitter = verdict(&rows, "strategy=full-jitter", "retry_dispersion").4;
    assert!(jitter < exponential / 2.0, "emulated dispersion: full jitter {jitter}, exponential {exponential}");
}

/// An open workload with an outage of `kind` from 0.5 s to 1.3 s.
fn outage(kind: &str) -> String {
    format!(
        r#"schema_version = 1
name = "outage-{kind}"
seed = 9
replicates = 3
timeline_bucket = "50ms"

[model]
kind = "server"
workers = 4
service = "exponential"
service_mean = "10ms"
network_delay = "1ms"
outage_start = "500ms"
outage_duration = "800ms"
outage_kind = "{kind}"

[workload]
kind = "open"
rate = 100
duration = "2s"

[client]
strategy = "full-jitter"
base = "20ms"
cap = "200ms"
max_attempts = 3
timeout = "100ms"
"#
    )
}

#[test]
fn an_outage_on_real_sockets_is_judged_as_the_simulation_judges_it() {
    for kind in ["black-hole", "fail-fast"] {
        let dir = tempfile::tempdir().unwrap();
        let scenario = write_scenario(dir.path(), "outage.toml", &outage(kind));
        let out = dir.path().join("check");
        let output = retrylab()
            .args(["emulate", "--check", scenario.to_str().unwrap(), "--replicates", "2", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(matches!(output.status.code(), Some(0 | 1)), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
        let rows = check_rows(&out);
        for metric in ["success_rate_during", "recovered", "calls"] {
            let row = verdict(&rows, &format!("outage-{kind}"), metric);
            assert_eq!(row.2, "agrees", "{kind}: {row:?}\n{stdout}");
        }
        let during = verdict(&rows, &format!("outage-{kind}"), "success_rate_during");
        assert!(during.3 < 0.9, "{kind}: the outage hurts in the simulation: {during:?}");
        assert_eq!(verdict(&rows, &format!("outage-{kind}"), "recovered").4, 1.0, "{kind}: and the service recovers");
    }
}

#[test]
fn ctrl_c_stops_a_target_run_and_keeps_what_it_measured() {
    // A service that is never done: 503 with Retry-After: 1 forever, so the run would go on to its bounds.
    let service = test_service(usize::MAX, "Retry-After: 1");
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "forever.toml", &burst(3, "workers = 1", ""));
    let out = dir.path().join("out");
    let url = format!("http://{}/work", service.address);
    let child = StdCommand::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(["emulate", scenario.to_str().unwrap(), "--target", &url, "--out", out.to_str().unwrap(), "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while service.arrivals.lock().unwrap().len() < 6 {
        assert!(started.elapsed().as_secs() < 60, "the service heard too little in 60 s");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(StdCommand::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted by SIGINT; kept the 1 finished run(s) in"), "{stderr}");
    let row = runs_row(&out, 0);
    let received = service.arrivals.lock().unwrap().len() as f64;
    assert_eq!(value(&row, "calls"), received, "every attempt sent was received and counted: {row:?}");
    assert_eq!((value(&row, "requests"), value(&row, "succeeded")), (3.0, 0.0));
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"truncated_runs\": 1"), "{manifest}");
}

/// The totals of one emulated run of `scenario` (built-in server), as (column, value) pairs.
fn emulated_row(dir: &Path, name: &str, text: &str) -> Vec<(String, String)> {
    let scenario = write_scenario(dir, name, text);
    let out = dir.join(format!("{name}.out"));
    let output = emulate(&scenario, &out, &["--max-overhead", "1"]);
    assert!(output.status.success(), "{name}: {}", String::from_utf8_lossy(&output.stderr));
    runs_row(&out, 0)
}

#[test]
fn the_built_in_servers_faults_reset_stay_silent_and_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let model = |kind: &str| {
        format!(
            "workers = 2\nservice = \"constant\"\nservice_mean = \"5ms\"\noutage_start = \"0s\"\n\
             outage_duration = \"10s\"\noutage_kind = \"{kind}\""
        )
    };
    let client = "max_attempts = 2\ntimeout = \"50ms\"";
    // Every attempt of 4 clients meets the fault, twice each: resets and 503s are refusals, a black hole is a
    // timeout; nobody succeeds.
    for (kind, rejected, timeouts) in [("reset", 8.0, 0.0), ("fail-fast", 8.0, 0.0), ("black-hole", 0.0, 8.0)] {
        let row = emulated_row(dir.path(), &format!("{kind}.toml"), &burst(4, &model(kind), client));
        let counts: Vec<f64> =
            ["calls", "rejected", "timeouts", "gave_up", "succeeded"].iter().map(|c| value(&row, c)).collect();
        assert_eq!(counts, [8.0, rejected, timeouts, 4.0, 0.0], "{kind}: {row:?}");
    }
}

#[test]
fn a_queued_attempt_whose_client_gave_up_is_dropped_with_cancel_and_served_with_abandon() {
    let dir = tempfile::tempdir().unwrap();
    // One worker, 200 ms services, three clients that wait 50 ms: the first is served to the end either way; the
    // two queued behind it are dropped when their clients hang up (cancel) or served anyway (abandon).
    let model = "workers = 1\nservice = \"constant\"\nservice_mean = \"200ms\"";
    let client = |on_timeout: &str| format!("max_attempts = 1\ntimeout = \"50ms\"\non_timeout = \"{on_timeout}\"");
    let cancel = emulated_row(dir.path(), "cancel.toml", &burst(3, model, &client("cancel")));
    let abandon = emulated_row(dir.path(), "abandon.toml", &burst(3, model, &client("abandon")));
    for row in [&cancel, &abandon] {
        assert_eq!((value(row, "calls"), value(row, "timeouts"), value(row, "gave_up")), (3.0, 3.0, 3.0), "{row:?}");
    }
    let (cancelled, abandoned) = (value(&cancel, "completion_ms"), value(&abandon, "completion_ms"));
    assert!((200.0..400.0).contains(&cancelled), "one service, then nothing: {cancelled}");
    assert!(abandoned >= 600.0, "three services one after the other: {abandoned}");
    // Every service finished after its client had given up: wasted work, in the timeline's `late` series.
    let late = |name: &str| -> f64 {
        let mut reader = csv::Reader::from_path(dir.path().join(format!("{name}.toml.out/timeline.csv"))).unwrap();
        let column = reader.headers().unwrap().iter().position(|h| h == "late").unwrap();
        reader.records().map(|r| r.unwrap()[column].parse::<f64>().unwrap()).sum()
    };
    assert_eq!((late("cancel"), late("abandon")), (1.0, 3.0));
}

#[test]
fn the_built_in_server_answers_its_error_draws_and_its_rate_limit() {
    let dir = tempfile::tempdir().unwrap();
    let served = "workers = 2\nservice = \"constant\"\nservice_mean = \"1ms\"";
    // Every service ends in the drawn error; two attempts each for 3 clients.
    let cases = [
        ("error_probability", "", [6.0, 6.0, 3.0, 0.0]),
        ("permanent_probability", "", [3.0, 0.0, 0.0, 3.0]),
        // A 400 saying "temporarily unavailable" is retried only by a classifier that reads the body.
        ("disguised_probability", "classifier = \"body-aware\"", [6.0, 6.0, 3.0, 0.0]),
        ("disguised_probability", "classifier = \"status-only\"", [3.0, 3.0, 0.0, 3.0]),
    ];
    for (key, classifier, expected) in cases {
        let model = format!("{served}\n{key} = 1.0");
        let client = format!("max_attempts = 2\n{classifier}");
        let row = emulated_row(dir.path(), &format!("{key}.toml"), &burst(3, &model, &client));
        let counts: Vec<f64> =
            ["calls", "server_errors", "gave_up", "failed_permanently"].iter().map(|c| value(&row, c)).collect();
        assert_eq!(counts, expected, "{key} {classifier}: {row:?}");
    }
    // One token and a rate of 1/s: the first of three clients is served, the two others get 429 and give up.
    let limited = format!("{served}\nrate_limit = 1\nrate_burst = 1");
    let row = emulated_row(dir.path(), "limited.toml", &burst(3, &limited, "max_attempts = 1"));
    let counts: Vec<f64> = ["calls", "throttled", "succeeded", "gave_up"].iter().map(|c| value(&row, c)).collect();
    assert_eq!(counts, [3.0, 2.0, 1.0, 2.0], "{row:?}");
}

#[test]
fn a_retry_after_a_timeout_applies_the_side_effect_twice_unless_keys_say_it_is_the_same() {
    let dir = tempfile::tempdir().unwrap();
    // 40 ms services, three times slower for the first 50 ms, and a 60 ms timeout: the first attempt takes
    // 120 ms and is served to the end after its client gave up (abandon); the retry, on the other worker at
    // 80 ms, succeeds by 120 ms: the request's side effect is applied twice.
    let model = "workers = 2\nservice = \"constant\"\nservice_mean = \"40ms\"\nfaults = \"0ms..50ms slowdown x3\"";
    for (keys, duplicates, deduplicated) in [("off", 1.0, 0.0), ("on", 0.0, 1.0)] {
        let client = format!("max_attempts = 2\ntimeout = \"60ms\"\nidempotency_keys = \"{keys}\"");
        let row = emulated_row(dir.path(), &format!("keys-{keys}.toml"), &burst(1, model, &client));
        let counts: Vec<f64> =
            ["calls", "succeeded", "duplicates", "deduplicated"].iter().map(|c| value(&row, c)).collect();
        assert_eq!(counts, [2.0, 1.0, duplicates, deduplicated], "idempotency_keys {keys}: {row:?}");
    }
}
