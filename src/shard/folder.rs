//! A shard folder on disk (`shard-I-of-N/`, or `.retrylab-checkpoint/` inside an unsharded run's output):
//!
//! - `study.json`, written first: the study and shard the folder belongs to, so a resumed or merged run can say
//!   exactly what differs when it does not match;
//! - `points/p<index>-<id>.bin`, one per owned point, written atomically the moment that point's runs finish (see
//!   [`super::codec`]), so an interrupted job loses only the points it had not finished;
//! - `shard.json`, written last: the shard manifest, present only when every owned point is stored.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::ShardSpec;
use super::codec::{self, PointRecord};
use crate::Error;
use crate::model::ModelKind;
use crate::report::{atomic, sha256_hex};
use crate::scenario::{PlannedPoint, Scenario};
use crate::sweep::{PointTimelines, Run, Swept};

/// Where an unsharded run keeps its finished points until its results are written (inside its output folder).
pub const CHECKPOINT_DIR: &str = ".retrylab-checkpoint";
/// The shard manifest: present once the shard is complete.
pub(crate) const MANIFEST_FILE: &str = "shard.json";
/// The study and shard a folder belongs to: written before the first run.
pub(crate) const STUDY_FILE: &str = "study.json";
const POINTS_DIR: &str = "points";
const KIND: &str = "retrylab shard";
/// Version of the shard folder layout and point file format.
pub(crate) const SHARD_FORMAT: u32 = 1;

/// What makes runs comparable: the same build, scenario text, overrides, seed and replicates give the same runs
/// (and the same name, the same chart titles).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Study {
    pub retrylab_version: String,
    /// The scenario's name (its `name`, else its file stem): chart titles show it.
    pub scenario_name: String,
    pub scenario_sha256: String,
    /// The `--set KEY=VALUE` overrides, in order.
    pub overrides: Vec<String>,
    pub master_seed: u64,
    pub replicates: u32,
    pub points: usize,
}

impl Study {
    pub fn of(scenario: &Scenario, points: usize, overrides: &[String]) -> Study {
        Study {
            retrylab_version: env!("CARGO_PKG_VERSION").to_owned(),
            scenario_name: scenario.name.clone(),
            scenario_sha256: sha256_hex(scenario.source.as_bytes()),
            overrides: overrides.to_vec(),
            master_seed: scenario.seed,
            replicates: scenario.replicates,
            points,
        }
    }

    /// SHA-256 over the study and the shard: every point file carries it, so no file is reused or merged into
    /// another study or shard layout.
    pub fn fingerprint(&self, shard: &ShardSpec) -> [u8; 32] {
        let text = serde_json::to_string(&(self, shard)).unwrap_or_default();
        Sha256::digest(text.as_bytes()).into()
    }

    /// How `other` differs from this study, one phrase per field, this study's value first ("seed 42 vs 7").
    pub fn differences(&self, other: &Study) -> Vec<String> {
        let mut found = Vec::new();
        let mut check = |name: &str, here: String, there: String| {
            if here != there {
                found.push(format!("{name} {here} vs {there}"));
            }
        };
        check("retrylab version", self.retrylab_version.clone(), other.retrylab_version.clone());
        check("scenario name", self.scenario_name.clone(), other.scenario_name.clone());
        check("scenario sha256", self.scenario_sha256.clone(), other.scenario_sha256.clone());
        check("overrides", format!("[{}]", self.overrides.join(", ")), format!("[{}]", other.overrides.join(", ")));
        check("seed", self.master_seed.to_string(), other.master_seed.to_string());
        check("replicates", self.replicates.to_string(), other.replicates.to_string());
        check("points", self.points.to_string(), other.points.to_string());
        found
    }
}

/// `study.json`.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct StudyRecord {
    pub kind: String,
    pub shard_format: u32,
    pub study: Study,
    pub shard: ShardSpec,
    /// As given on the command line; used for the merged results' name and default folder.
    pub scenario_path: String,
    /// The scenario file's text, so a merge needs no copy of the file.
    pub scenario_text: String,
}

impl StudyRecord {
    pub fn new(scenario: &Scenario, study: Study, shard: ShardSpec) -> StudyRecord {
        StudyRecord {
            kind: KIND.to_owned(),
            shard_format: SHARD_FORMAT,
            study,
            shard,
            scenario_path: scenario.display_path(),
            scenario_text: scenario.source.clone(),
        }
    }
}

