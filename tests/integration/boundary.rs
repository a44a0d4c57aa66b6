//! `retrylab boundary --stuck Q` (issue 30, item 7): the probe table in the text and in the CSV, the verdicts
//! judged against Q, and every argument refused before the first probe runs.

use super::common::retrylab;

fn bronson() -> String {
    format!("{}/scenarios/bronson-2021.toml", env!("CARGO_MANIFEST_DIR"))
}

const BLIP: &str = "faults=\"60s..70s slowdown x10\"";

#[test]
fn the_csv_holds_every_probe_judged_against_the_stuck_fraction_asked_for() {
    let args = ["--over", "rate", "--between", "100", "200", "--set", BLIP, "--tolerance", "25", "--stuck", "0.3"];
    let assert = retrylab().arg("boundary").arg(bronson()).args(args).arg("--csv").assert().success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next(),
        Some(
            "key,boundary,low,high,runs,stuck_target,probe,value,probe_runs,stuck,stuck_fraction,stuck_lo95,\
             stuck_hi95,verdict"
        )
    );
    let rows: Vec<Vec<&str>> = lines.map(|line| line.split(',').collect()).collect();
    assert!(rows.len() >= 3, "both ends and at least one midpoint: {stdout}");
    let total: u32 = rows.iter().map(|row| row[8].parse::<u32>().unwrap()).sum();
    for (index, row) in rows.iter().enumerate() {
        assert_eq!((row[0], row[5], row[6]), ("rate", "0.3", index.to_string().as_str()), "{stdout}");
        assert_eq!(row[4].parse::<u32>().unwrap(), total, "runs is the search's total: {stdout}");
        let [runs, stuck] = [row[8], row[9]].map(|cell| cell.parse::<u32>().unwrap());
        let [fraction, lo, hi] = [row[10], row[11], row[12]].map(|cell| cell.parse::<f64>().unwrap());
        assert!((fraction - f64::from(stuck) / f64::from(runs)).abs() < 1e-12, "k of n: {stdout}");
        assert!(lo <= fraction && fraction <= hi, "{stdout}");
        let expected = if hi < 0.3 {
            "stable"
        } else if lo > 0.3 {
            "stuck"
        } else {
            "undecided"
        };
        assert_eq!(row[13], expected, "judged against 0.3, not 0.5: {stdout}");
    }
    assert_eq!((rows[0][7], rows[1][7]), ("100", "200"), "the ends first: {stdout}");
    let [boundary, low, high] = [rows[0][1], rows[0][2], rows[0][3]].map(|cell| cell.parse::<f64>().unwrap());
    assert!(low <= boundary && boundary <= high && high - low <= 25.0, "{stdout}");
}

#[test]
fn the_table_shows_stuck_runs_as_k_of_n() {
    let args = ["--over", "rate", "--between", "100", "200", "--set", BLIP, "--tolerance", "60"];
    let assert = retrylab().arg("boundary").arg(bronson()).args(args).assert().success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    assert!(stdout.lines().next().unwrap().contains("stuck fraction (Wilson 95%)"), "{stdout}");
    assert!(
        stdout.contains(" 0 of 10  0.00 [0.00, 0.28]") && stdout.contains("10 of 10  1.00 [0.72, 1.00]"),
        "{stdout}"
    );
    assert!(stdout.contains("where the stuck fraction crosses 0.5"), "the default Q: {stdout}");
}

#[test]
fn bad_arguments_are_refused_before_any_probe() {
    let cases: [(&[&str], &str); 6] = [
        (&["--between", "100", "200", "--tolerance", "0"], "--tolerance 0 must be greater than 0"),
        (&["--between", "100", "200", "--tolerance", "-5"], "--tolerance -5 must be greater than 0"),
        (&["--between", "100", "200", "--stuck", "1"], "--stuck 1 must lie strictly between 0 and 1"),
        (&["--between", "100", "200", "--stuck", "0"], "--stuck 0 must lie strictly between 0 and 1"),
        // The far end is out of the key's range: found before the near end is probed.
        (&["--between", "100", "2000000000"], "rate=2000000000: workload.rate: 2000000000 is out of range"),
        (&["--between", "200", "100"], "must run from a smaller to a larger value"),
    ];
    for (args, expected) in cases {
        let assert = retrylab()
            .arg("boundary")
            .arg(bronson())
            .args(["--over", "rate", "--set", BLIP])
            .args(args)
            .assert()
            .code(2);
        let output = assert.get_output();
        let stderr = String::from_utf8(output.stderr.clone()).unwrap();
        assert!(stderr.starts_with("Error: ") && stderr.contains(expected), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "nothing probed, nothing printed: {args:?}");
    }
}
