//! `retrylab tune` and the common random numbers under it, on the real binary: a search whose optimum is known in
//! closed form, the AWS study's jitter preference, the variance reduction common random numbers buy, resumed and
//! repeated searches, and bad expressions.

use std::collections::HashMap;
use std::path::Path;

use crate::common::{retrylab, write_scenario};
use retrylab::stats::Difference;

/// Every attempt fails independently with probability P (a server with workers to spare). With k attempts a request
/// succeeds with probability 1 − Pᵏ and costs (1 − Pᵏ)/(1 − P) attempts, which grows with k: the cheapest policy
/// with success_rate ≥ TARGET is the smallest k with Pᵏ ≤ 1 − TARGET.
const P: f64 = 0.2;
const TARGET: f64 = 0.98;
const CLOSED_FORM: &str = r#"schema_version = 1
name = "closed-form"
seed = 3
replicates = 10

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
constraints = ["success_rate >= 0.98"]
max_attempts = [1, 2, 3, 4, 5, 6]
"#;

/// The rows of a CSV file as maps from column to cell.
fn rows(path: &Path) -> Vec<HashMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
    reader.records().map(|r| header.iter().cloned().zip(r.unwrap().iter().map(str::to_owned)).collect()).collect()
}

fn number(row: &HashMap<String, String>, column: &str) -> f64 {
    row[column].parse().unwrap_or_else(|_| panic!("{column} = {:?}", row[column]))
}

fn tune(scenario: &Path, out: &Path, extra: &[&str]) -> String {
    let assert = retrylab()
        .args(["tune", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .args(extra)
        .assert()
        .success();
    String::from_utf8(assert.get_output().stdout.clone()).unwrap()
}

#[test]
fn tune_finds_the_optimum_known_in_closed_form() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "closed.toml", CLOSED_FORM);
    let out = dir.path().join("out");
    tune(&scenario, &out, &["-q"]);
    let best_k = (1..).find(|&k| P.powi(k) <= 1.0 - TARGET).unwrap();
    assert_eq!(best_k, 3);
    let table = rows(&out.join("tune.csv"));
    let winner = &table[0];
    assert_eq!((winner["rank"].as_str(), winner["max_attempts"].as_str()), ("1", "3"), "{table:?}");
    // The winner's measured cost and success agree with the closed form within their own 99.9% intervals.
    let widen = 3.291 / 2.262; // t(9) 95% → normal 99.9%, generous for 10 replicates
    let cost = (1.0 - P.powi(3)) / (1.0 - P);
    let (mean, ci) = (number(winner, "amplification_mean"), number(winner, "amplification_ci95"));
    assert!((mean - cost).abs() <= ci * widen + 1e-3, "amplification {mean} ± {ci} vs {cost}");
    let (mean, ci) = (number(winner, "success_rate_mean"), number(winner, "success_rate_ci95"));
    assert!((mean - (1.0 - P.powi(3))).abs() <= ci * widen + 1e-3, "success {mean} ± {ci}");
    // k = 1 and 2 break the constraint; k = 4 to 6 cost more, and the race says so with intervals.
    for row in &table[1..] {
        let status = &row["status"];
        match row["max_attempts"].as_str() {
            "1" | "2" => assert!(status.contains("breaks `success_rate >= 0.98`"), "{status}"),
            _ => assert!(status.contains("worse than max_attempts=3"), "{status}"),
        }
    }
    let recommendation = std::fs::read_to_string(out.join("recommendation.toml")).unwrap();
    let block: toml::Table = recommendation.parse().unwrap();
    assert_eq!(block["client"]["max_attempts"].as_integer(), Some(3), "{recommendation}");
    assert_eq!(block["client"]["strategy"].as_str(), Some("constant"), "{recommendation}");
    assert!(out.join("tune.png").is_file() && out.join("tune.svg").is_file());
}

