//! Charts a person can present, through the real binary: `[charts] title`, `y_scale = "log"` and the slide size
//! (1920 × 1080, no text under 20 px), all from `--set`; one colour per strategy whatever else a chart holds;
//! a herd's default view led by the retry synchrony metrics with its timeline first; the queue model's default
//! timeline (dead letters and depth); a linear axis that names a series 20 times the rest; and bad values refused
//! before any run.

use std::path::Path;

use crate::charts::{has, run, texts};
use crate::common::{SMALL, retrylab, write_scenario};

/// 200 clients released at once against a small server: a thundering herd that runs in well under a second.
const BURST: &str = r#"schema_version = 1
name = "burst"
seed = 7
replicates = 3
timeline_bucket = "10ms"

[model]
kind = "server"
workers = 4
queue_limit = 20
service = "exponential"
service_mean = "10ms"
network_delay = "1ms"

[workload]
kind = "burst"
clients = 200

[client]
base = "10ms"
cap = "2s"

[sweep]
strategy = ["none", "exponential", "full-jitter"]
"#;

/// A queue whose downstream fails for 10 s, with nothing said about its timeline.
const QUEUE: &str = r#"schema_version = 1
name = "queue"
seed = 3
replicates = 2
timeline_bucket = "1s"

[model]
kind = "queue"
workers = 4
service = "exponential"
service_mean = "20ms"
faults = "10s..20s fail-fast"
max_receives = 3

[workload]
kind = "open"
rate = 20
duration = "40s"

[sweep]
redelivery = ["visibility-timeout", "ttl-queue"]
"#;

/// The value of attribute `key` in the SVG's root element.
fn root_attribute(svg: &str, key: &str) -> String {
    let root = &svg[svg.find("<svg").unwrap()..];
    let root = &root[..root.find('>').unwrap()];
    let start = root.find(&format!(" {key}=\"")).unwrap_or_else(|| panic!("no {key} in {root}")) + key.len() + 3;
    root[start..start + root[start..].find('"').unwrap()].to_owned()
}

/// The `font-size` of every text element of an SVG.
fn font_sizes(svg: &str) -> Vec<f64> {
    svg.split("<text")
        .skip(1)
        .filter_map(|element| {
            let start = element.find("font-size=\"")? + 11;
            element[start..start + element[start..].find('"')?].parse().ok()
        })
        .collect()
}

/// The fill colour of the first text element that reads exactly `text`.
fn text_fill(svg_path: &Path, text: &str) -> String {
    let svg = std::fs::read_to_string(svg_path).unwrap();
    let element = svg
        .split("<text")
        .skip(1)
        .find(|element| {
            element.split_once('>').is_some_and(|(_, rest)| rest.trim_start().starts_with(&format!("{text}\n")))
        })
        .unwrap_or_else(|| panic!("no text {text} in {}", svg_path.display()));
    let start = element.find("fill=\"").unwrap() + 6;
    element[start..start + 7].to_ascii_lowercase()
}

/// The colour assets/colours.json gives `name`.
fn table_colour(name: &str) -> String {
    let table: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/colours.json")).unwrap(),
    )
    .unwrap();
    table["named"][name].as_str().unwrap_or_else(|| panic!("{name} is not in the table")).to_owned()
}

/// Width and height of a PNG.
fn png_size(path: &Path) -> (u32, u32) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let reader = decoder.read_info().unwrap();
    (reader.info().width, reader.info().height)
}

#[test]
fn a_slide_is_1920_by_1080_and_none_of_its_text_is_under_20_px() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), "small.toml", SMALL, "slide", &["--set", "charts.size=slide"]);
    for stem in ["calls", "completion_ms", "timeline"] {
        let svg = std::fs::read_to_string(out.join(format!("{stem}.svg"))).unwrap();
        assert_eq!(
            (root_attribute(&svg, "width"), root_attribute(&svg, "height"), root_attribute(&svg, "viewBox")),
            ("1920".to_owned(), "1080".to_owned(), "0 0 960 540".to_owned()),
            "{stem}"
        );
        // Drawn twice the canvas: every font's size on screen is twice its size in the SVG.
        let smallest = font_sizes(&svg).into_iter().fold(f64::INFINITY, f64::min) * 1920.0 / 960.0;
        assert!(smallest >= 20.0, "{stem}: text of {smallest:.1} px");
        assert_eq!(png_size(&out.join(format!("{stem}.png"))), (1920, 1080), "{stem}");
    }
    // The screen size keeps its smaller text: the check above could fail.
    let out = run(dir.path(), "small.toml", SMALL, "screen", &[]);
    let svg = std::fs::read_to_string(out.join("calls.svg")).unwrap();
    assert!(font_sizes(&svg).into_iter().any(|size| size < 20.0));
    assert_eq!(
        root_attribute(&svg, "viewBox"),
        format!("0 0 {} {}", root_attribute(&svg, "width"), root_attribute(&svg, "height"))
    );
}

