//! A committed results folder is reproduced byte for byte by today's binary: every CSV, chart (SVG and PNG) and
//! the report, the manifest and report.html compared without the fields that record the run itself (elapsed
//! time and the command line). `results/capture-effect` is the cheapest committed study (20 runs of 20,000
//! slots). When a change is meant to move its numbers or pictures, regenerate `results/` (scripts/
//! regenerate-results) in the same commit series and say what moved.

use std::path::Path;

use crate::common::{listing, retrylab};

const STUDY: &str = "capture-effect";

/// `text` without the lines that record how the run went rather than what it found.
fn without_run_record(name: &str, text: &str) -> String {
    let volatile: &[&str] = match name {
        "manifest.json" => &["\"elapsed_s\""],
        "report.html" => &["<tr><th>elapsed</th>", "<tr><th>command line</th>"],
        _ => &[],
    };
    let mut kept = Vec::new();
    let mut in_command_line = false;
    for line in text.lines() {
        if name == "manifest.json" && line.trim_start().starts_with("\"command_line\"") {
            in_command_line = true;
        }
        if in_command_line {
            in_command_line = !line.trim_start().starts_with(']');
            continue;
        }
        if !volatile.iter().any(|v| line.trim_start().starts_with(v)) {
            kept.push(line);
        }
    }
    kept.join("\n")
}

#[test]
fn a_committed_results_folder_is_reproduced_byte_for_byte() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let committed = root.join("results").join(STUDY);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(STUDY);
    // Run from the repository with the path as the committed manifest records it.
    let scenario = format!("scenarios/{STUDY}.toml");
    // The committed folder was written on 2 threads, which the manifest records (the numbers do not depend on it).
    retrylab()
        .current_dir(root)
        .args(["run", &scenario, "--out", out.to_str().unwrap(), "--threads", "2", "-q"])
        .assert()
        .success();
    assert_eq!(listing(&out), listing(&committed), "the same files");
    for name in listing(&committed) {
        let (expected, actual) =
            (std::fs::read(committed.join(&name)).unwrap(), std::fs::read(out.join(&name)).unwrap());
        if matches!(name.as_str(), "manifest.json" | "report.html") {
            let text = |bytes: &[u8]| without_run_record(&name, std::str::from_utf8(bytes).unwrap());
            assert_eq!(text(&actual), text(&expected), "{name} differs from the committed one");
        } else {
            assert!(actual == expected, "{name} differs from the committed one; regenerate results/ if that is meant");
        }
    }
}