/// `shard.json`: a complete shard.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct ShardManifest {
    #[serde(flatten)]
    pub record: StudyRecord,
    /// The stable ids of the points this shard owns (it ran all of them, or the runs of them it owns).
    pub point_ids: Vec<String>,
    pub runs: usize,
    pub events: u64,
    /// Runs that stopped at `max_events_per_run`.
    pub truncated_runs: usize,
    pub threads: usize,
    /// Seconds the invocation that completed the shard spent simulating (not counting earlier, interrupted ones).
    pub elapsed_s: f64,
    pub command_line: Vec<String>,
}

/// An open shard folder, locked against a second process running the same shard into it.
pub struct ShardFolder {
    pub dir: PathBuf,
    pub record: StudyRecord,
    fingerprint: [u8; 32],
    /// Holds an advisory lock on `.lock` while the folder is open; the system drops it if the process dies.
    _lock: Option<fs::File>,
}

impl ShardFolder {
    /// Refuses (with an [`Error::Shards`] naming what differs) a `--resume` into `dir` when it holds another study
    /// or shard layout. Called before anything runs, then again by [`ShardFolder::open`].
    pub fn check_resumable(dir: &Path, record: &StudyRecord) -> Result<(), Error> {
        let Some(previous) = read_json::<StudyRecord>(&dir.join(STUDY_FILE))? else { return Ok(()) };
        let mut differences = record.study.differences(&previous.study);
        if previous.shard != record.shard {
            let layout = |s: &ShardSpec| format!("{s} by {}", s.by);
            differences.push(format!("shard {} vs {}", layout(&record.shard), layout(&previous.shard)));
        }
        if differences.is_empty() {
            return Ok(());
        }
        Err(Error::Shards(format!(
            "--resume: {} holds runs of a different study (this run's value first: {}); run without --resume to \
             start it afresh",
            dir.display(),
            differences.join("; ")
        )))
    }

    /// Opens `dir` for a run of `record` over `points`. Without `resume` it starts clean (removing the files an
    /// earlier run left); with it, returns the runs already stored that still fit the plan (the point's parameters,
    /// the replicates this shard owns, the model's metrics), each point at most once; other point files are
    /// reported and their points run again. Either way the folder is marked incomplete until
    /// [`ShardFolder::finish`].
    pub fn open(
        dir: &Path,
        record: StudyRecord,
        resume: bool,
        points: &[PlannedPoint],
        model: ModelKind,
    ) -> Result<(ShardFolder, Swept), Error> {
        atomic::ensure_writable_dir(&dir.join(POINTS_DIR))?;
        let lock = lock(dir)?;
        if resume {
            ShardFolder::check_resumable(dir, &record)?;
        }
        let fingerprint = record.study.fingerprint(&record.shard);
        let folder = ShardFolder { dir: dir.to_owned(), record, fingerprint, _lock: lock };
        remove_file_if_present(&dir.join(MANIFEST_FILE))?;
        atomic::remove_temporary_files(&dir.join(POINTS_DIR));
        let mut stored = Swept { runs: Vec::new(), timelines: vec![PointTimelines::default(); points.len()] };
        if resume {
            for path in point_files(dir)? {
                if let Some(record) = folder.reusable_point(&path, points, model)? {
                    stored.runs.extend(record.runs);
                    stored.timelines[record.point].merge(&record.timelines);
                }
            }
            stored.runs.sort_by_key(|run| (run.point, run.replicate));
        } else {
            let earlier = point_files(dir)?;
            if !earlier.is_empty() {
                eprintln!(
                    "note: {} held {} finished points of an earlier run; starting afresh (--resume keeps them)",
                    dir.display(),
                    earlier.len()
                );
            }
            earlier.iter().try_for_each(|path| remove_file_if_present(path))?;
        }
        atomic::write_atomic(&dir.join(STUDY_FILE), &to_json(&folder.record))?;
        Ok((folder, stored))
    }