#[test]
fn a_title_heads_every_chart_and_the_made_one_leads_the_subtitle() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), "small.toml", SMALL, "out", &["--set", "charts.title=\"Jitter spreads the herd\""]);
    for stem in ["calls", "timeline"] {
        let texts = texts(&out.join(format!("{stem}.svg")));
        assert_eq!(texts[0], "Jitter spreads the herd", "{stem}: {texts:?}");
    }
    let calls = texts(&out.join("calls.svg"));
    assert!(has(&calls, "small: server WRITE calls (the study's measure of work), by clients · calls:"), "{calls:?}");
}

/// The numbers a chart's axes carry: those drawn before the first bar's label (`none`), as the values written
/// above the bars come after it.
fn numbers(texts: &[String]) -> Vec<f64> {
    texts.iter().take_while(|t| *t != "none").filter_map(|t| t.parse::<f64>().ok()).collect()
}

#[test]
fn a_log_y_axis_is_numbered_in_powers_of_ten() {
    let dir = tempfile::tempdir().unwrap();
    let power_of_ten = |x: f64| x > 0.0 && (x.log10() - x.log10().round()).abs() < 1e-9;
    // Nothing numeric is swept: the x axis has names, so every number is a y tick.
    let log = run(dir.path(), "burst.toml", BURST, "log", &["--set", "charts.y_scale=log"]);
    let calls = numbers(&texts(&log.join("calls.svg")));
    assert!(calls.len() >= 2 && calls.iter().all(|x| power_of_ten(*x)), "{calls:?}");
    let timeline = texts(&log.join("timeline.svg"));
    assert!(timeline.iter().any(|t| t == "100") && !timeline.iter().any(|t| t == "50"), "{timeline:?}");
    let linear = run(dir.path(), "burst.toml", BURST, "linear", &[]);
    let calls = numbers(&texts(&linear.join("calls.svg")));
    assert!(calls.iter().any(|x| *x > 0.0 && !power_of_ten(*x)), "a linear axis steps evenly: {calls:?}");
}

#[test]
fn a_linear_axis_names_a_series_twenty_times_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    // Without backoff the herd makes over 20 times the calls of full jitter.
    let text = BURST.replace("[\"none\", \"exponential\", \"full-jitter\"]", "[\"none\", \"full-jitter\"]");
    let out = run(dir.path(), "burst.toml", &text, "linear", &[]);
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let header: Vec<&str> = summary.lines().next().unwrap().split(',').collect();
    let calls = header.iter().position(|h| *h == "calls_mean").unwrap();
    let means: Vec<f64> = summary.lines().skip(1).map(|l| l.split(',').nth(calls).unwrap().parse().unwrap()).collect();
    assert!(means[0] >= 20.0 * means[1], "the premise: {means:?}");
    let chart = texts(&out.join("calls.svg"));
    assert!(has(&chart, "none peaks at") && has(&chart, "the rest, which look flat on this linear axis"), "{chart:?}");
    let out = run(dir.path(), "burst.toml", &text, "log", &["--set", "charts.y_scale=log"]);
    assert!(!has(&texts(&out.join("calls.svg")), "peaks at"), "a log axis hides nothing");
}

#[test]
fn a_strategy_has_one_colour_in_every_chart_whatever_else_the_chart_holds() {
    let dir = tempfile::tempdir().unwrap();
    let orange = table_colour("exponential");
    // exponential first of three (once blue), and second of three after none (once orange).
    let small = run(dir.path(), "small.toml", SMALL, "small", &[]);
    let burst = run(dir.path(), "burst.toml", BURST, "burst", &[]);
    for out in [&small, &burst] {
        assert_eq!(text_fill(&out.join("timeline.svg"), "exponential"), orange, "{}", out.display());
    }
    assert_eq!(text_fill(&burst.join("timeline.svg"), "none"), table_colour("none"));
    assert_eq!(text_fill(&small.join("timeline.svg"), "full-jitter"), table_colour("full-jitter"));
    // report.html marks each named value with its colour.
    let html = std::fs::read_to_string(burst.join("report.html")).unwrap();
    assert!(html.contains(&format!("<span class=\"swatch\" style=\"background: {orange}\"></span>exponential")));
}

