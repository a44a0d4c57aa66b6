//! report.html, written by the real binary: self-contained, holding the charts, the summary numbers and the
//! escaped scenario, and rendered by headless Chromium without errors into a page that is not blank.
//!
//! The rendering test needs `chromium` on the PATH. Without it the test prints a note and passes, unless
//! `RETRYLAB_REQUIRE_CHROMIUM=1` (set by `.ci/run`, which installs Chromium), when it fails.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{SMALL, listing, retrylab, write_scenario};
use assert_cmd::Command;

/// The small OCC sweep with HTML-special characters in its name, description and comments.
fn scenario_text() -> String {
    let text = SMALL.replace(
        "name = \"small\"",
        "# <script>alert(\"not code\")</script> & 'quotes' must stay text\n\
         name = \"small <b>&</b> \\\"odd\\\" 'name'\"\n\
         description = \"Tom & Jerry's <i>backoff</i> race\"",
    );
    assert_ne!(text, SMALL, "the scenario template changed");
    text
}

/// Runs the scenario into `dir/out` and returns the folder.
fn run(dir: &Path) -> PathBuf {
    let scenario = write_scenario(dir, "small.toml", &scenario_text());
    let out = dir.join("out");
    retrylab().args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"]).assert().success();
    out
}

/// The reference escaping, written independently of the report code.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// The text of each `<td>` in each row of the table body.
fn table_rows(html: &str) -> Vec<Vec<String>> {
    let body = &html[html.find("<tbody>").unwrap()..html.find("</tbody>").unwrap()];
    body.split("<tr>")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| cell[cell.find('>').unwrap() + 1..cell.find("</td>").unwrap()].to_owned())
                .collect()
        })
        .collect()
}

/// Whether `shown` (a table cell, "mean" or "mean ± ci") is `value` rounded to the cell's decimals.
fn rounds_to(shown: &str, value: f64) -> bool {
    let decimals = shown.split_once('.').map_or(0, |(_, fraction)| fraction.len()) as i32;
    let shown: f64 = shown.parse().unwrap_or_else(|_| panic!("not a number: {shown}"));
    (shown - value).abs() <= 0.5 * 10f64.powi(-decimals) + 1e-9 * value.abs()
}

#[test]
fn report_is_self_contained_and_holds_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path());
    assert!(listing(&out).contains(&"report.html".to_owned()), "{:?}", listing(&out));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..80]);
    assert!(html.trim_end().ends_with("</html>"));

    // Every chart inline, exactly as its .svg file.
    let svgs: Vec<String> = listing(&out).into_iter().filter(|name| name.ends_with(".svg")).collect();
    assert_eq!(
        svgs,
        ["calls.svg", "completion_ms.svg", "retry_dispersion.svg", "retry_peak_to_mean.svg", "timeline.svg"]
    );
    for name in &svgs {
        let svg = std::fs::read_to_string(out.join(name)).unwrap();
        assert!(html.contains(svg.trim_end()), "{name} is not inline");
    }
    assert_eq!(html.matches("<svg").count(), svgs.len());

    // Title, description and scenario text, escaped; nothing of them raw.
    let text = scenario_text();
    assert!(html.contains("<h1>small &lt;b&gt;&amp;&lt;/b&gt; &quot;odd&quot; &#39;name&#39;</h1>"));
    assert!(html.contains("Tom &amp; Jerry&#39;s &lt;i&gt;backoff&lt;/i&gt; race"));
    assert!(html.contains(&format!("<pre>{}</pre>", escaped(&text))));
    for raw in ["<script", "<b>&</b>", "<i>backoff"] {
        assert!(!html.contains(raw), "unescaped {raw}");
    }

    // Nothing loaded from anywhere: no resources, only links within the page.
    for banned in ["<link", "<img", "<iframe", "<object", "<embed", "src=", "@import", "url("] {
        assert!(!html.contains(banned), "report.html has {banned}");
    }
    for href in html.split("href=").skip(1) {
        assert!(href.starts_with("\"#"), "a link leaves the page: href={}", &href[..href.len().min(60)]);
    }

    // The summary table: one row per point, swept values first, then every metric's mean ± ci95 as summary.csv
    // has it, rounded, in the order of the table's header.
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut lines = summary.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let csv_rows: Vec<Vec<&str>> = lines.map(|line| line.split(',').collect()).collect();
    let rows = table_rows(&html);
    assert_eq!(rows.len(), csv_rows.len());
    let table_head = &html[html.find("<thead>").unwrap()..html.find("</thead>").unwrap()];
    let columns: Vec<&str> = table_head.split("\">").skip(1).map(|cell| &cell[..cell.find('<').unwrap()]).collect();
    let metrics: Vec<&str> = columns[2..].to_vec();
    let mut in_csv: Vec<&str> = header.iter().filter_map(|column| column.strip_suffix("_mean")).collect();
    in_csv.sort_unstable();
    let mut in_table = metrics.clone();
    in_table.sort_unstable();
    assert_eq!(in_table, in_csv, "every metric of summary.csv, once");
    assert!(metrics.contains(&"calls") && metrics.contains(&"completion_ms"), "{header:?}");
    for (row, csv_row) in rows.iter().zip(&csv_rows) {
        assert_eq!(row.len(), 2 + metrics.len(), "{row:?}");
        // A named value follows its colour swatch, an empty span.
        let swept: Vec<&str> = row[..2].iter().map(|cell| cell.rsplit("</span>").next().unwrap()).collect();
        assert_eq!(swept, csv_row[..2], "swept values lead");
        assert!(row[1].starts_with("<span class=\"swatch\" style=\"background: #"), "{}", row[1]);
        for (metric, cell) in metrics.iter().zip(&row[2..]) {
            let column = |suffix: &str| {
                let index = header.iter().position(|c| *c == format!("{metric}_{suffix}")).unwrap();
                csv_row[index].parse::<f64>().unwrap()
            };
            let (mean, ci95) = cell.split_once(" ± ").unwrap_or_else(|| panic!("{metric}: {cell} has no interval"));
            assert!(rounds_to(mean, column("mean")), "{metric}: {cell} against mean {}", column("mean"));
            assert!(rounds_to(ci95, column("ci95")), "{metric}: {cell} against ci95 {}", column("ci95"));
        }
    }

    // The manifest's facts.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    for (key, value) in [
        ("master seed", manifest["master_seed"].to_string()),
        ("replicates", manifest["replicates"].to_string()),
        ("points", manifest["points"].to_string()),
        ("events", manifest["events"].to_string()),
        ("retrylab version", manifest["retrylab_version"].as_str().unwrap().to_owned()),
    ] {
        assert!(html.contains(&format!("<tr><th>{key}</th><td>{value}</td></tr>")), "manifest row {key} = {value}");
    }
}

