//! Reading a results folder back: the manifest (checked to be a retrylab manifest in a results format this build
//! reads), summary.csv, timeline.csv and latency.csv. `show`, `plot` and `compare` start here, and `run` draws
//! its charts from the tables read back from the bytes it writes, so `plot` redraws them identically.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::aggregate::{Aggregate, OutcomeGroup};
use super::manifest::{RESULTS_FORMAT, sha256_hex};
use crate::Error;
use crate::model::ModelKind;
use crate::scenario::{PlannedPoint, Scenario, plan};
use crate::stats::Estimate;

/// The files every results folder has.
pub(crate) const REQUIRED_FILES: [&str; 3] = ["manifest.json", "summary.csv", "timeline.csv"];

/// The parts of manifest.json the readers use.
#[derive(Debug, Deserialize)]
pub struct ManifestRecord {
    pub retrylab_version: String,
    /// Absent in folders written before the field existed: format 1.
    #[serde(default = "first_format")]
    pub results_format: u32,
    pub scenario: ScenarioRecord,
    pub model: String,
    pub master_seed: u64,
    pub replicates: u32,
    pub points: usize,
    #[serde(default)]
    pub point_ids: Vec<String>,
    pub swept: Vec<String>,
    pub timeline_bucket: String,
    #[serde(default)]
    pub command_line: Vec<String>,
    #[serde(default)]
    pub shaded_ms: Vec<Vec<(f64, f64)>>,
    /// Per point, the client policy it ran (absent before the field existed, and for models without one).
    #[serde(default)]
    pub policies: Vec<String>,
    /// Per point, the model's verdict-deciding settings, defaults resolved (absent before the field existed).
    #[serde(default)]
    pub settings: Vec<String>,
    /// What the results say about themselves: a backlog still growing when new work stopped.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// "emulated" for results measured on real sockets (`retrylab emulate`); absent for simulated ones.
    #[serde(default)]
    pub mode: Option<String>,
    /// The emulation's time scale, for results measured on real sockets.
    #[serde(default)]
    pub emulation: Option<EmulationRecord>,
}

/// What `show` reads of an emulation's record: its server, time scale and timer lag.
#[derive(Debug, Clone, Deserialize)]
pub struct EmulationRecord {
    pub server: String,
    pub time_scale: f64,
    pub timer_lag_p99_ms: f64,
}

fn first_format() -> u32 {
    1
}

/// The manifest's `scenario` object.
#[derive(Debug, Deserialize)]
pub struct ScenarioRecord {
    pub name: String,
    pub path: String,
    pub sha256: String,
    /// Format 2 on; format 1 folders keep them only in `command_line`.
    pub overrides: Option<Vec<String>>,
    /// Format 2 on.
    pub text: Option<String>,
}

/// A CSV file read into text cells.
#[derive(Debug, Clone)]
pub struct Table {
    pub path: PathBuf,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Parses CSV `bytes` that came from `path` (used in messages).
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Table, Error> {
        let bad = |message: String| Error::Results { path: path.to_owned(), message };
        let mut reader = csv::ReaderBuilder::new().from_reader(bytes);
        let header = reader.headers().map_err(|e| bad(format!("not a CSV file: {e}")))?;
        let header: Vec<String> = header.iter().map(str::to_owned).collect();
        let mut rows = Vec::new();
        for record in reader.records() {
            let record = record.map_err(|e| bad(format!("not a CSV file: {e}")))?;
            rows.push(record.iter().map(str::to_owned).collect());
        }
        Ok(Table { path: path.to_owned(), header, rows })
    }

    fn read(path: &Path) -> Result<Table, Error> {
        let bytes = std::fs::read(path).map_err(|e| Error::Results {
            path: path.to_owned(),
            message: format!("cannot read it ({e}); a results folder holds {}", REQUIRED_FILES.join(", ")),
        })?;
        Table::parse(path, &bytes)
    }

    /// The index of column `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|column| column == name)
    }

    /// The index of column `name`, or an error naming the columns there are.
    pub fn require(&self, name: &str) -> Result<usize, Error> {
        self.column(name).ok_or_else(|| Error::Results {
            path: self.path.clone(),
            message: format!("no column `{name}`; it has {}", self.header.join(", ")),
        })
    }

    /// The number in `row`'s cell `column`: an empty cell is NaN (how the writers store an undefined value).
    pub fn number(&self, row: usize, column: usize) -> Result<f64, Error> {
        let cell = self.rows[row].get(column).map_or("", String::as_str);
        if cell.is_empty() {
            return Ok(f64::NAN);
        }
        cell.parse().map_err(|_| Error::Results {
            path: self.path.clone(),
            message: format!("row {}: `{cell}` in column `{}` is not a number", row + 2, self.header[column]),
        })
    }

    /// The first `n` cells of `row` joined: a point's key when `n` is the number of swept parameters.
    fn key(&self, row: usize, n: usize) -> String {
        self.rows[row].iter().take(n).cloned().collect::<Vec<_>>().join("\u{1f}")
    }

    /// Checks that the table starts with the swept parameters' columns, in order.
    fn check_swept(&self, swept: &[String]) -> Result<(), Error> {
        if self.header.len() >= swept.len() && self.header[..swept.len()] == *swept {
            return Ok(());
        }
        Err(Error::Results {
            path: self.path.clone(),
            message: format!(
                "its columns ({}) do not start with the swept parameters the manifest names ({})",
                self.header.join(", "),
                swept.join(", ")
            ),
        })
    }
}