#[test]
fn on_the_aws_study_tune_prefers_jitter_to_plain_exponential_with_a_paired_interval_that_excludes_zero() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("scenarios/aws-jitter-2015.toml")).unwrap();
    let text = format!(
        "{text}\n[tune]\nobjective = \"calls\"\nbudget = 400\nstrategy = [\"exponential\", \"full-jitter\", \
         \"equal-jitter\", \"decorrelated-jitter\"]\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "aws.toml", &text);
    let out = dir.path().join("out");
    tune(&scenario, &out, &["--set", "clients=100", "-q"]);
    let table = rows(&out.join("tune.csv"));
    assert_ne!(table[0]["strategy"], "exponential", "{table:?}");
    let exponential = table.iter().find(|row| row["strategy"] == "exponential").unwrap();
    let (difference, ci) = (number(exponential, "vs_best_mean"), number(exponential, "vs_best_paired_ci95"));
    assert!(difference - ci > 0.0, "exponential costs {difference} ± {ci} more calls than {}", table[0]["strategy"]);
}

/// Per-replicate values of `metric` at the runs.csv rows where `key` = `value`, in replicate order.
fn column(path: &Path, key: &str, value: &str, metric: &str) -> Vec<f64> {
    let mut selected: Vec<(u32, f64)> = rows(path)
        .iter()
        .filter(|row| row[key] == value)
        .map(|row| (row["replicate"].parse().unwrap(), number(row, metric)))
        .collect();
    selected.sort_by_key(|(replicate, _)| *replicate);
    selected.into_iter().map(|(_, v)| v).collect()
}

#[test]
fn common_random_numbers_narrow_the_paired_interval_of_a_policy_difference() {
    // Two policies on one world (a sweep: common random numbers), and the second again on other worlds (another
    // master seed: independent streams). The same difference, estimated both ways from 30 replicates each.
    let text = CLOSED_FORM
        .replace("replicates = 10", "replicates = 30")
        .replace("[tune]", "[sweep]\nmax_attempts = [3, 4]\n\n[tune]");
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "crn.toml", &text);
    let (common, other) = (dir.path().join("common"), dir.path().join("other"));
    let run = |out: &Path, extra: &[&str]| {
        retrylab()
            .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"])
            .args(extra)
            .assert()
            .success();
    };
    run(&common, &[]);
    run(&other, &["--seed", "4"]);
    let calls = |dir: &Path, k: &str| column(&dir.join("runs.csv"), "max_attempts", k, "calls");
    let paired = Difference::paired(&calls(&common, "4"), &calls(&common, "3"));
    let independent = Difference::paired(&calls(&other, "4"), &calls(&common, "3"));
    let factor = independent.paired_ci95 / paired.paired_ci95;
    // docs/tuning.md quotes this measurement: `cargo test tune::common -- --nocapture` prints it.
    eprintln!(
        "paired ± {:.2}, independent ± {:.2}: {factor:.1} times narrower",
        paired.paired_ci95, independent.paired_ci95
    );
    assert!(
        factor > 3.0,
        "common random numbers narrowed the interval by only {factor:.2}: {paired:?} vs {independent:?}"
    );
    // Both estimate the same difference: 100 requests/s × 20 s × P³ extra attempts.
    let expected = 2000.0 * P.powi(3);
    assert!((paired.mean - expected).abs() < 3.0 * paired.paired_ci95 + 1.0, "{paired:?} vs {expected}");
    assert!((independent.mean - expected).abs() < 3.0 * independent.paired_ci95, "{independent:?} vs {expected}");
    // paired.csv says the same, next to the interval the same runs give unpaired.
    let row = rows(&common.join("paired.csv")).into_iter().find(|row| row["a"] == "3" && row["b"] == "4").unwrap();
    assert!((number(&row, "calls_diff_mean") + paired.mean).abs() < 1e-6 * paired.mean.abs().max(1.0), "{row:?}");
    assert!((number(&row, "calls_paired_ci95") - paired.paired_ci95).abs() < 1e-3 * paired.paired_ci95);
    assert!(number(&row, "calls_unpaired_ci95") > 3.0 * number(&row, "calls_paired_ci95"), "{row:?}");
    // `compare --paired` shows them; a folder without a policy axis has none to show.
    let shown =
        retrylab().args(["compare", common.to_str().unwrap(), "--paired", "--metric", "calls"]).assert().success();
    let shown = String::from_utf8(shown.get_output().stdout.clone()).unwrap();
    assert!(shown.contains("3 − 4") && shown.contains("VRF"), "{shown}");
    let single =
        write_scenario(dir.path(), "single.toml", &text.replace("max_attempts = [3, 4]", "max_attempts = [3]"));
    let lone = dir.path().join("lone");
    retrylab().args(["run", single.to_str().unwrap(), "--out", lone.to_str().unwrap(), "-q"]).assert().success();
    assert!(!lone.join("paired.csv").exists());
    retrylab().args(["compare", lone.to_str().unwrap(), "--paired"]).assert().code(2);
}

