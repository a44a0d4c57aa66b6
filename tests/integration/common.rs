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
