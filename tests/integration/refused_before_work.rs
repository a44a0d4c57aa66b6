//! A hostile-input suite for the keys and verbs added since the hardening issue (issue 30, item 9): workloads
//! and their kinds, the queue model, periodic hosts, clocks, limiters, outcomes, durations and numbers past
//! what is representable, duplicate keys, output paths, traces, `--max-memory`, `boundary`, `delays`, `tune`,
//! `compare`, `show`, `plot`, `merge`. Every case runs the real binary in a fresh folder holding a previous
//! results folder and must exit 2 with one located message (the file's line:column and key, or the argument)
//! and leave every file in that folder exactly as it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::common::retrylab;

const SERVER: &str = r#"schema_version = 1
name = "srv"
seed = 1
replicates = 2
timeline_bucket = "100ms"

[model]
kind = "server"
workers = 4
service_mean = "10ms"

[workload]
kind = "open"
rate = 50
duration = "2s"

[client]
strategy = "full-jitter"
base = "10ms"
cap = "1s"
max_attempts = 3
timeout = "500ms"
"#;

const QUEUE: &str = r#"schema_version = 1
name = "q"
seed = 1
replicates = 2
timeline_bucket = "1s"

[model]
kind = "queue"
workers = 2
service_mean = "10ms"

[workload]
kind = "open"
rate = 20
duration = "5s"

[client]
base = "1s"
"#;

/// Where a message must point.
enum At {
    /// `case.toml:LINE:COLUMN: KEY:`.
    File(&'static str),
    /// A command-line argument or key named in the message, such as `--trace` or `--set base=`.
    Arg(&'static str),
}

struct Case {
    /// The scenario written as `case.toml` (`None`: the server scenario as it is).
    scenario: Option<String>,
    args: Vec<String>,
    at: At,
    /// What the message must say.
    says: &'static [&'static str],
    /// What it must not say (the misleading wording it replaced).
    never: &'static [&'static str],
}

/// `base` with `from` replaced by `to` (which must change it).
fn edit(base: &str, from: &str, to: &str) -> String {
    let text = base.replacen(from, to, 1);
    assert_ne!(text, base, "{from:?} is not in the scenario");
    text
}

/// `retrylab run case.toml --out out ARGS` on `scenario`.
fn run(scenario: String, args: &[&str], at: At, says: &'static [&'static str]) -> Case {
    let mut all = vec!["run", "case.toml"];
    if !args.contains(&"--out") {
        all.extend(["--out", "out"]);
    }
    all.extend(args);
    Case { scenario: Some(scenario), args: all.iter().map(|a| a.to_string()).collect(), at, says, never: &[] }
}

/// The server scenario with one substitution, run.
fn server(from: &str, to: &str, at: At, says: &'static [&'static str]) -> Case {
    run(edit(SERVER, from, to), &[], at, says)
}

/// The queue scenario with one substitution, run.
fn queue(from: &str, to: &str, at: At, says: &'static [&'static str]) -> Case {
    run(edit(QUEUE, from, to), &[], at, says)
}

/// Any verb, with the server scenario as `case.toml`.
fn verb(args: &[&str], at: At, says: &'static [&'static str]) -> Case {
    Case { scenario: None, args: args.iter().map(|a| a.to_string()).collect(), at, says, never: &[] }
}

impl Case {
    fn never(mut self, never: &'static [&'static str]) -> Case {
        self.never = never;
        self
    }
}

/// Every file under `dir` with its contents.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files.insert(path.clone(), Vec::new());
                stack.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// Whether `stderr` has `case.toml:LINE:COLUMN: KEY:`.
fn located_in_file(stderr: &str, key: &str) -> bool {
    stderr.match_indices("case.toml:").any(|(index, found)| {
        let rest = &stderr[index + found.len()..];
        let mut parts = rest.splitn(3, ':');
        let numbers = [parts.next(), parts.next()]
            .iter()
            .all(|part| part.is_some_and(|digits| !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())));
        numbers && parts.next().is_some_and(|tail| tail.starts_with(&format!(" {key}:")))
    })
}

