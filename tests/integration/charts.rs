//! Charts that read, through the real binary: no panel draws more lines than the palette has colours (small
//! multiples, `[charts] at` pins, or the first ten with the rest named); titles and axis titles come from the
//! metrics' help and units; long time axes count in seconds; the lock-step reading of peaks appears only where
//! every client starts together; the latency CDF's log axis reads 1, 10, 100 ms; a metric no run could fill gets
//! no chart; and `compare` draws bars for a named sweep and says why when folders share nothing.

use std::path::{Path, PathBuf};

use crate::common::{SMALL, retrylab, write_scenario};

/// Runs `text` as `name` in `dir` with the extra arguments and returns the results folder.
pub(crate) fn run(dir: &Path, name: &str, text: &str, out: &str, extra: &[&str]) -> PathBuf {
    let scenario = write_scenario(dir, name, text);
    let out = dir.join(out);
    let mut args = vec!["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"];
    args.extend_from_slice(extra);
    retrylab().args(&args).assert().success();
    out
}

/// The text elements of an SVG chart, unescaped, in drawing order.
pub(crate) fn texts(svg_path: &Path) -> Vec<String> {
    let svg = std::fs::read_to_string(svg_path).unwrap_or_else(|e| panic!("{}: {e}", svg_path.display()));
    svg.split("<text")
        .skip(1)
        .filter_map(|element| {
            let body = &element[element.find('>')? + 1..element.find("</text>")?];
            let body = body.trim().replace("&apos;", "'").replace("&quot;", "\"").replace("&lt;", "<");
            Some(body.replace("&gt;", ">").replace("&amp;", "&"))
        })
        .collect()
}

/// Whether `wanted` is in the chart's text, also across the lines a long subtitle was wrapped onto.
pub(crate) fn has(texts: &[String], wanted: &str) -> bool {
    texts.join(" ").contains(wanted)
}

/// SMALL with a second named axis: 3 base sleeps × 4 strategies = 12 lines against clients, more than the 10
/// colours.
fn twelve_lines() -> String {
    let text = SMALL.replace(
        "strategy = [\"exponential\", \"full-jitter\", \"decorrelated-jitter\"]",
        "strategy = [\"exponential\", \"full-jitter\", \"equal-jitter\", \"decorrelated-jitter\"]\nbase = [\"1ms\", \"5ms\", \"20ms\"]",
    );
    assert_ne!(text, SMALL, "the scenario template changed");
    text.replace("replicates = 4", "replicates = 2")
}

#[test]
fn more_lines_than_colours_become_panels_or_pins_and_the_subtitle_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), "twelve.toml", &twelve_lines(), "out", &[]);
    let calls = texts(&out.join("calls.svg"));
    // Fewest panels wins: by base, 3 panels of 4 lines (by strategy it would be 4 panels of 3).
    for panel in ["base=1ms", "base=5ms", "base=20ms"] {
        assert!(calls.iter().any(|t| t == panel), "panel {panel}: {calls:?}");
    }
    assert!(has(&calls, "one panel per base (more than 10 lines)"), "{calls:?}");
    // One legend for all panels, headed by the parameter, each strategy once.
    assert!(calls.iter().any(|t| t == "strategy"), "legend title: {calls:?}");
    assert_eq!(calls.iter().filter(|t| *t == "equal-jitter").count(), 1, "{calls:?}");

    // `series = "base"` keeps the bases as lines: the panels are the strategies.
    let out = run(dir.path(), "twelve.toml", &twelve_lines(), "series", &["--set", "charts.series=base"]);
    let calls = texts(&out.join("calls.svg"));
    assert!(calls.iter().any(|t| t == "strategy=equal-jitter") && has(&calls, "one panel per strategy"), "{calls:?}");

    // Pinned to one base: 4 lines, one panel, and the subtitle names the pin.
    let out = run(dir.path(), "twelve.toml", &twelve_lines(), "pinned", &["--set", "charts.at={ base = \"5ms\" }"]);
    let calls = texts(&out.join("calls.svg"));
    assert!(has(&calls, "at base=5ms"), "{calls:?}");
    assert!(!calls.iter().any(|t| t.starts_with("base=")) && !has(&calls, "one panel per"), "{calls:?}");

    // A pin that is not a swept value is refused like any other.
    let scenario =
        write_scenario(dir.path(), "bad.toml", &format!("{}\n[charts]\nat = {{ base = \"7ms\" }}\n", twelve_lines()));
    let assert = retrylab().args(["validate", scenario.to_str().unwrap()]).assert().code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(stderr.contains("charts.at") && stderr.contains("7ms"), "{stderr}");
}

