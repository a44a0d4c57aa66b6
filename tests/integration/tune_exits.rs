//! Issue 30, item 9, tune's share, on the real binary: a bad `--out` is refused before any run; a failing disk
//! leaves the previous search's files as they were (through the staging folder `run` uses); and a search
//! interrupted before its first round finished says that nothing was kept, offering no resume command.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use retrylab::report::sha256_hex;

use crate::common::{listing, retrylab, write_scenario};

/// Two candidates on a server where every attempt fails with probability 0.2; `--budget 10` makes one round.
const TWO: &str = r#"schema_version = 1
name = "two"
seed = 3

[model]
kind = "server"
workers = 1000
service = "constant"
service_mean = "1ms"
network_delay = "1ms"
error_probability = 0.2

[workload]
kind = "open"
rate = 100
duration = "20s"

[client]
strategy = "constant"
base = "10ms"

[tune]
objective = "amplification"
max_attempts = [3, 4]
"#;

const CHECKPOINT: &str = ".retrylab-tune-runs";

/// Every file in `dir` but the checkpoint, with its SHA-256.
fn results(dir: &Path) -> BTreeMap<String, String> {
    listing(dir)
        .into_iter()
        .filter(|name| name != CHECKPOINT)
        .map(|name| {
            let hash = sha256_hex(&std::fs::read(dir.join(&name)).unwrap());
            (name, hash)
        })
        .collect()
}

#[test]
fn an_out_that_is_a_file_or_under_one_is_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "two.toml", TWO);
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "mine").unwrap();
    for out in [file.clone(), file.join("tune")] {
        let assert = retrylab().args(["tune", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()]).assert();
        let output = assert.code(2);
        let stderr = String::from_utf8(output.get_output().stderr.clone()).unwrap();
        assert!(stderr.contains(&format!("cannot write to output folder {}", out.display())), "{stderr}");
        assert!(output.get_output().stdout.is_empty(), "no search reported: {stderr}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    assert_eq!(listing(dir.path()), ["notes.txt", "two.toml"], "nothing else written");
}

#[test]
fn a_file_too_large_leaves_the_previous_search_whole_and_resume_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "two.toml", TWO);
    let out = dir.path().join("out");
    let args = ["tune", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--budget", "10"];
    retrylab().args(args).arg("--quiet").assert().success();
    let before = results(&out);
    assert_eq!(before.keys().collect::<Vec<_>>(), ["recommendation.toml", "tune.csv", "tune.png", "tune.svg"]);

    // Another seed, every file limited to 12 blocks of 1 KiB: the checkpoint (7 kB), the tables and the SVG fit,
    // the PNG (25 kB) does not.
    let limited = Command::new("bash")
        .args(["-c", r#"ulimit -f 12 && exec "$@""#, "bash", env!("CARGO_BIN_EXE_retrylab")])
        .args(args)
        .args(["--seed", "6", "--quiet"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(limited.stderr).unwrap();
    assert_eq!(limited.status.code(), Some(1), "{stderr}");
    let png = out.join("tune.png");
    assert!(
        stderr.contains(&format!("Error: failed to write {}: File too large", png.display())),
        "names the file as the user knows it: {stderr}"
    );
    assert_eq!(results(&out), before, "no file of the previous search replaced, none added, no staging left");

    // With room again, --resume reuses the runs the checkpoint kept and writes the new search's results.
    let resumed = retrylab().args(args).args(["--seed", "6", "--resume"]).assert().success();
    let stdout = String::from_utf8(resumed.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains("(10 reused from the checkpoint)"), "{stdout}");
    let fresh = dir.path().join("fresh");
    let fresh_args = ["tune", scenario.to_str().unwrap(), "--out", fresh.to_str().unwrap(), "--budget", "10", "-q"];
    retrylab().args(fresh_args).args(["--seed", "6"]).assert().success();
    for name in ["tune.csv", "recommendation.toml"] {
        let (resumed, fresh) = (std::fs::read(out.join(name)).unwrap(), std::fs::read(fresh.join(name)).unwrap());
        assert!(resumed == fresh, "{name} differs from an uninterrupted search's");
    }
}

/// The CPU time `pid` has used, in clock ticks (user + system, from /proc/PID/stat).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // After the name: state is field 3 of the line, utime 14 and stime 15.
    [11, 12].iter().filter_map(|&i| fields.get(i)?.parse::<u64>().ok()).sum()
}

#[test]
fn a_search_interrupted_in_its_first_round_keeps_nothing_and_offers_no_resume() {
    let dir = tempfile::tempdir().unwrap();
    // 2 × 5 runs of 2,000,000 requests each: the first round takes many seconds.
    let scenario = write_scenario(
        dir.path(),
        "long.toml",
        &TWO.replace("rate = 100", "rate = 1000").replace("\"20s\"", "\"2000s\""),
    );
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("tune.csv"), "an earlier search's table\n").unwrap();
    let before = results(&out);
    let mut child = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(["tune", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--threads", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Past loading and planning (a few milliseconds), well into the first round's runs.
    let started = Instant::now();
    while cpu_ticks(child.id()) < 30 {
        assert!(child.try_wait().unwrap().is_none(), "the search ended before it was interrupted");
        assert!(started.elapsed() < Duration::from_secs(300), "no CPU time used in 300 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!out.join(CHECKPOINT).exists(), "the first round is still running");
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("two: interrupted by SIGINT before its first round finished; nothing kept"), "{stderr}");
    assert!(!stderr.contains("resume") && !stderr.contains(CHECKPOINT), "names no file that does not exist: {stderr}");
    assert_eq!(listing(&out), ["tune.csv"], "no checkpoint, no staging folder");
    assert_eq!(results(&out), before);
}