/// Runs every case; returns what went wrong with each that failed.
fn check(cases: Vec<Case>) -> Vec<String> {
    let mut failures = Vec::new();
    for case in cases {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("case.toml"), case.scenario.as_deref().unwrap_or(SERVER)).unwrap();
        std::fs::write(root.join("notes.txt"), "a file, not a folder\n").unwrap();
        std::fs::create_dir(root.join("out")).unwrap();
        std::fs::write(root.join("out/summary.csv"), "the previous run's results\n").unwrap();
        std::fs::write(root.join("out/trace.json"), "the previous trace\n").unwrap();
        std::fs::create_dir(root.join("fake")).unwrap();
        std::fs::write(root.join("fake/paired.csv"), "axis,replicates,a,b,calls_diff_mean\n").unwrap();
        let before = snapshot(root);
        let output = retrylab().args(&case.args).current_dir(root).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let mut wrong = Vec::new();
        if output.status.code() != Some(2) {
            wrong.push(format!("exit {:?}, not 2", output.status.code()));
        }
        if stderr.contains("panicked") || !(stderr.starts_with("Error: ") || stderr.starts_with("error: ")) {
            wrong.push("not one clear error".into());
        }
        let located = match case.at {
            At::File(key) => located_in_file(&stderr, key),
            At::Arg(argument) => stderr.contains(argument),
        };
        if !located {
            wrong.push("not located".into());
        }
        wrong.extend(case.says.iter().filter(|piece| !stderr.contains(*piece)).map(|piece| format!("lacks {piece:?}")));
        wrong.extend(case.never.iter().filter(|piece| stderr.contains(*piece)).map(|piece| format!("says {piece:?}")));
        if snapshot(root) != before {
            wrong.push("the folder changed".into());
        }
        if !wrong.is_empty() {
            failures.push(format!("{:?}: {}\n  {}", case.args, wrong.join("; "), stderr.trim_end()));
        }
    }
    failures
}

fn assert_all_refused(cases: Vec<Case>) {
    let count = cases.len();
    let failures = check(cases);
    assert!(failures.is_empty(), "{} of {count} cases failed:\n{}", failures.len(), failures.join("\n"));
}

/// A workload a model cannot run, keys the chosen workload ignores, a plan that produces nothing.
#[test]
fn workloads_that_mean_nothing_are_refused() {
    let periodic = "kind = \"periodic\"\nclients = 3\nperiod = \"1s\"";
    let cases = vec![
        queue(
            "kind = \"open\"\nrate = 20\nduration = \"5s\"",
            &format!("{periodic}\nduration = \"1h\""),
            At::File("workload.kind"),
            &["the queue model cannot run kind = \"periodic\""],
        ),
        queue(
            "kind = \"open\"\nrate = 20",
            "kind = \"closed\"",
            At::File("workload.kind"),
            &["cannot run kind = \"closed\"", "use \"burst\" or \"open\""],
        )
        .never(&["periodic"]),
        server(
            "rate = 50",
            "rate = 50\nthink_time = \"1s\"",
            At::File("workload.think_time"),
            &["belongs to kind = \"closed\""],
        ),
        server("rate = 50", "rate = 50\nclients = 10", At::File("workload.clients"), &["kind = \"open\" reads only"]),
        server(
            "rate = 50",
            "rate = 50\nperiod = \"1h\"",
            At::File("workload.period"),
            &["belongs to kind = \"periodic\""],
        ),
        server("rate = 50", "rate = 50\naccuracy = \"1s\"", At::File("workload.accuracy"), &["kind = \"periodic\""]),
        server("kind = \"open\"", "kind = \"burst\"", At::File("workload.rate"), &["belongs to kind = \"open\""]),
        server("kind = \"open\"", "kind = \"closed\"", At::File("workload.rate"), &["belongs to kind = \"open\""]),
        server(
            "kind = \"open\"\nrate = 50\nduration = \"2s\"",
            "kind = \"burst\"\nwarmup = \"1s\"",
            At::File("workload.warmup"),
            &["a burst sends every request at t = 0"],
        ),
        server(
            "rate = 50",
            "schedule = \"0s=0, 10s=5\"",
            At::File("workload.schedule"),
            &["its rate is 0 until 10s", "nothing would arrive"],
        ),
        server("rate = 50", "rate = 50\nschedule = \"0s=5\"", At::File("workload.rate"), &["the `schedule` replaces"]),
        server(
            "kind = \"open\"\nrate = 50",
            &format!("{periodic}\nfirst_at = \"3s\""),
            At::File("workload.first_at"),
            &["nothing runs"],
        ),
        server(
            "kind = \"open\"\nrate = 50",
            "kind = \"periodic\"\nclients = 3\nperiod = \"0s\"",
            At::File("workload.period"),
            &["a period of 0"],
        ),
        server(
            "kind = \"open\"\nrate = 50",
            &format!("{periodic}\naccuracy = \"-1s\""),
            At::File("workload.accuracy"),
            &["cannot be negative"],
        ),
        server(
            "kind = \"open\"\nrate = 50",
            &format!("{periodic}\nrandomized_delay = 5"),
            At::File("workload.randomized_delay"),
            &["needs its unit"],
        ),
        run(
            edit(SERVER, "rate = 50", "rate = 50\nperiod = \"1h\""),
            &["--set", "sweep.kind=[\"open\", \"closed\"]"],
            At::File("workload.period"),
            &["kind = \"open\" and \"closed\" reads only"],
        ),
        run(
            SERVER.into(),
            &["--set", "workload.kind=burst"],
            At::File("workload.rate"),
            &["belongs to kind = \"open\""],
        ),
    ];
    assert_all_refused(cases);
}