#[test]
fn lines_past_the_palette_with_nothing_to_split_by_are_left_out_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let bases: Vec<String> = (1..=12).map(|ms| format!("\"{ms}ms\"")).collect();
    let text = SMALL
        .replace(
            "strategy = [\"exponential\", \"full-jitter\", \"decorrelated-jitter\"]",
            &format!("base = [{}]", bases.join(", ")),
        )
        .replace("replicates = 4", "replicates = 1");
    let out = run(dir.path(), "bases.toml", &text, "out", &[]);
    let calls = texts(&out.join("calls.svg"));
    assert!(has(&calls, "10 of 12 lines drawn; left out: 11ms; 12ms; pin parameters with [charts] at"), "{calls:?}");
    assert!(has(&calls, "calls: 1 replicate"), "{calls:?}");
    assert!(!has(&calls, "95% CI"), "no CI is claimed from one replicate: {calls:?}");
    assert!(!calls.iter().any(|t| t == "11ms"), "a line left out is not in the legend: {calls:?}");
}

#[test]
fn titles_and_axes_come_from_help_and_units() {
    let dir = tempfile::tempdir().unwrap();
    let text = SMALL.replace("clients = [5, 15]", "base = [\"5ms\", \"20ms\"]");
    let out = run(dir.path(), "small.toml", &text, "out", &[]);
    let calls = texts(&out.join("calls.svg"));
    assert!(has(&calls, "small: server WRITE calls (the study's measure of work), by base"), "{calls:?}");
    assert!(calls.iter().any(|t| t == "calls (count)"), "y title with unit: {calls:?}");
    assert!(calls.iter().any(|t| t == "base (ms)"), "a duration axis says its unit: {calls:?}");
    // A metric in ms is drawn in seconds once its top (mean + CI half-width) reaches 10 s.
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let header: Vec<&str> = summary.lines().next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (mean, ci) = (column("completion_ms_mean"), column("completion_ms_ci95"));
    let top =
        summary.lines().skip(1).map(|line| line.split(',').collect::<Vec<_>>()).fold(0.0_f64, |top, cells| {
            top.max(cells[mean].parse::<f64>().unwrap() + cells[ci].parse::<f64>().unwrap())
        });
    let expected = if top < 10_000.0 { "completion (ms)" } else { "completion (s)" };
    let completion = texts(&out.join("completion_ms.svg"));
    assert!(completion.iter().any(|t| t == expected), "{expected}: {completion:?}");
    assert!(!completion.iter().any(|t| t.contains("completion_ms by")), "no raw key in the title: {completion:?}");
}

/// A server under an open stream long enough that its time axis is in seconds, with a latency CDF.
const OPEN: &str = r#"schema_version = 1
name = "open"
replicates = 1
timeline_bucket = "500ms"

[model]
kind = "server"
workers = 4
service_mean = "5ms"

[workload]
kind = "open"
rate = 20
duration = "30s"

[client]
timeout = "1s"

[sweep]
strategy = ["exponential", "full-jitter"]

[charts]
metrics = ["calls", "recovery_ms"]
"#;

#[test]
fn long_runs_count_time_in_seconds_and_peaks_are_read_as_lock_step_only_for_a_release() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), "open.toml", OPEN, "open", &[]);
    let timeline = texts(&out.join("timeline.svg"));
    assert!(timeline.iter().any(|t| t == "time (s)"), "{timeline:?}");
    assert!(timeline.iter().any(|t| t == "calls per 500 ms"), "{timeline:?}");
    assert!(!timeline.iter().any(|t| t == "10000" || t == "20000"), "no tick in ms: {timeline:?}");
    assert!(!has(&timeline, "lock-step"), "an open stream's peaks are not a herd: {timeline:?}");
    let goodput = texts(&out.join("goodput.svg"));
    assert!(goodput.iter().any(|t| t == "time (s)"), "{goodput:?}");
    // The latency CDF labels its log axis at powers of ten with their unit, and never "10.0".
    let cdf = texts(&out.join("latency_cdf.svg"));
    let ticks: Vec<&String> = cdf.iter().filter(|t| t.ends_with(" ms") || t.ends_with(" s")).collect();
    let power_of_ten = |tick: &str| {
        let number: f64 = tick.split(' ').next().unwrap().parse().unwrap();
        (number.log10() - number.log10().round()).abs() < 1e-9
    };
    assert!(ticks.len() >= 2 && ticks.iter().all(|t| power_of_ten(t)), "{cdf:?}");
    assert!(!cdf.iter().any(|t| t.contains("10.0")), "{cdf:?}");
    // No trigger: recovery_ms is undefined everywhere, left out of summary.csv and drawn nowhere.
    assert!(!out.join("recovery_ms.svg").exists());
    assert!(out.join("calls.svg").exists());

    // The same server with every client released at t = 0: the reading of peaks holds there.
    let burst = OPEN.replace("kind = \"open\"\nrate = 20\nduration = \"30s\"", "kind = \"burst\"\nclients = 50");
    let out = run(dir.path(), "burst.toml", &burst, "burst", &[]);
    let timeline = texts(&out.join("timeline.svg"));
    assert!(has(&timeline, "lock-step"), "{timeline:?}");
    assert!(timeline.iter().any(|t| t == "time (ms)"), "a short run stays in ms: {timeline:?}");
}