/// A results folder, read and checked.
#[derive(Debug)]
pub struct ResultsFolder {
    pub dir: PathBuf,
    pub manifest: ManifestRecord,
    pub model: ModelKind,
    pub summary: Table,
    pub timeline: Table,
    /// latency.csv, for models that measure latency (format 2 on).
    pub latency: Option<Table>,
    /// timeline_by_outcome.csv, where some point's replicates disagree on an outcome.
    pub outcome_timeline: Option<Table>,
}

impl ResultsFolder {
    /// Reads `dir`, checking that it is a retrylab results folder this build can read.
    pub fn open(dir: &Path) -> Result<ResultsFolder, Error> {
        let bad = |path: &Path, message: String| Error::Results { path: path.to_owned(), message };
        let expected = format!(
            "a results folder, as `retrylab run` writes it, holds {} and the charts",
            REQUIRED_FILES.join(", ")
        );
        if !dir.is_dir() {
            return Err(bad(dir, format!("not a folder; {expected}")));
        }
        let manifest_path = dir.join("manifest.json");
        if !manifest_path.is_file() {
            return Err(bad(dir, format!("not a retrylab results folder: it has no manifest.json; {expected}")));
        }
        let text = std::fs::read(&manifest_path).map_err(|e| bad(&manifest_path, format!("cannot read it: {e}")))?;
        let json: serde_json::Value = serde_json::from_slice(&text)
            .map_err(|e| bad(&manifest_path, format!("not valid JSON ({e}); {expected}")))?;
        let Some(version) = json.get("retrylab_version").and_then(serde_json::Value::as_str).map(str::to_owned) else {
            return Err(bad(&manifest_path, "not a retrylab manifest: it has no `retrylab_version`".into()));
        };
        let format = json.get("results_format").map_or(Some(1), serde_json::Value::as_u64);
        if format.is_none_or(|format| format == 0 || format > u64::from(RESULTS_FORMAT)) {
            let shown = json.get("results_format").map_or_else(String::new, ToString::to_string);
            return Err(bad(
                &manifest_path,
                format!(
                    "written by retrylab {version} in results format {shown}, which this retrylab {} cannot read \
                     (it reads results formats 1 to {RESULTS_FORMAT}); rerun the scenario with this build, or \
                     use retrylab {version} or newer",
                    env!("CARGO_PKG_VERSION")
                ),
            ));
        }
        let manifest: ManifestRecord = serde_json::from_value(json).map_err(|e| {
            bad(&manifest_path, format!("written by retrylab {version}, but not as this build expects it: {e}"))
        })?;
        let model = ModelKind::from_name(&manifest.model).ok_or_else(|| {
            bad(
                &manifest_path,
                format!(
                    "unknown model \"{}\" (written by retrylab {version}); this build knows {}",
                    manifest.model,
                    ModelKind::NAMES.join(", ")
                ),
            )
        })?;
        for name in REQUIRED_FILES {
            if !dir.join(name).is_file() {
                return Err(bad(dir, format!("{name} is missing; {expected}")));
            }
        }
        let summary = Table::read(&dir.join("summary.csv"))?;
        let timeline = Table::read(&dir.join("timeline.csv"))?;
        let optional = |name: &str| {
            let path = dir.join(name);
            if path.is_file() { Table::read(&path).map(Some) } else { Ok(None) }
        };
        let latency = optional("latency.csv")?;
        let outcome_timeline = optional(OUTCOME_TIMELINE)?;
        summary.check_swept(&manifest.swept)?;
        timeline.check_swept(&manifest.swept)?;
        for table in latency.iter().chain(&outcome_timeline) {
            table.check_swept(&manifest.swept)?;
        }
        if summary.rows.len() != manifest.points {
            return Err(bad(
                &summary.path,
                format!("{} rows, but the manifest counts {} points", summary.rows.len(), manifest.points),
            ));
        }
        Ok(ResultsFolder { dir: dir.to_owned(), manifest, model, summary, timeline, latency, outcome_timeline })
    }