    /// The point file at `path` if its runs can be reused: `None` (with a warning) when the file is damaged or does
    /// not fit the plan; an error when it belongs to another study.
    fn reusable_point(
        &self,
        path: &Path,
        points: &[PlannedPoint],
        model: ModelKind,
    ) -> Result<Option<PointRecord>, Error> {
        let stored = match fs::read(path).map_err(|e| e.to_string()).and_then(|bytes| codec::decode(&bytes)) {
            Ok(stored) => stored,
            Err(problem) => {
                eprintln!("warning: {}: {problem}; running its point again", path.display());
                return Ok(None);
            }
        };
        if stored.fingerprint != self.fingerprint {
            return Err(Error::Shards(format!(
                "{}: this point file belongs to another study or shard layout; run without --resume to start {} \
                 afresh",
                path.display(),
                self.dir.display()
            )));
        }
        let problem = match points.get(stored.point) {
            None => Some(format!("point {} is not in the plan", stored.point)),
            Some(point) => check_point(&stored, point, self.record.shard, &self.record.study, model)
                .err()
                .or_else(|| (point_path(&self.dir, point) != path).then(|| "its name is not its point's".to_owned())),
        };
        match problem {
            None => Ok(Some(stored)),
            Some(problem) => {
                eprintln!("warning: {}: {problem}; ignoring it", path.display());
                Ok(None)
            }
        }
    }

    /// Stores one point's finished runs and their summed timelines atomically.
    pub fn save_point(&self, point: &PlannedPoint, runs: &[Run], timelines: &PointTimelines) -> Result<(), Error> {
        let bytes = codec::encode(&self.fingerprint, point.index, point.hash, runs, timelines);
        atomic::write_atomic_unsynced(&point_path(&self.dir, point), &bytes)
    }

    /// Marks the shard complete.
    pub fn finish(&self, manifest: &ShardManifest) -> Result<(), Error> {
        atomic::write_atomic(&self.dir.join(MANIFEST_FILE), &to_json(manifest))
    }

    /// Removes the whole folder (an unsharded run's checkpoint, once its results are written).
    pub fn remove(self) -> Result<(), Error> {
        fs::remove_dir_all(&self.dir).map_err(|source| Error::Write { path: self.dir.clone(), source })
    }
}

/// Checks a stored point against the plan: its parameters' hash, exactly the replicates `shard` owns in order,
/// each with the seed its replicate gives, and the model's number of metrics and timeline series.
pub(crate) fn check_point(
    stored: &PointRecord,
    point: &PlannedPoint,
    shard: ShardSpec,
    study: &Study,
    model: ModelKind,
) -> Result<(), String> {
    if stored.point != point.index || stored.point_hash != point.hash {
        return Err(format!("holds point {}, not point {} with these parameters", stored.point, point.index));
    }
    let expected = shard.replicates_of(point.index, study.replicates);
    let got: Vec<u32> = stored.runs.iter().map(|run| run.replicate).collect();
    if got != expected {
        return Err(format!("holds replicates {got:?}, but shard {shard} owns {expected:?} of it"));
    }
    let (metrics, series) = (model.metrics().len(), model.timeline_series().len().max(1));
    for run in &stored.runs {
        if run.seed != point.seeds(study.master_seed, run.replicate).policy {
            return Err(format!("replicate {} has seed {}, not the one its point gives", run.replicate, run.seed));
        }
        if run.output.metrics.len() != metrics {
            return Err(format!(
                "replicate {} has {} metrics; the {} model records {metrics}",
                run.replicate,
                run.output.metrics.len(),
                model.name()
            ));
        }
    }
    let summed = stored.timelines.runs() as usize;
    if summed != stored.runs.len() || stored.timelines.by_outcome.iter().any(|group| group.sums.len() % series != 0) {
        return Err(format!(
            "its timelines sum {summed} runs in groups of {:?} values; it holds {} runs and the {} model records \
             {series} series",
            stored.timelines.by_outcome.iter().map(|group| group.sums.len()).collect::<Vec<_>>(),
            stored.runs.len(),
            model.name()
        ));
    }
    Ok(())
}

/// Takes the folder's advisory lock, refusing when another live process holds it. Where the filesystem cannot
/// lock (some network filesystems), runs without one.
pub(crate) fn lock(dir: &Path) -> Result<Option<fs::File>, Error> {
    let path = dir.join(".lock");
    let file = fs::File::create(&path).map_err(|source| Error::OutputFolder { path: dir.to_owned(), source })?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(fs::TryLockError::WouldBlock) => Err(Error::Shards(format!(
            "another retrylab process is running in {} (it holds {}); wait for it to finish, or stop it first",
            dir.display(),
            path.display()
        ))),
        Err(fs::TryLockError::Error(_)) => Ok(None),
    }
}