/// The Chromium binary on the PATH, if any.
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|name| {
        std::process::Command::new(name)
            .arg("--version")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    })
}

/// Headless Chromium with a throwaway profile in `profile`, logging to stderr.
fn headless(binary: &str, profile: &Path) -> Command {
    let mut command = Command::new(binary);
    command
        .args(["--headless", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage", "--hide-scrollbars"])
        .args(["--no-first-run", "--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .timeout(Duration::from_secs(120));
    command
}

/// Chromium's log lines that mean the page did not load cleanly: console messages (the page has no scripts, so
/// any is an error) and failed loads.
fn page_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|line| line.contains(":CONSOLE") || line.contains("Failed to load") || line.contains("net::ERR_"))
        .collect()
}

#[test]
fn report_renders_in_headless_chromium() {
    let Some(binary) = chromium() else {
        if std::env::var("RETRYLAB_REQUIRE_CHROMIUM").is_ok_and(|value| value == "1") {
            panic!("RETRYLAB_REQUIRE_CHROMIUM=1 but chromium is not on the PATH (.ci/run installs it)");
        }
        println!("skipped: chromium not installed (.ci/run installs it)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path());
    let url = format!("file://{}", out.join("report.html").canonicalize().unwrap().display());
    let (width, height) = (1200, 3000);

    let screenshot = dir.path().join("report.png");
    let rendered = headless(binary, &dir.path().join("profile-screenshot"))
        .arg(format!("--screenshot={}", screenshot.display()))
        .arg(format!("--window-size={width},{height}"))
        .arg(&url)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&rendered.stderr);
    assert!(rendered.status.success(), "chromium failed ({}):\n{stderr}", rendered.status);
    assert_eq!(page_errors(&stderr), Vec::<&str>::new(), "the page logged errors");

    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&screenshot).unwrap()));
    let mut reader = decoder.read_info().expect("a valid PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a PNG small enough to decode")];
    let frame = reader.next_frame(&mut pixels).expect("a decodable PNG");
    assert_eq!((frame.width, frame.height), (width, height));
    let channels = frame.color_type.samples();
    assert!(channels >= 3 && frame.bit_depth == png::BitDepth::Eight, "{:?} {:?}", frame.color_type, frame.bit_depth);
    let rgb: Vec<[u8; 3]> = pixels[..frame.buffer_size()].chunks(channels).map(|p| [p[0], p[1], p[2]]).collect();
    let not_white = rgb.iter().filter(|p| **p != [255, 255, 255]).count();
    let share = not_white as f64 / rgb.len() as f64;
    assert!((0.01..0.9).contains(&share), "{:.1}% of the page is not white", share * 100.0);
    let mut distinct = rgb.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert!(distinct.len() > 50, "only {} colours: the charts did not render", distinct.len());
    // exponential's colour in every chart (assets/colours.json: Tableau orange, 255 127 14) is on screen.
    let near = |p: &[u8; 3], q: [u8; 3]| p.iter().zip(q).all(|(a, b)| a.abs_diff(b) <= 8);
    assert!(rgb.iter().any(|p| near(p, [255, 127, 14])), "no chart line colour in the screenshot");

    // After load, the DOM holds the inline charts as SVG elements and the escaped title as text.
    let dumped = headless(binary, &dir.path().join("profile-dom")).arg("--dump-dom").arg(&url).output().unwrap();
    let stderr = String::from_utf8_lossy(&dumped.stderr);
    assert!(dumped.status.success(), "chromium --dump-dom failed ({}):\n{stderr}", dumped.status);
    assert_eq!(page_errors(&stderr), Vec::<&str>::new(), "the page logged errors");
    let dom = String::from_utf8_lossy(&dumped.stdout);
    assert_eq!(dom.matches("<svg ").count(), 5, "inline charts in the DOM");
    assert!(dom.contains("<h1>small &lt;b&gt;&amp;&lt;/b&gt; \"odd\" 'name'</h1>"), "title in the DOM");
}