    /// The timeline series, in the order of timeline.csv's columns.
    pub fn timeline_series(&self) -> &[String] {
        let start = self.manifest.swept.len() + 1;
        self.timeline.header.get(start..).unwrap_or_default()
    }

    /// The scenario that produced the folder, with its overrides, seed and replicates, and its sweep points:
    /// from the text stored in the manifest (format 2), else from the scenario file if it is unchanged (its
    /// sha256 matches the manifest's).
    pub fn scenario(&self) -> Result<(Scenario, Vec<PlannedPoint>), Error> {
        let record = &self.manifest.scenario;
        let manifest_path = self.dir.join("manifest.json");
        let bad = |message: String| Error::Results { path: manifest_path.clone(), message };
        let path = PathBuf::from(&record.path);
        let text = match &record.text {
            Some(text) => text.clone(),
            None => self.scenario_file_text(&path)?,
        };
        let overrides = record.overrides.clone().unwrap_or_else(|| overrides_in(&self.manifest.command_line));
        let mut scenario = Scenario::with_overrides(&path, text, &overrides)?;
        scenario.seed = self.manifest.master_seed;
        scenario.replicates = self.manifest.replicates;
        let points = plan(&scenario)?;
        let ids: Vec<String> = points.iter().map(PlannedPoint::id).collect();
        if !self.manifest.point_ids.is_empty() && ids != self.manifest.point_ids {
            return Err(bad(format!(
                "the scenario {} (with overrides [{}]) no longer gives the sweep points these results were run with",
                record.path,
                overrides.join(", ")
            )));
        }
        Ok((scenario, points))
    }

    /// The text of a format 1 folder's scenario file, looked for where the manifest says (relative to the current
    /// folder, then to the folder two levels above the results, where `results/<name>/` puts it), and only if its
    /// sha256 is the manifest's.
    fn scenario_file_text(&self, path: &Path) -> Result<String, Error> {
        let record = &self.manifest.scenario;
        let mut candidates = vec![path.to_owned()];
        if path.is_relative()
            && let Some(root) = self.dir.parent().and_then(Path::parent)
        {
            candidates.push(root.join(path));
        }
        let found = candidates.iter().find_map(|candidate| std::fs::read_to_string(candidate).ok());
        let message = match found {
            Some(text) if sha256_hex(text.as_bytes()) == record.sha256 => return Ok(text),
            Some(_) => format!("has changed since these results were written (sha256 {})", record.sha256),
            None => "cannot be found".to_owned(),
        };
        Err(Error::Results {
            path: self.dir.join("manifest.json"),
            message: format!(
                "these results (format 1, written by retrylab {}) do not store their scenario's text, and the \
                 scenario file {} {message}; rerun the scenario with this build to make a folder `plot` can redraw",
                self.manifest.retrylab_version, record.path
            ),
        })
    }

    /// The results as charts draw them: estimates from summary.csv, timelines from timeline.csv, latency from
    /// latency.csv, shaded spans from the manifest.
    pub fn aggregate(&self) -> Result<Aggregate, Error> {
        let shaded = &self.manifest.shaded_ms;
        let swept = self.manifest.swept.len();
        let tables = Tables {
            summary: &self.summary,
            timeline: &self.timeline,
            latency: self.latency.as_ref(),
            outcome_timeline: self.outcome_timeline.as_ref(),
        };
        tables_aggregate(self.model, swept, &tables, shaded)
    }
}

/// The `--set` values of a command line (`--set X` or `--set=X`).
fn overrides_in(command_line: &[String]) -> Vec<String> {
    let mut overrides = Vec::new();
    let mut arguments = command_line.iter();
    while let Some(argument) = arguments.next() {
        if argument == "--set" {
            overrides.extend(arguments.next().cloned());
        } else if let Some(value) = argument.strip_prefix("--set=") {
            overrides.push(value.to_owned());
        }
    }
    overrides
}

/// The file of the timelines split by outcome.
pub(crate) const OUTCOME_TIMELINE: &str = "timeline_by_outcome.csv";

/// The tables a results folder's charts are drawn from.
pub(crate) struct Tables<'a> {
    pub(crate) summary: &'a Table,
    pub(crate) timeline: &'a Table,
    pub(crate) latency: Option<&'a Table>,
    pub(crate) outcome_timeline: Option<&'a Table>,
}

/// A metric's columns in summary.csv: mean, sd and ci95, and the interval's ends where the folder has them.
type MetricColumns = ([usize; 3], Option<[usize; 2]>);