#[test]
fn a_herd_leads_with_its_timeline_and_the_retry_synchrony_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), "burst.toml", BURST, "burst", &[]);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let charts: Vec<&str> =
        html.split("<figure id=\"chart-").skip(1).map(|figure| &figure[..figure.find('"').unwrap()]).collect();
    assert_eq!(charts[..4], ["timeline", "retry_peak_to_mean", "retry_dispersion", "calls"], "{charts:?}");
    let header = &html[html.find("<thead>").unwrap()..html.find("</thead>").unwrap()];
    let columns: Vec<&str> = header.split("\">").skip(1).map(|cell| &cell[..cell.find('<').unwrap()]).collect();
    assert_eq!(columns[..4], ["strategy", "retry_peak_to_mean", "retry_dispersion", "calls"], "{columns:?}");

    // An open stream is no herd: the model's metrics first, the timeline after them.
    let open = BURST.replace("kind = \"burst\"\nclients = 200", "kind = \"open\"\nrate = 100\nduration = \"2s\"");
    let out = run(dir.path(), "open.toml", &open, "open", &[]);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let charts: Vec<&str> =
        html.split("<figure id=\"chart-").skip(1).map(|figure| &figure[..figure.find('"').unwrap()]).collect();
    assert_eq!(charts[..4], ["calls", "latency_p99_ms", "success_rate", "timeline"], "{charts:?}");
}

#[test]
fn a_queue_timeline_shows_its_dead_letters_and_depth_unless_told_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), "queue.toml", QUEUE, "default", &[]);
    let timeline = texts(&out.join("timeline.svg"));
    assert!(has(&timeline, "queue: dead_lettered and queue_depth over time"), "{timeline:?}");
    for heading in ["dead_lettered per 1 s", "queue_depth"] {
        assert!(timeline.iter().any(|t| t == heading), "{heading}: {timeline:?}");
    }
    let out = run(dir.path(), "queue.toml", QUEUE, "one", &["--set", "charts.timeline_series=enqueued"]);
    let timeline = texts(&out.join("timeline.svg"));
    assert!(has(&timeline, "queue: messages enqueued per 1 s"), "{timeline:?}");
    assert!(!timeline.iter().any(|t| t == "queue_depth"), "{timeline:?}");
}

#[test]
fn a_long_timeline_draws_at_most_one_point_per_pixel_column() {
    let dir = tempfile::tempdir().unwrap();
    // 1 ms buckets over the seconds the exponential herd takes: thousands of buckets.
    let text = BURST
        .replace("timeline_bucket = \"10ms\"", "timeline_bucket = \"1ms\"")
        .replace("replicates = 3", "replicates = 1");
    let out = run(dir.path(), "burst.toml", &text, "fine", &["--set", "charts.timeline_until=6s"]);
    let buckets = std::fs::read_to_string(out.join("timeline.csv"))
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("exponential,"))
        .count();
    assert!(buckets > 3_000, "the premise: {buckets} buckets");
    let svg = std::fs::read_to_string(out.join("timeline.svg")).unwrap();
    let longest =
        svg.split("points=\"").skip(1).map(|p| p[..p.find('"').unwrap()].split_whitespace().count()).max().unwrap();
    assert!(longest <= 1_100, "a line of {longest} points on a chart 1100 pixels wide");
}

#[test]
fn bad_chart_options_are_refused_by_key_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "small.toml", SMALL);
    let out = dir.path().join("out");
    for (setting, expected) in [
        ("charts.y_scale=logarithmic", "\"linear\" or \"log\""),
        ("charts.size=4k", "\"slide\" (1920 × 1080)"),
        ("charts.title=\"  \"", "the charts' title as text"),
        ("charts.timeline_series=[]", "an empty list draws nothing"),
        ("charts.timeline_series=[\"calls\", \"calls\"]", "\"calls\" is listed twice"),
    ] {
        let assert = retrylab()
            .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--set", setting])
            .assert()
            .code(2);
        let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        let key = setting.split('=').next().unwrap();
        assert!(stderr.contains(key) && stderr.contains(expected), "{setting}: {stderr}");
        assert!(!stderr.contains("panicked") && !out.exists(), "{setting}: {stderr}");
    }
    let text = format!("{SMALL}\n[charts]\ny_scale = \"log2\"\n");
    let scenario = write_scenario(dir.path(), "file.toml", &text);
    let assert = retrylab().args(["validate", scenario.to_str().unwrap()]).assert().code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    let line = text.lines().position(|l| l.starts_with("y_scale")).unwrap() + 1;
    assert!(stderr.contains(&format!("file.toml:{line}:11")) && stderr.contains("charts.y_scale"), "{stderr}");
}