/// Durations and numbers beyond what is representable are refused, never wrapped or saturated.
#[test]
fn durations_and_numbers_past_their_range_are_refused() {
    let cases = vec![
        server(
            "base = \"10ms\"",
            "base = \"1234567890123456789012345678901234567890.5s\"",
            At::File("client.base"),
            &["is too long"],
        ),
        server(
            "timeout = \"500ms\"",
            "timeout = \"99999999999.0000000000000000001s\"",
            At::File("client.timeout"),
            &["is too long"],
        ),
        server(
            "timeout = \"500ms\"",
            "timeout = \"18446744073709551616ns\"",
            At::File("client.timeout"),
            &["too long"],
        ),
        server("duration = \"2s\"", "duration = \"5124096h\"", At::File("workload.duration"), &["about 584 years"]),
        server(
            "workers = 4",
            "workers = 99999999999999999999",
            At::File("model.workers"),
            &["99999999999999999999 is out of range"],
        )
        .never(&["found an integer"]),
        server("rate = 50", "rate = 99999999999999999999", At::File("workload.rate"), &["is out of range"])
            .never(&["found an integer"]),
        server("rate = 50", "rate = 1e400", At::File("workload.rate"), &["inf is out of range"]),
        server("rate = 50", "rate = nan", At::File("workload.rate"), &["NaN is out of range"]),
        server("seed = 1", "seed = 99999999999999999999", At::File("seed"), &["expected a whole number"]),
        server("max_attempts = 3", "max_attempts = -1", At::File("client.max_attempts"), &["out of range"]),
        run(
            SERVER.into(),
            &["--set", "client.cap=99999999999999999999999h"],
            At::Arg("--set client.cap="),
            &["is too long"],
        ),
        run(SERVER.into(), &["--set", "workers=9223372036854775808"], At::Arg("--set workers="), &["out of range"]),
        run(
            SERVER.into(),
            &["--set", "sweep.timeout={ from = \"1s\", to = \"18446744073s\", step = \"1ns\" }"],
            At::Arg("--set sweep.timeout"),
            &["more than 100000 values"],
        ),
        verb(
            &["delays", "full-jitter", "--set", "base=1234567890123456789012345678901234567890.5s"],
            At::Arg("--set base="),
            &["is too long"],
        ),
    ];
    assert_all_refused(cases);
}

/// Messages that misled: they now say what is wrong and name the key.
#[test]
fn misleading_messages_now_name_the_key_and_what_is_valid() {
    let cases = vec![
        server(
            "timeout = \"500ms\"",
            "timeout = \"500ms\"\nlimiter = []",
            At::File("client.limiter"),
            &["an empty list chooses nothing", "budget"],
        )
        .never(&["found an array"]),
        server(
            "timeout = \"500ms\"",
            "timeout = \"500ms\"\nretry_on = []",
            At::File("client.retry_on"),
            &["an empty list names nothing"],
        )
        .never(&["unknown outcome \"\""]),
        server("workers = 4", "workers = 4\nworkers = 5", At::File("workers"), &["`workers` is set twice"]),
        server("cap = \"1s\"", "cap = \"1s\"\nbase = \"5ms\"", At::File("base"), &["`base` is set twice"]),
        run(
            SERVER.into(),
            &["--max-memory", "99999999999999999999999GB"],
            At::Arg("--max-memory"),
            &["the largest size"],
        )
        .never(&["at least 1 byte"]),
        run(SERVER.into(), &["--max-memory", "0"], At::Arg("--max-memory"), &["at least 1 byte"]),
        run(SERVER.into(), &["--max-memory", "5XB"], At::Arg("--max-memory"), &["unknown unit"]),
        run(SERVER.into(), &["--max-memory", "1kB"], At::Arg("--max-memory"), &["this plan needs"]),
        run(
            SERVER.into(),
            &["--trace", "notes.txt/t.json"],
            At::Arg("--trace notes.txt/t.json"),
            &["notes.txt is a file"],
        )
        .never(&["does not exist"]),
        verb(&["compare", "--paired", "fake"], At::Arg("fake"), &["not a retrylab results folder"]),
    ];
    assert_all_refused(cases);
}

