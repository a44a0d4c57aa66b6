//! Writing a results folder: CSV tables, manifest and charts, each file written atomically.

mod aggregate;
pub mod atomic;
mod charts;
mod grouped_bars;
mod heatmap;
mod manifest;
mod tables;
pub mod trace;

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

/// Writes summary.csv, runs.csv, timeline.csv, manifest.json and the charts into `out` (which must exist).
/// Returns the files written.
pub fn write_results(
    scenario: &Scenario,
    points: &[PlannedPoint],
    runs: &[Run],
    aggregate: &Aggregate,
    info: &RunInfo,
    out: &Path,
) -> Result<Vec<PathBuf>, Error> {
    let mut written = Vec::new();
    let mut put = |name: &str, bytes: Vec<u8>| -> Result<(), Error> {
        let path = out.join(name);
        atomic::write_atomic(&path, &bytes)?;
        written.push(path);
        Ok(())
    };
    put("summary.csv", tables::summary_csv(scenario, points, aggregate))?;
    put("runs.csv", tables::runs_csv(scenario, points, runs))?;
    put("timeline.csv", tables::timeline_csv(scenario, points, aggregate))?;
    let manifest = Manifest::new(scenario, points, info.threads, aggregate, info.elapsed_s);
    put("manifest.json", manifest.to_json())?;
    written.extend(charts::draw_all(scenario, points, aggregate, out)?);
    Ok(written)
}
