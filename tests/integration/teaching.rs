//! The teaching path fails soft (issue 30, items 10 and 9): `delays` keeps to `$COLUMNS` and holds `max_attempts` to
//! the cap `--retries` has, and `scripts/notebooks-venv` names the Python it needs before it makes anything.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::common::retrylab;

fn delays(args: &[&str], columns: usize) -> (i32, String, String) {
    let output = retrylab().arg("delays").args(args).env("COLUMNS", columns.to_string()).output().unwrap();
    let text = |bytes: &[u8]| String::from_utf8(bytes.to_vec()).unwrap();
    (output.status.code().unwrap(), text(&output.stdout), text(&output.stderr))
}

#[test]
fn delays_keeps_to_columns_and_names_the_columns_it_left_out() {
    let args = ["aws-sdk-standard", "--samples", "2000"];
    let (code, wide, _) = delays(&args, 200);
    assert_eq!(code, 0);
    assert!(wide.contains("since first try") && !wide.contains("left out"), "{wide}");
    assert!(wide.lines().any(|line| line.chars().count() > 60), "the test needs a table wider than 60:\n{wide}");
    for columns in [60, 40] {
        let (code, text, _) = delays(&args, columns);
        assert_eq!(code, 0);
        for line in text.lines() {
            assert!(line.chars().count() <= columns, "COLUMNS={columns}: {line:?}\n{text}");
        }
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains("Retry-After honour"), "the policy is wrapped, not cut:\n{text}");
        assert!(words.contains("left out to fit") && words.contains("--csv has every column"), "{text}");
    }
    // CSV is never cut.
    let (_, csv, _) = delays(&["aws-sdk-standard", "--samples", "2000", "--csv"], 30);
    assert!(csv.starts_with("retry,mean_ms,p10_ms,p50_ms,p90_ms,min_ms,max_ms,at_mean_ms\n"), "{csv}");
}

#[test]
fn delays_holds_max_attempts_to_the_retries_cap() {
    let (code, stdout, stderr) = delays(&["full-jitter", "--set", "max_attempts=5000", "--samples", "10"], 100);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    for part in ["--set max_attempts=5000", "client.max_attempts", "4999 retries", "1..=1000", "--retries N"] {
        assert!(stderr.contains(part), "{part}: {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    // --retries keeps its own cap, and with it a large max_attempts is fine.
    assert_eq!(delays(&["full-jitter", "--retries", "1001"], 100).0, 2);
    let (code, text, stderr) =
        delays(&["full-jitter", "--set", "max_attempts=5000", "--retries", "3", "--samples", "10"], 100);
    assert_eq!(code, 0, "{stderr}");
    assert!(text.lines().any(|line| line.trim_start().starts_with("3 ")), "{text}");
    // The most max_attempts allows: 1,001 attempts, 1,000 retries.
    let (code, text, stderr) = delays(&["full-jitter", "--set", "max_attempts=1001", "--samples", "1", "--csv"], 100);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(text.lines().count(), 1 + 1000);
}

/// A stand-in `python` that reports `version` and fails the check, as an old interpreter would.
fn fake_python(dir: &Path, version: &str) -> std::path::PathBuf {
    let path = dir.join("python-old");
    std::fs::write(&path, format!("#!/bin/sh\necho {version}\nexit 1\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn notebooks_venv_names_the_python_it_needs_before_making_anything() {
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/notebooks-venv");
    let venv = dir.path().join("venv");
    for (python, expected) in
        [(fake_python(dir.path(), "3.10.13"), "is Python 3.10.13"), (dir.path().join("no-such-python"), "cannot run")]
    {
        let output = Command::new("bash").arg(&script).arg(&venv).env("PYTHON", &python).output().unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(!output.status.success(), "{}: {stderr}", python.display());
        assert!(stderr.contains(expected), "{}: {stderr}", python.display());
        assert!(stderr.contains("Python 3.11 or newer"), "{}: {stderr}", python.display());
        assert!(!venv.exists(), "{}: a venv was made with an interpreter that cannot use it", python.display());
    }
}
