//! Helpers shared by the integration tests: the real binary and small scenario files.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The `retrylab` binary Cargo built for this test run.
pub fn retrylab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_retrylab"))
}

/// A small OCC sweep that runs in well under a second even in a debug build.
pub const SMALL: &str = r#"schema_version = 1
name = "small"
seed = 11
replicates = 4
timeline_bucket = "10ms"

[model]
kind = "occ"
clients = 10

[client]
strategy = "full-jitter"
base = "5ms"
cap = "2s"

[sweep]
clients = [5, 15]
strategy = ["exponential", "full-jitter", "decorrelated-jitter"]
"#;

/// Enough work (12 points of about 0.1 s each on one thread) that a kill or a signal lands in the middle.
pub const SLOW: &str = r#"schema_version = 1
name = "slow"
seed = 5
replicates = 2
timeline_bucket = "10ms"

[model]
kind = "occ"
clients = 1000

[client]
strategy = "exponential"
base = "5ms"
cap = "2s"

[sweep]
clients = [1000, 1050, 1100, 1150, 1200, 1250, 1300, 1350, 1400, 1450, 1500, 1550]
"#;

/// Writes `text` as `name` in `dir` and returns its path.
pub fn write_scenario(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The names of the files in `dir`, sorted; empty if it does not exist.
pub fn listing(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut names: Vec<String> = entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// Runs `run` on a scenario made from `base` with one substitution, saved as `name`, and checks the failure:
/// exit code 2, one `Error:` line naming the file and containing every `expected` piece, no panic, no output.
pub fn assert_refused(base: &str, name: &str, from: &str, to: &str, expected: &[&str]) {
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
