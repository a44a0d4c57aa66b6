//! Reading results folders back through the real binary: `show` (on every committed results folder), `run
//! --show`, `plot` (charts redrawn byte for byte) and `compare`, and their bad input (exit code 2, a message that
//! names the path, nothing written).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{SMALL, listing, retrylab, write_scenario};
use predicates::prelude::*;

/// A small server scenario with a fault window (shaded in the over-time charts) and a latency CDF.
const SERVER: &str = r#"schema_version = 1
replicates = 2

[model]
kind = "server"
workers = 2
queue_limit = 10
faults = "1s..2s fail-fast"

[workload]
kind = "open"
rate = 40
duration = "3s"

[client]
strategy = "full-jitter"
timeout = "1s"

[sweep]
strategy = ["exponential", "full-jitter"]
"#;

const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// Runs `text` as `name` in `dir` with the extra arguments and returns the results folder.
fn run(dir: &Path, name: &str, text: &str, out: &str, extra: &[&str]) -> PathBuf {
    let scenario = write_scenario(dir, name, text);
    let out = dir.join(out);
    let mut args = vec!["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"];
    args.extend_from_slice(extra);
    retrylab().args(&args).assert().success();
    out
}

/// The chart files of a folder with their bytes.
fn charts(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    listing(dir)
        .into_iter()
        .filter(|name| name.ends_with(".svg") || name.ends_with(".png"))
        .map(|name| {
            let bytes = std::fs::read(dir.join(&name)).unwrap();
            (name, bytes)
        })
        .collect()
}

fn show(dir: &Path, columns: usize) -> String {
    let output = retrylab()
        .args(["show", dir.to_str().unwrap()])
        .env("COLUMNS", columns.to_string())
        .env("NO_COLOR", "1")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(output).unwrap()
}

/// Lines no longer than `columns`, no ANSI escapes, and some bars.
fn assert_sane(text: &str, columns: usize, context: &str) {
    assert!(!text.contains('\x1b'), "{context}: colour although NO_COLOR is set and stdout is a pipe");
    for line in text.lines() {
        assert!(line.chars().count() <= columns, "{context}: line longer than {columns}: {line:?}");
    }
    assert!(text.chars().any(|c| BLOCKS.contains(&c)), "{context}: no bars:\n{text}");
}

#[test]
fn show_draws_every_committed_results_folder() {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    let mut seen = 0;
    // results/questions/ holds the question scenarios' folders one level down, and an emulation's check
    // (emulate-herd-check/) its simulated and emulated folders: a folder without a manifest is looked into.
    let folders = listing(&results).into_iter().flat_map(|name| {
        if results.join(&name).join("manifest.json").exists() {
            vec![name]
        } else {
            listing(&results.join(&name)).into_iter().map(|inner| format!("{name}/{inner}")).collect()
        }
    });
    for name in folders {
        let dir = results.join(&name);
        if !dir.is_dir() {
            continue;
        }
        seen += 1;
        let mut summary = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
        let first_cells: Vec<String> = summary.records().map(|row| row.unwrap()[0].to_owned()).collect();
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
        for columns in [80, 132] {
            let text = show(&dir, columns);
            assert_sane(&text, columns, &name);
            assert!(text.contains(manifest["scenario"]["name"].as_str().unwrap()), "{name}");
            // The summary table starts with the swept values of every point.
            let swept = manifest["swept"].as_array().unwrap().len();
            for first in first_cells.iter().filter(|_| swept > 0) {
                assert!(text.lines().any(|line| line.starts_with(first.as_str())), "{name}: no row for {first}");
            }
        }
    }
    assert!(seen >= 10, "only {seen} results folders found in {}", results.display());
}

#[test]
fn show_labels_points_with_their_swept_values_and_shares_one_scale() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), "small.toml", SMALL, "out", &[]);
    let text = show(&out, 100);
    assert_sane(&text, 100, "small");
    for label in ["clients=5 strategy=exponential", "clients=15 strategy=decorrelated-jitter"] {
        let line = text.lines().find(|line| line.starts_with(label)).unwrap_or_else(|| panic!("{label}:\n{text}"));
        assert!(line.contains("peak "), "{line}");
    }
    assert!(text.contains("calls per 10ms bucket"), "{text}");
    assert!(text.contains("summary: mean ± 95% CI"), "{text}");
    assert!(text.contains(" ± "), "{text}");
    // The busiest point reaches the top of the shared scale.
    assert!(text.contains('█'), "{text}");
}

