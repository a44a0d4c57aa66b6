//! `retrylab show` draws what happened (issue 30, items 5 and 4): rows that end at different times share one
//! labelled time axis, each row says where it ends, no policy is cut, every line keeps to `$COLUMNS`, and a herd
//! leads with its retry synchrony, its peaks leaving out the release bucket.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{retrylab, write_scenario};

/// A herd whose points end far apart: exponential backoff (cap 5 s) keeps its clients for tens of seconds, full
/// jitter lets them go in about a second, a constant 10 ms in half of one.
const UNEVEN_HERD: &str = r#"schema_version = 1
name = "uneven-herd"
seed = 7
replicates = 2
timeline_bucket = "10ms"

[model]
kind = "server"
workers = 2
queue_limit = 10
service = "constant"
service_mean = "5ms"
network_delay = "1ms"

[workload]
kind = "burst"
clients = 200

[client]
base = "10ms"
cap = "5s"

[sweep]
strategy = ["exponential", "full-jitter", "constant"]
"#;

const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

fn run_herd(dir: &Path) -> PathBuf {
    run_text(dir, UNEVEN_HERD)
}

fn run_text(dir: &Path, text: &str) -> PathBuf {
    let scenario = write_scenario(dir, "herd.toml", text);
    let out = dir.join("out");
    retrylab().args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"]).assert().success();
    out
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

/// The calls per bucket of every strategy, from timeline.csv, in time order.
fn calls_per_bucket(out: &Path) -> BTreeMap<String, Vec<(f64, f64)>> {
    let mut reader = csv::Reader::from_path(out.join("timeline.csv")).unwrap();
    let header = reader.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (start, calls) = (column("bucket_start_ms"), column("calls"));
    let mut rows: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for record in reader.records() {
        let record = record.unwrap();
        let number = |i: usize| record[i].parse::<f64>().unwrap();
        rows.entry(record[0].to_owned()).or_default().push((number(start), number(calls)));
    }
    rows
}

/// The chars of `line` from column `from` on, and the offset of its last block from there.
fn last_block(line: &str, from: usize) -> Option<usize> {
    line.chars().skip(from).collect::<Vec<_>>().iter().rposition(|c| BLOCKS.contains(c))
}

#[test]
fn rows_that_end_apart_share_one_labelled_time_axis_and_say_where_they_end() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_herd(dir.path());
    let timelines = calls_per_bucket(&out);
    let buckets = |strategy: &str| timelines[strategy].len();
    let end_ms = |strategy: &str| timelines[strategy].last().unwrap().0 + 10.0;
    // The scenario does what the test needs: the longest row is many times the shortest.
    assert!(buckets("exponential") > 20 * buckets("full-jitter"), "{:?}", timelines.keys());
    let longest = end_ms("exponential");

    let text = show(&out, 80);
    let lines: Vec<&str> = text.lines().collect();
    let axis = lines.iter().position(|line| line.trim_start().starts_with("0 ")).unwrap_or_else(|| panic!("{text}"));
    let start = lines[axis].find('0').unwrap();
    assert!(lines[axis].trim_end().ends_with(&format!("{longest:.0} ms")), "axis: {}\n{text}", lines[axis]);
    let row = |strategy: &str| {
        lines[axis + 1..]
            .iter()
            .find(|line| line.starts_with(&format!("strategy={strategy} ")))
            .unwrap_or_else(|| panic!("no row for {strategy}:\n{text}"))
    };
    let long_extent = last_block(row("exponential"), start).unwrap() + 1;
    for strategy in ["exponential", "full-jitter", "constant"] {
        let line = row(strategy);
        assert!(line.contains(&format!("ends {:.0} ms", end_ms(strategy))), "{line}\n{text}");
        // On the shared axis a row reaches as far as its share of the longest row, one cell of rounding aside.
        let extent = last_block(line, start).unwrap() + 1;
        let share = (long_extent as f64 * buckets(strategy) as f64 / buckets("exponential") as f64).ceil();
        assert!(extent as f64 <= share + 1.0, "{strategy} spans {extent} cells, its share is {share}:\n{text}");
    }
}

#[test]
fn policies_are_wrapped_never_cut_and_every_line_keeps_to_columns() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_herd(dir.path());
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    let policies: Vec<&str> = manifest["policies"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    assert_eq!(policies.len(), 3);
    for columns in [24, 60, 80, 132] {
        let text = show(&out, columns);
        for line in text.lines() {
            assert!(line.chars().count() <= columns, "COLUMNS={columns}: {line:?}\n{text}");
        }
        let section: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("client policy")).collect();
        let section = section.split(|line| line.is_empty()).next().unwrap().join(" ");
        let joined = section.split_whitespace().collect::<Vec<_>>().join(" ");
        for policy in &policies {
            assert!(policy.contains("limiter none") && policy.contains("retry_on"), "{policy}");
            let whole = policy.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(joined.contains(&whole), "COLUMNS={columns}: {policy:?} not shown whole:\n{text}");
        }
        assert!(!section.contains('…'), "COLUMNS={columns}: a policy line was cut:\n{text}");
    }
}

#[test]
fn a_herd_leads_with_retry_synchrony_and_its_peaks_leave_out_the_release() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_herd(dir.path());
    let timelines = calls_per_bucket(&out);
    let text = show(&out, 132);
    let header = text.lines().find(|line| line.starts_with("strategy ")).unwrap_or_else(|| panic!("{text}"));
    let columns: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(columns[..3], ["strategy", "retry_peak_to_mean", "retry_dispersion"], "{text}");
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("peak: after the release at 0 ms"), "{text}");
    let mut release_is_the_busiest = false;
    for (strategy, buckets) in &timelines {
        let after_release = buckets[1..].iter().map(|(_, calls)| *calls).fold(0.0, f64::max);
        release_is_the_busiest |= buckets[0].1 > after_release;
        let line = text.lines().find(|line| line.starts_with(&format!("strategy={strategy} "))).unwrap();
        assert!(after_release >= 100.0, "{strategy}: pick a herd whose peaks print as whole numbers");
        assert!(line.ends_with(&format!("peak {after_release:.0}")), "{line}\n{text}");
    }
    assert!(release_is_the_busiest, "the test needs a release bucket busier than what follows: {timelines:?}");
}

#[test]
fn show_draws_the_series_the_timeline_chart_draws() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_text(dir.path(), &format!("{UNEVEN_HERD}\n[charts]\ntimeline_series = \"retries\"\n"));
    let text = show(&out, 100);
    assert!(text.contains("\nretries per 10ms bucket, mean over replicates\n"), "{text}");
    assert!(!text.contains("calls per 10ms bucket"), "{text}");
}