/// Two runs of a server sweep over named strategies, which `compare` used to refuse ("sweeps none").
const NAMED: &str = r#"schema_version = 1
name = "named"
replicates = 2

[model]
kind = "server"
workers = 2
queue_limit = 10

[workload]
kind = "burst"
clients = 30

[client]
timeout = "1s"

[sweep]
strategy = ["exponential", "full-jitter", "decorrelated-jitter"]
"#;

#[test]
fn compare_draws_bars_for_a_named_sweep_and_explains_folders_it_cannot_compare() {
    let dir = tempfile::tempdir().unwrap();
    let fast = run(dir.path(), "named.toml", NAMED, "fast", &["--set", "client.base=5ms"]);
    let slow = run(dir.path(), "named.toml", NAMED, "slow", &["--set", "client.base=50ms"]);
    let chart = dir.path().join("named.svg");
    retrylab()
        .args(["compare", fast.to_str().unwrap(), slow.to_str().unwrap(), "--metric", "calls"])
        .args(["--out", chart.to_str().unwrap()])
        .assert()
        .success();
    let bars = texts(&chart);
    assert!(has(&bars, "compare: calls by strategy"), "{bars:?}");
    for label in ["exponential", "full-jitter", "decorrelated-jitter", "fast", "slow", "strategy"] {
        assert!(bars.iter().any(|t| t == label), "{label}: {bars:?}");
    }
    assert!(has(&bars, "whiskers: 95% CI"), "{bars:?}");

    // A folder sweeping something else: the error names what each sweeps and what would work.
    let other = NAMED.replace(
        "strategy = [\"exponential\", \"full-jitter\", \"decorrelated-jitter\"]",
        "service_mean = [\"5ms\", \"10ms\"]",
    );
    let other = run(dir.path(), "other.toml", &other, "other", &[]);
    let assert = retrylab()
        .current_dir(dir.path())
        .args(["compare", "fast", "other", "--metric", "calls", "--out", "never.svg"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    for piece in
        ["share no swept parameter", "fast sweeps strategy (names)", "other sweeps service_mean (numbers)", "--set"]
    {
        assert!(stderr.contains(piece), "{piece}: {stderr}");
    }
    assert!(!dir.path().join("never.svg").exists());
    let _ = other;
}

#[test]
fn compare_splits_too_many_lines_into_panels_by_a_swept_parameter() {
    let dir = tempfile::tempdir().unwrap();
    // 2 folders × 4 strategies × 3 bases: 24 lines; by base, 3 panels of 8.
    let one = run(dir.path(), "twelve.toml", &twelve_lines(), "one", &[]);
    let two = run(dir.path(), "twelve.toml", &twelve_lines(), "two", &["--set", "client.cap=1s"]);
    let chart = dir.path().join("both.svg");
    retrylab()
        .args(["compare", one.to_str().unwrap(), two.to_str().unwrap(), "--metric", "calls"])
        .args(["--out", chart.to_str().unwrap()])
        .assert()
        .success();
    let texts = texts(&chart);
    assert!(texts.iter().any(|t| t == "base=20ms") && has(&texts, "one panel per base"), "{texts:?}");
    assert!(texts.iter().any(|t| t == "two: strategy=equal-jitter"), "{texts:?}");
}

#[test]
fn compare_finds_a_metric_by_its_former_name_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"schema_version = 1
name = "chain"
[model]
kind = "layers"
failure_probability = 1.0
[workload]
requests = 20
[sweep]
layers = [1, 2]
"#;
    let out = run(dir.path(), "chain.toml", text, "chain", &[]);
    let assert = retrylab()
        .current_dir(dir.path())
        .args(["compare", out.to_str().unwrap(), "--metric", "bottom_calls", "--out", "chain.svg"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(
        stdout.contains("compared bottom_calls_per_request (asked for by its former name bottom_calls)"),
        "{stdout}"
    );
    let chart = texts(&dir.path().join("chain.svg"));
    assert!(has(&chart, "compare: bottom_calls_per_request by layers"), "{chart:?}");
    assert!(has(&chart, "asked for as bottom_calls"), "{chart:?}");
}