fn remove_file_if_present(path: &Path) -> Result<(), Error> {
    match fs::remove_file(path) {
        Err(source) if source.kind() != std::io::ErrorKind::NotFound => {
            Err(Error::Write { path: path.to_owned(), source })
        }
        _ => Ok(()),
    }
}

/// Where a point's file lives in a shard folder.
pub(crate) fn point_path(dir: &Path, point: &PlannedPoint) -> PathBuf {
    dir.join(POINTS_DIR).join(format!("p{:07}-{}.bin", point.index, point.id()))
}

/// The point files in a shard folder (finished ones, not temporaries), sorted by name.
fn point_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let points = dir.join(POINTS_DIR);
    let entries = match fs::read_dir(&points) {
        Ok(entries) => entries,
        Err(source) if source.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(Error::OutputFolder { path: points, source }),
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            name.starts_with('p') && name.ends_with(".bin")
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Reads a JSON file of this layout; `None` when it does not exist.
pub(crate) fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, Error> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(source) if source.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(Error::Results { path: path.to_owned(), message: format!("cannot read: {source}") }),
    };
    let kind: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| Error::Results { path: path.to_owned(), message: format!("not JSON: {e}") })?;
    let format = kind.get("shard_format").and_then(serde_json::Value::as_u64);
    if kind.get("kind").and_then(serde_json::Value::as_str) != Some(KIND) {
        return Err(Error::Results { path: path.to_owned(), message: "not a retrylab shard file".into() });
    }
    if format != Some(u64::from(SHARD_FORMAT)) {
        return Err(Error::Results {
            path: path.to_owned(),
            message: format!(
                "shard format {} is not the format {SHARD_FORMAT} this build reads; rerun the shard with this build",
                format.map_or_else(|| "?".to_owned(), |f| f.to_string())
            ),
        });
    }
    serde_json::from_value(kind)
        .map(Some)
        .map_err(|e| Error::Results { path: path.to_owned(), message: format!("unreadable shard file: {e}") })
}

/// Pretty JSON with a final newline, as every checkpoint file is written.
pub(crate) fn to_json<T: Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::ShardBy;

    fn record() -> StudyRecord {
        StudyRecord {
            kind: KIND.to_owned(),
            shard_format: SHARD_FORMAT,
            study: Study {
                retrylab_version: "test".into(),
                scenario_name: "s".into(),
                scenario_sha256: "0".repeat(64),
                overrides: Vec::new(),
                master_seed: 1,
                replicates: 2,
                points: 3,
            },
            shard: ShardSpec { index: 0, count: 2, by: ShardBy::Runs },
            scenario_path: "s.toml".into(),
            scenario_text: String::new(),
        }
    }

    #[test]
    fn a_second_writer_of_an_open_folder_is_refused_until_the_first_closes_it() {
        let dir = tempfile::tempdir().unwrap();
        let (first, _) = ShardFolder::open(dir.path(), record(), false, &[], ModelKind::Occ).unwrap();
        let second = ShardFolder::open(dir.path(), record(), true, &[], ModelKind::Occ);
        assert!(matches!(&second, Err(Error::Shards(message)) if message.contains("another retrylab process")));
        drop(first);
        assert!(ShardFolder::open(dir.path(), record(), true, &[], ModelKind::Occ).is_ok());
    }

    #[test]
    fn opening_marks_the_folder_incomplete_and_resume_checks_the_study() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(MANIFEST_FILE), b"{}").unwrap();
        let (folder, _) = ShardFolder::open(dir.path(), record(), false, &[], ModelKind::Occ).unwrap();
        assert!(!dir.path().join(MANIFEST_FILE).exists(), "a stale shard.json would claim the folder is complete");
        drop(folder);
        let mut other = record();
        other.study.master_seed = 2;
        let refused = ShardFolder::check_resumable(dir.path(), &other).unwrap_err().to_string();
        assert!(refused.contains("seed 2 vs 1"), "{refused}");
        other.study.master_seed = 1;
        other.shard.by = ShardBy::Points;
        let refused = ShardFolder::check_resumable(dir.path(), &other).unwrap_err().to_string();
        assert!(refused.contains("shard 0/2 by points vs 0/2 by runs"), "{refused}");
    }
}