/// Output paths are checked for kind and writability before anything runs.
#[test]
fn bad_output_paths_are_refused_before_any_run() {
    let cases = vec![
        run(SERVER.into(), &["--out", "notes.txt"], At::Arg("--out notes.txt"), &["is a file, not a folder"]),
        run(SERVER.into(), &["--out", "notes.txt/sub"], At::Arg("--out notes.txt/sub"), &["notes.txt is a file"]),
        run(
            SERVER.into(),
            &["--out", "/proc/1/retrylab-out"],
            At::Arg("--out /proc/1/retrylab-out"),
            &["cannot write"],
        ),
        run(SERVER.into(), &["--trace", "out"], At::Arg("--trace out"), &["is a folder"]),
        run(SERVER.into(), &["--trace", "missing/t.json"], At::Arg("--trace missing/t.json"), &["does not exist"]),
        run(SERVER.into(), &["--trace", "/proc/1/t.json"], At::Arg("--trace /proc/1/t.json"), &["cannot write"]),
        run(SERVER.into(), &["--trace", "t.json", "--trace-point", "5"], At::Arg("--trace-point 5"), &["out of range"]),
        run(
            SERVER.into(),
            &["--trace", "t.json", "--trace-replicate", "9"],
            At::Arg("--trace-replicate 9"),
            &["out of range"],
        ),
        run(SERVER.into(), &["--shard", "3/2"], At::Arg("--shard 3/2"), &["out of range"]),
        run(SERVER.into(), &["--shard", "x"], At::Arg("--shard x"), &["expected I/N"]),
        run(SERVER.into(), &["--replicates", "0"], At::Arg("--replicates"), &["0 is not in"]),
        run(SERVER.into(), &["--threads", "0"], At::Arg("--threads"), &["0 is not in"]),
        verb(&["compare", "fake", "--out", "chart.txt"], At::Arg("--out chart.txt"), &["not .txt"]),
        verb(&["merge", "fake"], At::Arg("fake"), &["no shard folders"]),
        verb(&["merge", "fake", "--out", "notes.txt"], At::Arg("--out notes.txt"), &["is a file, not a folder"]),
        verb(
            &["compare", "fake", "--out", "notes.txt/chart"],
            At::Arg("--out notes.txt/chart"),
            &["notes.txt is a file"],
        )
        .never(&["does not exist"]),
    ];
    assert_all_refused(cases);
}