/// Builds the per-point results charts draw from the tables of a results folder, whose first `swept` columns
/// are the swept parameters. Points are in summary.csv's row order.
pub(crate) fn tables_aggregate(
    model: ModelKind,
    swept: usize,
    tables: &Tables<'_>,
    shaded_ms: &[Vec<(f64, f64)>],
) -> Result<Aggregate, Error> {
    let Tables { summary, timeline, latency, outcome_timeline } = *tables;
    let point_count = summary.rows.len();
    let index: HashMap<String, usize> = (0..point_count).map(|row| (summary.key(row, swept), row)).collect();
    let point_of = |table: &Table, row: usize| {
        index.get(&table.key(row, swept)).copied().ok_or_else(|| Error::Results {
            path: table.path.clone(),
            message: format!("row {} has swept values that summary.csv does not list", row + 2),
        })
    };

    // A metric's columns under its name or its former one; a metric no run could fill has none (all NaN). Folders
    // written before the interval's ends were kept have no `_lo95`/`_hi95`: their interval is mean ± ci95.
    let columns: Vec<Option<MetricColumns>> = model
        .metrics()
        .iter()
        .map(|metric| {
            let column = |name: &str, suffix: &str| summary.column(&format!("{name}_{suffix}"));
            let found = |name: &str| {
                let ends = column(name, "lo95").zip(column(name, "hi95")).map(|(lo, hi)| [lo, hi]);
                Some(([column(name, "mean")?, column(name, "sd")?, column(name, "ci95")?], ends))
            };
            found(metric.name).or_else(|| metric.formerly.and_then(found))
        })
        .collect();
    let mut estimates = Vec::with_capacity(point_count);
    for row in 0..point_count {
        let point = columns
            .iter()
            .map(|columns| {
                let Some(([mean, sd, ci95], ends)) = columns else { return Ok(Estimate::UNDEFINED) };
                let number = |column: usize| summary.number(row, column);
                let symmetric = Estimate::symmetric(number(*mean)?, number(*sd)?, number(*ci95)?);
                Ok(match ends {
                    Some([lo, hi]) => Estimate { lo95: number(*lo)?, hi95: number(*hi)?, ..symmetric },
                    None => symmetric,
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        estimates.push(point);
    }

    let series: Vec<usize> =
        model.timeline_series().iter().map(|name| timeline.require(name)).collect::<Result<_, _>>()?;
    let mut timelines = vec![Vec::new(); point_count];
    for row in 0..timeline.rows.len() {
        let point = point_of(timeline, row)?;
        for &column in &series {
            timelines[point].push(timeline.number(row, column)?);
        }
    }

    let mut cdfs: Vec<Option<Vec<(f64, f64)>>> = vec![None; point_count];
    if let Some(table) = latency {
        let (ms, fraction) = (table.require("latency_ms")?, table.require("fraction")?);
        cdfs.iter_mut().for_each(|cdf| *cdf = Some(Vec::new()));
        for row in 0..table.rows.len() {
            let point = point_of(table, row)?;
            let entry = (table.number(row, ms)?, table.number(row, fraction)?);
            cdfs[point].get_or_insert_with(Vec::new).push(entry);
        }
    }

    let mut outcome_groups: Vec<Vec<OutcomeGroup>> = vec![Vec::new(); point_count];
    if let Some(table) = outcome_timeline {
        let (outcome, runs) = (table.require("outcome")?, table.require("runs")?);
        let series: Vec<usize> =
            model.timeline_series().iter().map(|name| table.require(name)).collect::<Result<_, _>>()?;
        for row in 0..table.rows.len() {
            let groups = &mut outcome_groups[point_of(table, row)?];
            let label = &table.rows[row][outcome];
            if groups.last().is_none_or(|group| group.label != *label) {
                let count = table.number(row, runs)? as usize;
                groups.push(OutcomeGroup { label: label.clone(), runs: count, timeline: Vec::new() });
            }
            let group = groups.last_mut().expect("a group was just pushed");
            for &column in &series {
                group.timeline.push(table.number(row, column)?);
            }
        }
    }

    let mut highlights = shaded_ms.to_vec();
    highlights.resize(point_count, Vec::new());
    Ok(Aggregate {
        summary: estimates,
        timelines,
        outcome_groups,
        events: 0,
        truncated_runs: 0,
        latency: cdfs,
        highlights,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_come_from_both_spellings_of_set() {
        let line: Vec<String> =
            ["retrylab", "run", "a.toml", "--set", "clients=5", "--quiet", "--set=seed=3"].map(String::from).into();
        assert_eq!(overrides_in(&line), ["clients=5", "seed=3"]);
    }

    #[test]
    fn empty_cells_are_nan_and_text_is_an_error() {
        let table = Table::parse(Path::new("t.csv"), b"a,b\n1.5,\nx,2\n").unwrap();
        assert_eq!(table.number(0, 0).unwrap(), 1.5);
        assert!(table.number(0, 1).unwrap().is_nan());
        let error = table.number(1, 0).unwrap_err().to_string();
        assert!(error.contains("t.csv: row 3: `x` in column `a` is not a number"), "{error}");
    }
}
