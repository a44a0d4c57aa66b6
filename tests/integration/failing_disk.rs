//! A write that fails mid-way through the results (issue 20, item 4), on the real binary under a file-size limit
//! (RLIMIT_FSIZE, set with the shell's `ulimit -f`): exit 1 naming the file and the system's reason, the output
//! folder exactly as the previous run left it, and the checkpoint kept for `--resume`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use retrylab::report::sha256_hex;

use crate::common::{SLOW, listing, retrylab, write_scenario};

/// Every file in `dir` (not in its subfolders, where the checkpoint lives) with its SHA-256.
fn files(dir: &Path) -> BTreeMap<PathBuf, String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .map(|path| {
            let hash = sha256_hex(&std::fs::read(&path).unwrap());
            (path, hash)
        })
        .collect()
}

#[test]
fn a_file_too_large_exits_1_naming_it_and_leaves_the_previous_results_whole() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "slow.toml", SLOW);
    let out = dir.path().join("out");
    // Three points: their checkpoint files (about 130 kB each), summary.csv and runs.csv fit under 1 MiB;
    // timeline.csv (about 1.7 MB) does not.
    let args = [
        "run",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--set",
        "sweep.clients=[1000, 1100, 1200]",
    ];
    retrylab().args(args).arg("--quiet").assert().success();
    let before = files(&out);
    assert!(before.keys().any(|path| path.ends_with("timeline.csv")));

    // The same study with another seed, every file limited to 1024 blocks of 1 KiB.
    let limited = std::process::Command::new("bash")
        .args(["-c", r#"ulimit -f 1024 && exec "$@""#, "bash", env!("CARGO_BIN_EXE_retrylab")])
        .args(args)
        .args(["--seed", "6", "--quiet"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(limited.stderr).unwrap();
    assert_eq!(limited.status.code(), Some(1), "{stderr}");
    let timeline = out.join("timeline.csv");
    assert!(
        stderr
            .lines()
            .any(|line| line.starts_with(&format!("Error: failed to write {}: File too large", timeline.display()))),
        "names the file as the user knows it, and the system's reason: {stderr}"
    );
    assert!(stderr.contains("--resume"), "says how to finish from the checkpoint: {stderr}");
    assert_eq!(files(&out), before, "no file of the previous run replaced, none added");
    assert_eq!(listing(&out).len(), before.len() + 1, "beside them only the checkpoint: {:?}", listing(&out));

    // Once the disk has room, --resume writes the results from the stored points without running them again.
    let resumed = retrylab().args(args).args(["--seed", "6", "--resume"]).assert().success();
    let stdout = String::from_utf8(resumed.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains("3 of 3 points already done") && stdout.contains("all stored already"), "{stdout}");
    assert_ne!(sha256_hex(&std::fs::read(&timeline).unwrap()), before[&timeline]);
    assert_eq!(listing(&out).len(), before.len(), "the checkpoint is gone: {:?}", listing(&out));
}

/// `run --trace` (issue 30, item 9): the trace is written beside its file before the run, so a disk that cannot
/// hold it fails the run before the results folder changes, and the previous trace stays whole.
#[test]
fn a_trace_too_large_fails_before_the_results_change() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "slow.toml", SLOW);
    let (out, trace) = (dir.path().join("out"), dir.path().join("herd.json"));
    // One point, 1,000 clients: its trace (about 16 MB) is far larger than any results file (under 100 kB).
    let args = [
        "run",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--set",
        "sweep.clients=[1000]",
        "--set",
        "timeline_bucket=1s",
        "--trace",
        trace.to_str().unwrap(),
        "--quiet",
    ];
    retrylab().args(args).assert().success();
    let before = files(&out);
    let trace_before = sha256_hex(&std::fs::read(&trace).unwrap());

    let limited = std::process::Command::new("bash")
        .args(["-c", r#"ulimit -f 1024 && exec "$@""#, "bash", env!("CARGO_BIN_EXE_retrylab")])
        .args(args)
        .args(["--seed", "6"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(limited.stderr).unwrap();
    assert_eq!(limited.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!("Error: failed to write {}: File too large", trace.display())),
        "names the trace as the user gave it: {stderr}"
    );
    assert_eq!(files(&out), before, "the results folder as the previous run left it");
    assert_eq!(listing(&out).len(), before.len(), "no checkpoint either: nothing ran: {:?}", listing(&out));
    assert_eq!(sha256_hex(&std::fs::read(&trace).unwrap()), trace_before, "the previous trace whole");
    assert_eq!(listing(dir.path()), ["herd.json", "out", "slow.toml"], "no temporary left beside the trace");
}
