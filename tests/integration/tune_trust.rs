//! Issue 30, items 2 and 3, on the real binary: recommendation.toml's block reproduces the winner's runs byte for
//! byte; goals and values no run could satisfy are refused before any run; the limiter's `budget` can be searched
//! beside the search's own; the race states its error level and its verdicts in plain words.

use std::collections::HashMap;
use std::path::Path;

use crate::common::{retrylab, write_scenario};
use retrylab::report::format_number;

/// A queue whose consumers meet a 20 s downstream outage: the search covers a `[client]` key and two `[model]`
/// keys that are the consumers' retry policy (redelivery rule and receives before the dead-letter queue).
const QUEUE: &str = r#"schema_version = 1
name = "queue-paste"
seed = 11
replicates = 3

[model]
kind = "queue"
workers = 5
service = "exponential"
service_mean = "100ms"
faults = "10s..30s fail-fast"

[workload]
kind = "open"
rate = 20
duration = "60s"

[client]
base = "2s"
cap = "30s"
multiplier = 2

[tune]
objective = "dead_lettered + 0.01 * downstream_calls"
budget = 60
strategy = ["none", "exponential"]
redelivery = ["visibility-timeout", "ttl-queue"]
max_receives = [3, 6]
"#;

/// Every attempt fails with probability 0.2 (tests/integration/tune.rs derives the optimum in closed form).
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