#[test]
fn a_search_is_deterministic_and_a_resumed_one_reuses_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "closed.toml", CLOSED_FORM);
    let (first, second) = (dir.path().join("first"), dir.path().join("second"));
    tune(&scenario, &first, &["-q", "--threads", "1"]);
    // A search cut short by its budget, then resumed with the full one, ends where an uncut one does.
    tune(&scenario, &second, &["-q", "--budget", "12"]);
    let resumed = tune(&scenario, &second, &["--resume", "--threads", "2"]);
    assert!(resumed.contains("12 reused from the checkpoint"), "{resumed}");
    for file in ["tune.csv", "recommendation.toml"] {
        assert_eq!(std::fs::read(first.join(file)).unwrap(), std::fs::read(second.join(file)).unwrap(), "{file}");
    }
}

#[test]
fn bad_expressions_and_tables_are_refused_with_their_place() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "closed.toml", CLOSED_FORM);
    let out = dir.path().join("out");
    let refused = |args: &[&str]| {
        let assert = retrylab().arg("tune").args(args).args(["--out", out.to_str().unwrap()]).assert().code(2);
        String::from_utf8(assert.get_output().stderr.clone()).unwrap()
    };
    let stderr = refused(&[scenario.to_str().unwrap(), "--objective", "calls +* 2"]);
    assert!(stderr.contains("--objective \"calls +* 2\": column 8: expected a number"), "{stderr}");
    assert!(stderr.contains("\n  calls +* 2\n         ^"), "a caret under the column: {stderr}");
    let stderr = refused(&[scenario.to_str().unwrap(), "--constraint", "success_rate > 0.9"]);
    assert!(stderr.contains("\">=\" or \"<=\""), "{stderr}");
    let typo = write_scenario(
        dir.path(),
        "typo.toml",
        &CLOSED_FORM.replace("objective = \"amplification\"", "objective = \"amplificaton\""),
    );
    let stderr = refused(&[typo.to_str().unwrap()]);
    assert!(stderr.contains("typo.toml:24:14: tune.objective: unknown metric \"amplificaton\""), "{stderr}");
    assert!(stderr.contains("did you mean \"amplification\""), "{stderr}");
    let system = write_scenario(
        dir.path(),
        "system.toml",
        &CLOSED_FORM.replace("max_attempts = [1", "workers = [1, 2]\nmax_attempts = [1"),
    );
    let stderr = refused(&[system.to_str().unwrap()]);
    assert!(stderr.contains("tune.workers: `workers` describes the system"), "{stderr}");
    let stderr = refused(&[scenario.to_str().unwrap(), "--budget", "11"]);
    assert!(stderr.contains("a budget of 11 runs cannot judge 6 candidates"), "{stderr}");
    assert!(!out.exists(), "nothing written");
    // `run` and `validate` read [tune] too, so a bad table is caught before any search.
    retrylab().args(["validate", typo.to_str().unwrap()]).assert().code(2);
}
