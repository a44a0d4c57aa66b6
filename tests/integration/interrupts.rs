//! Ctrl-C and SIGTERM on the real binary mid-sweep (issue 20, item 3): exit 130 or 143, the finished points kept
//! in the checkpoint, nothing written into the output folder, and a message with the command that resumes, which
//! then finishes with results byte-identical to an uninterrupted run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use retrylab::report::sha256_hex;

use crate::common::{SLOW, listing, retrylab, write_scenario};

/// The finished point files in a checkpoint's `points` folder (not the hidden ones being written).
fn finished_points(points: &Path) -> Vec<String> {
    listing(points).into_iter().filter(|name| name.starts_with('p') && name.ends_with(".bin")).collect()
}

/// Every file under `dir` but the checkpoint, by path relative to `dir`, with its SHA-256.
fn contents(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().map(Result::unwrap) {
            let path = entry.path();
            if entry.file_name() == ".retrylab-checkpoint" {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
            } else {
                files.insert(path.strip_prefix(dir).unwrap().to_owned(), sha256_hex(&std::fs::read(&path).unwrap()));
            }
        }
    }
    files
}

/// Runs the SLOW sweep into `out` on one thread, sends `signal` (`INT` or `TERM`) once its first point is stored,
/// and returns how it ended.
fn interrupted_run(scenario: &Path, out: &Path, signal: &str) -> Output {
    let args = ["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--threads", "1"];
    let mut child = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let points = out.join(".retrylab-checkpoint").join("points");
    let started = Instant::now();
    while finished_points(&points).is_empty() {
        assert!(child.try_wait().unwrap().is_none(), "the run ended before its first point was stored");
        assert!(started.elapsed() < Duration::from_secs(300), "no point stored in 300 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    let sent = Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    child.wait_with_output().unwrap()
}

#[test]
fn ctrl_c_keeps_the_finished_points_and_prints_the_command_that_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "slow.toml", SLOW);
    let reference = dir.path().join("reference");
    let reference_args = ["run", scenario.to_str().unwrap(), "--out", reference.to_str().unwrap(), "--quiet"];
    retrylab().args(reference_args).assert().success();

    // The folder holds an earlier run's results, which an interrupted run must leave as they were.
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("summary.csv"), "an earlier run's summary\n").unwrap();
    std::fs::write(out.join("calls.png"), "an earlier run's chart").unwrap();
    let before = contents(&out);

    let output = interrupted_run(&scenario, &out, "INT");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    let points = out.join(".retrylab-checkpoint").join("points");
    let kept = finished_points(&points);
    assert!(!kept.is_empty() && kept.len() < 12, "{kept:?}");
    assert_eq!(listing(&points), kept, "no half-written point file");
    assert!(stderr.contains(&format!("slow: interrupted by SIGINT; kept {} of 12 points in ", kept.len())), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(listing(&out), [".retrylab-checkpoint", "calls.png", "summary.csv"], "nothing else written");
    assert_eq!(contents(&out), before, "the earlier results are untouched");

    // The printed command, run by a shell as a user would paste it, finishes the study.
    let resume = stderr.lines().skip_while(|line| !line.ends_with("resume with:")).nth(1).expect(&stderr).trim();
    assert!(resume.ends_with("--threads 1 --resume"), "{resume}");
    let resumed = Command::new("sh").args(["-c", resume]).output().unwrap();
    let stdout = String::from_utf8(resumed.stdout).unwrap();
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert!(stdout.contains(&format!("{} of 12 points already done", kept.len())), "{stdout}");
    for name in ["summary.csv", "runs.csv", "timeline.csv", "calls.svg", "calls.png"] {
        let same = std::fs::read(reference.join(name)).ok() == std::fs::read(out.join(name)).ok();
        assert!(same, "{name} differs from the uninterrupted run's");
    }
    assert!(!out.join(".retrylab-checkpoint").exists());
}

#[test]
fn sigterm_stops_the_same_way_with_exit_code_143() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "slow.toml", SLOW);
    let out = dir.path().join("out");
    let output = interrupted_run(&scenario, &out, "TERM");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(143), "{stderr}");
    let kept = finished_points(&out.join(".retrylab-checkpoint").join("points"));
    assert!(stderr.contains(&format!("interrupted by SIGTERM; kept {} of 12 points", kept.len())), "{stderr}");
    assert!(stderr.contains("resume with:\n  "), "{stderr}");
    assert_eq!(listing(&out), [".retrylab-checkpoint"], "no results, no staging folder");
}

/// A search long enough to interrupt: two nearly equal candidates race until the budget is spent, in rounds that
/// double their replicates, and each round ends by writing the checkpoint.
const SLOW_TUNE: &str = r#"schema_version = 1
name = "slowtune"
seed = 5
replicates = 2
timeline_bucket = "10ms"

[model]
kind = "occ"
clients = 1000

[client]
strategy = "full-jitter"
base = "5ms"
cap = "2s"

[tune]
objective = "completion_ms"
budget = 1000
strategy = ["full-jitter"]
base = ["5ms", "5.01ms"]
"#;

#[test]
fn an_interrupted_tune_keeps_its_finished_rounds_and_prints_the_command_that_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "slowtune.toml", SLOW_TUNE);
    let tune = |out: &Path| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_retrylab"));
        command.args(["tune", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--threads", "1"]);
        command
    };
    let reference = dir.path().join("reference");
    assert!(tune(&reference).stdout(Stdio::null()).status().unwrap().success());

    let out = dir.path().join("out");
    let mut child = tune(&out).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let started = Instant::now();
    while !out.join(".retrylab-tune-runs").exists() {
        assert!(child.try_wait().unwrap().is_none(), "the search ended before its first round was stored");
        assert!(started.elapsed() < Duration::from_secs(300), "no round stored in 300 s");
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("slowtune: interrupted by SIGINT; kept "), "{stderr}");
    assert!(!out.join("tune.csv").exists(), "no results from an interrupted search");

    let resume = stderr.lines().skip_while(|line| !line.ends_with("resume with:")).nth(1).expect(&stderr).trim();
    assert!(resume.ends_with("--threads 1 --resume"), "{resume}");
    let resumed = Command::new("sh").args(["-c", resume]).output().unwrap();
    let stdout = String::from_utf8(resumed.stdout).unwrap();
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert!(stdout.contains("reused from the checkpoint"), "{stdout}");
    for name in ["tune.csv", "recommendation.toml"] {
        let same = std::fs::read(reference.join(name)).unwrap() == std::fs::read(out.join(name)).unwrap();
        assert!(same, "{name} differs from the uninterrupted search's");
    }
}