/// `text` without the tables named in `tables` (each from its `[name]` line to the next table).
fn without_tables(text: &str, tables: &[&str]) -> String {
    let mut kept = String::new();
    let mut dropping = false;
    for line in text.lines() {
        if line.starts_with('[') {
            dropping = tables.iter().any(|table| line.trim() == format!("[{table}]"));
        }
        if !dropping {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

/// The rows of a CSV file as maps from column to cell.
fn rows(path: &Path) -> Vec<HashMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
    reader.records().map(|r| header.iter().cloned().zip(r.unwrap().iter().map(str::to_owned)).collect()).collect()
}

fn tune(scenario: &Path, out: &Path, extra: &[&str]) -> String {
    let assert = retrylab()
        .args(["tune", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .args(extra)
        .assert()
        .success();
    String::from_utf8(assert.get_output().stdout.clone()).unwrap()
}

/// Runs `tune` expecting exit code 2, and returns its stderr.
fn refused(args: &[&str]) -> String {
    let assert = retrylab().arg("tune").args(args).assert().code(2);
    String::from_utf8(assert.get_output().stderr.clone()).unwrap()
}

#[test]
fn the_pasted_block_reproduces_the_winners_runs_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "queue.toml", QUEUE);
    let tuned = dir.path().join("tuned");
    // A `[workload]` key changed on the command line, which the block's tables do not hold: the command does.
    tune(&scenario, &tuned, &["-q", "--set", "rate=25", "--set", "max_receives=9"]);
    let block = std::fs::read_to_string(tuned.join("recommendation.toml")).unwrap();
    // Every searched key sits in its own table, [model] with the model's other written keys.
    let parsed: toml::Table = block.parse().unwrap();
    assert!(parsed["client"].get("strategy").is_some(), "{block}");
    assert_eq!(parsed["model"]["kind"].as_str(), Some("queue"), "{block}");
    assert!(parsed["model"].get("redelivery").is_some() && parsed["model"].get("max_receives").is_some(), "{block}");
    assert!(parsed["client"].get("redelivery").is_none(), "{block}");
    assert!(block.contains("family-wise error 0.05"), "the race's level: {block}");

    // The block says how to run it; the pasted scenario runs exactly that.
    let command = block.lines().find_map(|line| line.strip_prefix("#   retrylab run ")).expect(&block);
    let words: Vec<&str> = command.split(' ').collect();
    assert_eq!(words[0], scenario.to_str().unwrap(), "{command}");
    assert!(command.ends_with(" --set rate=25"), "a searched key's override would undo the block's: {command}");
    let replicates: u32 = words[words.iter().position(|w| *w == "--replicates").unwrap() + 1].parse().unwrap();
    let pasted = format!("{}\n{block}", without_tables(QUEUE, &["model", "client", "tune"]));
    let pasted = write_scenario(dir.path(), "pasted.toml", &pasted);
    let ran = dir.path().join("ran");
    retrylab()
        .args(["run", pasted.to_str().unwrap()])
        .args(&words[1..])
        .args(["--out", ran.to_str().unwrap(), "-q"])
        .assert()
        .success();

    // The winner's runs in the search's checkpoint (every metric's exact bits), under its point id.
    let id = block.lines().find_map(|line| line.strip_prefix("# point id ")).expect(&block);
    let checkpoint = std::fs::read_to_string(tuned.join(".retrylab-tune-runs")).unwrap();
    let mut lines = checkpoint.lines();
    let metrics: Vec<&str> = lines.next().unwrap().rsplit_once("metrics=").unwrap().1.split(',').collect();
    let mut searched: HashMap<u32, Vec<f64>> = HashMap::new();
    for line in lines.filter(|line| line.starts_with(id)) {
        let fields: Vec<&str> = line.split(' ').collect();
        let values = fields[2..].iter().map(|bits| f64::from_bits(u64::from_str_radix(bits, 16).unwrap())).collect();
        searched.insert(fields[1].parse().unwrap(), values);
    }
    assert_eq!(searched.len(), replicates as usize, "the winner's runs in the checkpoint");
    let table = rows(&ran.join("runs.csv"));
    assert_eq!(table.len(), replicates as usize);
    for row in &table {
        let replicate: u32 = row["replicate"].parse().unwrap();
        let from_search: Vec<String> = metrics
            .iter()
            .zip(&searched[&replicate])
            .filter(|(metric, _)| row.contains_key(**metric))
            .map(|(_, value)| format_number(*value))
            .collect();
        let from_run: Vec<String> =
            metrics.iter().filter(|metric| row.contains_key(**metric)).map(|m| row[*m].clone()).collect();
        assert!(from_run.len() > 10, "{row:?}");
        assert_eq!(from_search.join(","), from_run.join(","), "replicate {replicate}");
    }
}

#[test]
fn goals_no_run_can_meet_and_values_refused_everywhere_are_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out_arg = ["--out", out.to_str().unwrap()];
    let cases = [
        // No outage, no fault windows: the stuck-state verdict never has a value.
        (
            "objective = \"amplification\"",
            "objective = \"recovery_ms\"",
            "tune.objective: `recovery_ms` is undefined in every run",
        ),
        ("\"success_rate >= 0.98\"", "\"success_rate >= 2\"", "tune.constraints: `success_rate >= 2` can never hold"),
        ("\"success_rate >= 0.98\"", "\"tipped <= 0.5\"", "tune.constraints: `tipped` is undefined in every run"),
        ("[1, 2, 3, 4, 5, 6]", "[3, 4]\ncap = [\"1ms\", \"5s\"]", "tune.cap: 1ms is refused in every combination"),
    ];
    for (from, to, expected) in cases {
        let scenario = write_scenario(dir.path(), "bad.toml", &CLOSED_FORM.replace(from, to));
        let stderr = refused(&[scenario.to_str().unwrap(), out_arg[0], out_arg[1]]);
        assert!(stderr.contains(expected), "{to}: {stderr}");
        assert!(stderr.contains("bad.toml:2"), "located in the file: {stderr}");
        assert!(!out.exists(), "nothing written, nothing run: {to}");
    }
    let scenario = write_scenario(dir.path(), "closed.toml", CLOSED_FORM);
    let stderr = refused(&[scenario.to_str().unwrap(), "--constraint", "success_rate >= 2", out_arg[0], out_arg[1]]);
    assert!(stderr.contains("--constraint \"success_rate >= 2\": `success_rate >= 2` can never hold"), "{stderr}");
    assert!(stderr.contains("[0, 1]"), "says what the left side can reach: {stderr}");
    let stderr = refused(&[scenario.to_str().unwrap(), "--objective", "stuck + calls", out_arg[0], out_arg[1]]);
    assert!(stderr.contains("--objective: `stuck` is undefined in every run"), "{stderr}");
    assert!(!out.exists());
    // `validate` reads [tune] too: the impossible bound is caught there.
    let impossible = write_scenario(dir.path(), "impossible.toml", &CLOSED_FORM.replace("0.98\"", "2\""));
    retrylab().args(["validate", impossible.to_str().unwrap()]).assert().code(2);
}

#[test]
fn the_limiters_budget_is_searched_by_its_table_beside_the_searchs_budget() {
    let dir = tempfile::tempdir().unwrap();
    let text = CLOSED_FORM.replace(
        "max_attempts = [1, 2, 3, 4, 5, 6]",
        "budget = 40\nlimiter = \"budget\"\nmax_attempts = 4\nclient.budget = [0.05, 0.5]",
    );
    let scenario = write_scenario(dir.path(), "budgets.toml", &text);
    let out = dir.path().join("out");
    tune(&scenario, &out, &["-q"]);
    let table = rows(&out.join("tune.csv"));
    let mut ratios: Vec<&str> = table.iter().map(|row| row["budget"].as_str()).collect();
    ratios.sort_unstable();
    assert_eq!(ratios, ["0.05", "0.5"], "{table:?}");
    assert!(table.iter().all(|row| row["policy"].contains("budget")), "{table:?}");
    let replicates: u32 = table.iter().map(|row| row["replicates"].parse::<u32>().unwrap()).sum();
    assert!(replicates <= 40, "the search's own budget of 40 runs holds: {replicates}");
    let block: toml::Table = std::fs::read_to_string(out.join("recommendation.toml")).unwrap().parse().unwrap();
    let ratio = block["client"]["budget"].as_float().unwrap();
    assert_eq!(ratio.to_string(), table[0]["budget"], "the winner's ratio, in [client]");
    // A list under the bare name is the goal key's mistake, and the message says how to search the ratio.
    let bare = write_scenario(
        dir.path(),
        "bare.toml",
        &text.replace("budget = 40\n", "").replace("client.budget = [", "budget = ["),
    );
    let stderr = refused(&[bare.to_str().unwrap()]);
    assert!(stderr.contains("tune.budget: expected a whole number of runs"), "{stderr}");
    assert!(stderr.contains("client.budget = [0.1, 0.2]"), "{stderr}");
}

#[test]
fn the_race_writes_its_level_and_says_its_verdicts_in_plain_words() {
    let dir = tempfile::tempdir().unwrap();
    // Two attempts are cheaper but miss the bound; ten and eleven never differ (no request fails ten times).
    let text =
        CLOSED_FORM.replace("0.98\"", "0.99\"").replace("max_attempts = [1, 2, 3, 4, 5, 6]", "max_attempts = [2, 3]");
    let scenario = write_scenario(dir.path(), "words.toml", &text);
    let out = dir.path().join("out");
    let stdout = tune(&scenario, &out, &[]);
    let next = stdout.lines().find(|line| line.starts_with("next:")).expect(&stdout);
    assert!(next.contains("max_attempts=2  (cheaper by "), "{next}");
    assert!(next.contains(" amplification (± "), "in the objective's terms: {next}");
    assert!(next.contains(" but fails success_rate >= 0.99 (0.9"), "{next}");
    assert!(!next.contains("by -"), "no negative margins: {next}");
    let recommendation = std::fs::read_to_string(out.join("recommendation.toml")).unwrap();
    assert!(recommendation.contains("# runner-up max_attempts=2: cheaper by "), "{recommendation}");
    assert!(recommendation.contains("# the race: family-wise error 0.05"), "{recommendation}");
    let table = rows(&out.join("tune.csv"));
    let dropped = table.iter().find(|row| row["max_attempts"] == "2").unwrap();
    assert_eq!(dropped["familywise_alpha"], "0.05");
    let (p, level): (f64, f64) = (dropped["drop_p_value"].parse().unwrap(), dropped["drop_level"].parse().unwrap());
    assert!(p <= level && level <= 0.05 / 2.0, "{dropped:?}");
    assert!(dropped["status"].contains(&format!("≤ {level:.1e}")), "{dropped:?}");

    let ties = write_scenario(dir.path(), "ties.toml", &text.replace("[2, 3]", "[10, 11]"));
    let stdout = tune(&ties, &dir.path().join("ties"), &[]);
    assert!(stdout.contains("tied:  max_attempts=11 (the same amplification on every replicate"), "{stdout}");
    let table = rows(&dir.path().join("ties").join("tune.csv"));
    let tied = table.iter().find(|row| row["max_attempts"] == "11").unwrap();
    assert!(
        tied["status"].contains("ties with max_attempts=10: the same amplification on every replicate"),
        "{tied:?}"
    );
}