/// Keys of the queue model, clocks, limiters and outcomes, located and explained.
#[test]
fn bad_model_and_policy_keys_are_refused_with_their_place() {
    let cases = vec![
        queue(
            "workers = 2",
            "workers = 2\nredelivery = \"nope\"",
            At::File("model.redelivery"),
            &["unknown redelivery"],
        ),
        queue("workers = 2", "workers = 2\nttl = \"5s\"", At::File("model.ttl"), &["belongs to redelivery"]),
        queue(
            "workers = 2",
            "workers = 2\nmax_receives = 1000000000000",
            At::File("model.max_receives"),
            &["out of range"],
        ),
        queue("workers = 2", "workers = 2\nordering = \"lifo\"", At::File("model.ordering"), &["unknown ordering"]),
        queue("workers = 2", "workers = 2\npartitions = 0", At::File("model.partitions"), &["out of range"]),
        queue(
            "workers = 2",
            "workers = 2\npoison_probability = 2",
            At::File("model.poison_probability"),
            &["out of range"],
        ),
        queue(
            "workers = 2",
            "workers = 2\nvisibility_timeout = 30",
            At::File("model.visibility_timeout"),
            &["needs its unit"],
        ),
        server(
            "timeout = \"500ms\"",
            "timeout = \"500ms\"\nclock_skew = \"gauss 5ms\"",
            At::File("client.clock_skew"),
            &["unknown shape"],
        ),
        server(
            "timeout = \"500ms\"",
            "timeout = \"500ms\"\nlimiter = \"nope\"",
            At::File("client.limiter"),
            &["unknown limiter"],
        ),
        server(
            "timeout = \"500ms\"",
            "timeout = \"500ms\"\nlimiter = \"budget\"\nlimiter_scope = \"client\"",
            At::File("client.limiter_scope"),
            &["client_instances"],
        ),
        server(
            "timeout = \"500ms\"",
            "timeout = \"500ms\"\nclient_instances = 4",
            At::File("client.client_instances"),
            &["limiter_scope"],
        ),
        server(
            "timeout = \"500ms\"",
            "timeout = \"500ms\"\nretry_on = [\"timeout\", \"teapot\"]",
            At::File("client.retry_on"),
            &["unknown outcome \"teapot\""],
        ),
        server(
            "timeout = \"500ms\"",
            "timeout = \"500ms\"\nalign_offset = \"2s\"",
            At::File("client.align_offset"),
            &["valid: none, per-client, per-attempt"],
        ),
        server(
            "timeout = \"500ms\"",
            "timeout = \"500ms\"\nretry_after = \"maybe\"",
            At::File("client.retry_after"),
            &["unknown retry_after"],
        ),
        run(
            SERVER.into(),
            &["--set", "charts.timeline_until=-1s"],
            At::Arg("--set charts.timeline_until"),
            &["cannot be negative"],
        ),
        run(SERVER.into(), &["--set", "timeline_bucket=1ns"], At::Arg("--set timeline_bucket"), &["at least 1us"]),
        run(SERVER.into(), &["--set", "charts.x=nope"], At::Arg("--set charts.x"), &["is not swept"]),
        run(SERVER.into(), &["--set", "nope=3"], At::Arg("--set nope=3"), &["unknown key `nope`"]),
    ];
    assert_all_refused(cases);
}

/// The other verbs: bad arguments found before any probe, race or read.
#[test]
fn the_verbs_refuse_bad_arguments_before_any_work() {
    let tune = format!("{}/scenarios/tune-outage.toml", env!("CARGO_MANIFEST_DIR"));
    let cases = vec![
        verb(
            &["boundary", "case.toml", "--over", "rate", "--between", "10", "20", "--tolerance", "0"],
            At::Arg("--tolerance 0"),
            &["must be greater than 0"],
        ),
        verb(
            &["boundary", "case.toml", "--over", "rate", "--between", "10", "20", "--tolerance", "-1"],
            At::Arg("--tolerance -1"),
            &["must be greater than 0"],
        ),
        verb(
            &["boundary", "case.toml", "--over", "rate", "--between", "10", "20", "--stuck", "1.5"],
            At::Arg("--stuck 1.5"),
            &["strictly between 0 and 1"],
        ),
        verb(
            &["boundary", "case.toml", "--over", "rate", "--between", "10", "2000000000"],
            At::Arg("--set rate=2000000000"),
            &["out of range"],
        ),
        verb(
            &["boundary", "case.toml", "--over", "nope", "--between", "1", "2"],
            At::Arg("`nope`"),
            &["has no parameter"],
        ),
        verb(&["delays", "nope"], At::Arg("STRATEGY"), &["neither a strategy nor a preset"]),
        verb(&["delays", "full-jitter", "--set", "nope=1"], At::Arg("--set nope=1"), &["not a backoff key"]),
        verb(&["delays", "full-jitter", "--retries", "0"], At::Arg("--retries"), &["0 is not in"]),
        verb(
            &["validate", "case.toml", "--set", "sweep.rate=[]"],
            At::Arg("--set sweep.rate=[]"),
            &["an empty list sweeps nothing"],
        ),
        verb(&["tune", "case.toml"], At::Arg("case.toml"), &["no [tune] table"]),
        verb(&["tune", &tune, "--objective", "nope"], At::Arg("--objective"), &["unknown metric \"nope\""]),
        verb(&["tune", &tune, "--constraint", "success_rate"], At::Arg("--constraint"), &["expected \">=\" or \"<=\""]),
        verb(&["show", "notes.txt"], At::Arg("notes.txt"), &["not a folder"]),
        verb(&["plot", "fake"], At::Arg("fake"), &["no manifest.json"]),
        verb(&["compare", "fake"], At::Arg("fake"), &["no manifest.json"]),
        verb(&["metrics", "nope"], At::Arg("\"nope\""), &["unknown model"]),
    ];
    assert_all_refused(cases);
}
