//! Writing a results folder: CSV tables, manifest, charts and the HTML report, each file written atomically.

mod aggregate;
pub mod atomic;
mod charts;
mod grouped_bars;
mod heatmap;
mod html;
mod manifest;
mod tables;

use std::path::{Path, PathBuf};

pub use aggregate::{Aggregate, aggregate};
pub use manifest::{Manifest, sha256_hex};
pub use tables::format_number;

use crate::Error;
use crate::scenario::{PlannedPoint, Scenario};
use crate::sweep::Run;

/// How the run went, for the manifest.
pub struct RunInfo {
    pub threads: usize,
    pub elapsed_s: f64,
}

/// Writes summary.csv, runs.csv, timeline.csv, manifest.json, the charts and, last, report.html (which embeds
/// the charts) into `out` (which must exist). Returns the files written.
pub fn write_results(
    scenario: &Scenario,
    points: &[PlannedPoint],
    runs: &[Run],
    aggregate: &Aggregate,
    info: &RunInfo,
    out: &Path,
) -> Result<Vec<PathBuf>, Error> {
    let mut written = Vec::new();
    let put = |written: &mut Vec<PathBuf>, name: &str, bytes: Vec<u8>| -> Result<(), Error> {
        let path = out.join(name);
        atomic::write_atomic(&path, &bytes)?;
        written.push(path);
        Ok(())
    };
    put(&mut written, "summary.csv", tables::summary_csv(scenario, points, aggregate))?;
    put(&mut written, "runs.csv", tables::runs_csv(scenario, points, runs))?;
    put(&mut written, "timeline.csv", tables::timeline_csv(scenario, points, aggregate))?;
    let manifest = Manifest::new(scenario, points, info.threads, aggregate, info.elapsed_s);
    put(&mut written, "manifest.json", manifest.to_json())?;
    let charts = charts::draw_all(scenario, points, aggregate, out)?;
    written.extend(charts.iter().cloned());
    let report = html::report(scenario, points, aggregate, &manifest, &charts, &out.join("report.html"))?;
    put(&mut written, "report.html", report)?;
    Ok(written)
}