#[test]
fn run_show_prints_the_view_after_writing_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "small.toml", SMALL);
    let out = dir.path().join("out");
    retrylab()
        .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--show"])
        .env("COLUMNS", "90")
        .assert()
        .success()
        .stdout(predicate::str::contains("wrote 16 files").and(predicate::str::contains("15 full-jitter")))
        .stdout(predicate::str::contains("summary: mean ± 95% CI"));
}

#[test]
fn plot_redraws_deleted_charts_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text, extra) in [
        ("small.toml", SMALL, &["--set", "clients=7", "--set", "sweep.clients=[3, 9]"][..]),
        ("server.toml", SERVER, &[][..]),
    ] {
        let out = run(dir.path(), name, text, name.trim_end_matches(".toml"), extra);
        let original = charts(&out);
        assert!(original.len() >= 6, "{name}: {original:?}");
        for file in original.keys() {
            std::fs::remove_file(out.join(file)).unwrap();
        }
        // The scenario file is gone too: the manifest keeps its text.
        std::fs::remove_file(dir.path().join(name)).unwrap();
        retrylab()
            .args(["plot", out.to_str().unwrap()])
            .assert()
            .success()
            .stdout(predicate::str::contains(format!("redrew {} chart files", original.len())));
        let redrawn = charts(&out);
        assert_eq!(redrawn.keys().collect::<Vec<_>>(), original.keys().collect::<Vec<_>>(), "{name}");
        for (file, bytes) in &original {
            assert!(redrawn[file] == *bytes, "{name}: {file} differs from the chart run drew");
        }
    }
}

