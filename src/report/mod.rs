//! Writing a results folder: CSV tables, manifest, charts and the HTML report, each file written atomically.

mod aggregate;
pub(crate) mod atomic;
mod charts;
pub(crate) mod compare;
mod grouped_bars;
mod heatmap;
mod html;
mod html_settings;
mod manifest;
pub(crate) mod otlp;
mod paired;
mod rasterise;
pub(crate) mod read;
pub(crate) mod staging;
mod tables;
pub mod terminal;
pub(crate) mod trace;
mod warnings;

use std::path::{Path, PathBuf};

pub use aggregate::{Aggregate, aggregate, aggregate_swept};
pub(crate) use grouped_bars::draw_candidates;
pub use manifest::{EmulationInfo, Manifest, RESULTS_FORMAT, sha256_hex};
pub(crate) use paired::paired_table;
pub use tables::format_number;
pub(crate) use tables::{finish as csv_finish, writer as csv_writer};
pub use warnings::backlog_warnings;

use crate::Error;
use crate::scenario::{PlannedPoint, Scenario};
use crate::sweep::Run;

/// How the run went, for the manifest.
pub struct RunInfo {
    pub threads: usize,
    pub elapsed_s: f64,
    /// The `--set KEY=VALUE` overrides applied to the scenario file.
    pub overrides: Vec<String>,
    /// For results merged from shards (`retrylab merge`): how many. `threads` is then the most any shard used and
    /// `elapsed_s` their sum.
    pub shards: Option<u32>,
    /// For results measured on real sockets (`retrylab emulate`): how, and the emulation's own overhead.
    pub emulation: Option<EmulationInfo>,
}

/// Writes summary.csv, runs.csv, timeline.csv, latency.csv (models that measure latency), paired.csv (sweeps with a
/// policy axis), manifest.json, the charts and, last, report.html (which embeds the charts) into `out` (which must
/// exist). Returns the files written. The charts are drawn from the tables as written (numbers rounded as in the
/// CSV), so `retrylab plot` redraws them byte for byte.
///
/// The files are written into a staging folder and moved into `out` together at the end (see [`staging`]): should
/// a write fail or a signal come first, `out` is left as it was.
pub fn write_results(
    scenario: &Scenario,
    points: &[PlannedPoint],
    runs: &[Run],
    aggregate: &Aggregate,
    info: &RunInfo,
    out: &Path,
) -> Result<Vec<PathBuf>, Error> {
    let staging = staging::Staging::create(out)?;
    let written = write_files(scenario, points, runs, aggregate, info, staging.dir())
        // An emulation against a live service keeps what it measured when stopped; a sweep keeps nothing half-done.
        .and_then(|written| match &info.emulation {
            Some(emulation) if emulation.keeps_on_signal => Ok(written),
            _ => crate::interrupt::check().map(|()| written),
        })
        .map_err(|error| staging.in_place(error))?;
    // A folder run again must not keep a table this run does not write (`plot` would draw it).
    staging.commit(&written, &["paired.csv", read::OUTCOME_TIMELINE])
}

/// The CSV tables of a study as [`write_results`] writes them: the browser lab serves these same bytes.
pub(crate) struct CsvTables {
    pub(crate) summary: Vec<u8>,
    pub(crate) timeline: Vec<u8>,
    pub(crate) latency: Option<Vec<u8>>,
    pub(crate) paired: Option<Vec<u8>>,
}

/// summary.csv, timeline.csv, latency.csv (models that measure latency) and paired.csv (sweeps with a policy axis).
pub(crate) fn csv_tables(
    scenario: &Scenario,
    points: &[PlannedPoint],
    runs: &[Run],
    aggregate: &Aggregate,
) -> CsvTables {
    CsvTables {
        summary: tables::summary_csv(scenario, points, aggregate),
        timeline: tables::timeline_csv(scenario, points, aggregate),
        latency: tables::latency_csv(scenario, points, aggregate),
        paired: paired::paired_csv(scenario, points, runs, aggregate),
    }
}

/// [`write_results`]' files, written into `out`.
fn write_files(
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
    let CsvTables { summary, timeline, latency, paired } = csv_tables(scenario, points, runs, aggregate);
    let outcome_timeline = tables::outcome_timeline_csv(scenario, points, aggregate);
    let manifest = Manifest::new(scenario, points, info, aggregate);
    let parse = |name: &str, bytes: &[u8]| read::Table::parse(&out.join(name), bytes);
    let optional = |name: &str, bytes: &Option<Vec<u8>>| bytes.as_ref().map(|bytes| parse(name, bytes)).transpose();
    let (latency_table, outcome_table) =
        (optional("latency.csv", &latency)?, optional(read::OUTCOME_TIMELINE, &outcome_timeline)?);
    let tables = read::Tables {
        summary: &parse("summary.csv", &summary)?,
        timeline: &parse("timeline.csv", &timeline)?,
        latency: latency_table.as_ref(),
        outcome_timeline: outcome_table.as_ref(),
    };
    let drawn = read::tables_aggregate(scenario.model, scenario.sweep.len(), &tables, &manifest.shaded_ms)?;
    put(&mut written, "summary.csv", summary)?;
    put(&mut written, "runs.csv", tables::runs_csv(scenario, points, runs, &tables::filled_metrics(aggregate)))?;
    put(&mut written, "timeline.csv", timeline)?;
    if let Some(latency) = latency {
        put(&mut written, "latency.csv", latency)?;
    }
    if let Some(paired) = paired {
        put(&mut written, "paired.csv", paired)?;
    }
    if let Some(outcome_timeline) = outcome_timeline {
        put(&mut written, read::OUTCOME_TIMELINE, outcome_timeline)?;
    }
    put(&mut written, "manifest.json", manifest.to_json())?;
    let charts = charts::draw_all(scenario, points, &drawn, out)?;
    written.extend(charts.iter().cloned());
    let report = html::report(scenario, points, aggregate, &manifest, &charts, &out.join("report.html"))?;
    put(&mut written, "report.html", report)?;
    Ok(written)
}

/// Redraws the charts of a results folder from its tables, manifest and scenario (`retrylab plot`), writing the
/// same files `run` wrote. Returns the files written.
pub fn redraw_charts(folder: &read::ResultsFolder) -> Result<Vec<PathBuf>, Error> {
    let (scenario, points) = folder.scenario()?;
    let aggregate = folder.aggregate()?;
    charts::draw_all(&scenario, &points, &aggregate, &folder.dir)
}