#[test]
fn plot_reads_folders_without_a_stored_scenario_only_while_the_file_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), "small.toml", SMALL, "out", &[]);
    // Make it a format 1 manifest, as retrylab wrote before results_format existed.
    let path = out.join("manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let object = manifest.as_object_mut().unwrap();
    object.remove("results_format");
    let scenario = object["scenario"].as_object_mut().unwrap();
    scenario.remove("text");
    scenario.remove("overrides");
    std::fs::write(&path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    let original = charts(&out);
    retrylab().args(["plot", out.to_str().unwrap()]).assert().success();
    assert!(charts(&out) == original);

    std::fs::write(dir.path().join("small.toml"), SMALL.replace("seed = 11", "seed = 12")).unwrap();
    std::fs::remove_file(out.join("calls.svg")).unwrap();
    retrylab()
        .args(["plot", out.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has changed since these results were written"))
        .stderr(predicate::str::contains("manifest.json"));
    assert!(!out.join("calls.svg").exists(), "bad input wrote a chart");
}

#[test]
fn compare_puts_two_runs_on_one_chart() {
    let dir = tempfile::tempdir().unwrap();
    let fast = run(dir.path(), "small.toml", SMALL, "fast", &["--set", "client.base=5ms"]);
    let slow = run(dir.path(), "small.toml", SMALL, "slow", &["--set", "client.base=50ms"]);
    let chart = dir.path().join("charts/calls.svg");
    std::fs::create_dir(dir.path().join("charts")).unwrap();
    retrylab()
        .args(["compare", fast.to_str().unwrap(), slow.to_str().unwrap(), "--metric", "calls"])
        .args(["--out", chart.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("calls.svg").and(predicate::str::contains("calls.png")));
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.contains("compare: calls by clients"), "title");
    for folder in ["fast", "slow"] {
        for strategy in ["exponential", "full-jitter", "decorrelated-jitter"] {
            let label = format!("{folder}: strategy={strategy}");
            assert!(svg.contains(&label), "legend lacks {label}");
        }
    }
    let png = std::fs::read(dir.path().join("charts/calls.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");

    // Default metric and path: the model's first chart metric, ./compare.svg.
    retrylab().current_dir(dir.path()).args(["compare", "fast"]).assert().success();
    let svg = std::fs::read_to_string(dir.path().join("compare.svg")).unwrap();
    assert!(svg.contains("compare: calls by clients"));
    assert!(svg.contains("strategy=exponential") && !svg.contains("fast: "), "one folder: lines are its series");
}

#[test]
fn compare_refuses_bad_input_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let small = run(dir.path(), "small.toml", SMALL, "small", &[]);
    let server = run(dir.path(), "server.toml", SERVER, "server", &[]);
    // Folders that share no swept parameter: tests/integration/charts.rs (small and server share `strategy`).
    let cases: [(&[&str], &[&str]); 4] = [
        (&["small", "--metric", "nope"], &["no metric `nope`", "valid metrics here: calls"]),
        (&["small", "--out", "chart.pdf"], &["not .pdf", ".svg or .png"]),
        (&["small", "--out", "missing/chart.svg"], &["missing", "does not exist"]),
        (&["small", "nowhere"], &["nowhere", "not a folder"]),
    ];
    for (args, expected) in cases {
        let assert = retrylab().current_dir(dir.path()).arg("compare").args(args).assert().code(2);
        let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
        for part in expected {
            assert!(stderr.contains(part), "{args:?}: {stderr}");
        }
    }
    let names = listing(dir.path());
    assert!(!names.iter().any(|name| name.starts_with("compare") || name.starts_with("chart")), "{names:?}");
    let _ = (small, server);
}

#[test]
fn show_and_plot_refuse_what_is_not_a_readable_results_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), "small.toml", SMALL, "out", &[]);
    let broken = |name: &str, edit: &dyn Fn(&Path)| {
        let copy = dir.path().join(name);
        std::fs::create_dir(&copy).unwrap();
        for file in listing(&out) {
            std::fs::copy(out.join(&file), copy.join(&file)).unwrap();
        }
        edit(&copy);
        copy
    };
    let no_manifest = broken("no-manifest", &|d| std::fs::remove_file(d.join("manifest.json")).unwrap());
    let no_summary = broken("no-summary", &|d| std::fs::remove_file(d.join("summary.csv")).unwrap());
    let not_json = broken("not-json", &|d| std::fs::write(d.join("manifest.json"), "{ oops").unwrap());
    let future = broken("future", &|d| {
        let text = std::fs::read_to_string(d.join("manifest.json")).unwrap();
        std::fs::write(d.join("manifest.json"), text.replace("\"results_format\": 2", "\"results_format\": 99"))
            .unwrap();
    });
    let bad_cell = broken("bad-cell", &|d| {
        let text = std::fs::read_to_string(d.join("summary.csv")).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let mut cells: Vec<&str> = lines[1].split(',').collect();
        cells[3] = "lots";
        lines[1] = cells.join(",");
        std::fs::write(d.join("summary.csv"), lines.join("\n")).unwrap();
    });
    let file = dir.path().join("small.toml");
    let cases: [(&Path, &[&str]); 6] = [
        (&no_manifest, &["no-manifest", "not a retrylab results folder", "manifest.json, summary.csv, timeline.csv"]),
        (&no_summary, &["no-summary", "summary.csv is missing"]),
        (&not_json, &["manifest.json", "not valid JSON"]),
        (&future, &["results format 99", "this retrylab 0.1.0 cannot read", "formats 1 to 2"]),
        (&bad_cell, &["summary.csv", "row 2", "`lots`", "not a number"]),
        (&file, &["small.toml", "not a folder"]),
    ];
    for (path, expected) in cases {
        for verb in ["show", "plot"] {
            if verb == "show" && path == bad_cell.as_path() {
                continue; // show draws what it can read; the bad cell shows as n/a.
            }
            let before = listing(path);
            let assert = retrylab().args([verb, path.to_str().unwrap()]).assert().code(2);
            let output = assert.get_output();
            assert!(output.stdout.is_empty(), "{verb} {}: printed a view", path.display());
            let stderr = String::from_utf8(output.stderr.clone()).unwrap();
            for part in expected {
                assert!(stderr.contains(part), "{verb} {}: {stderr}", path.display());
            }
            assert_eq!(listing(path), before, "{verb} wrote into {}", path.display());
        }
    }
}

#[test]
fn help_of_the_reading_verbs_shows_examples() {
    for verb in ["show", "plot", "compare"] {
        retrylab()
            .args([verb, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Examples:").and(predicate::str::contains(format!("retrylab {verb} "))));
    }
    retrylab().args(["run", "--help"]).assert().success().stdout(predicate::str::contains("--show"));
}
