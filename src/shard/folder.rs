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
use crate::report::{atomic, sha256_hex};
use crate::scenario::{PlannedPoint, Scenario};
use crate::sweep::Run;

/// Where an unsharded run keeps its finished points until its results are written (inside its output folder).
pub const CHECKPOINT_DIR: &str = ".retrylab-checkpoint";
/// The shard manifest: present once the shard is complete.
pub const MANIFEST_FILE: &str = "shard.json";
/// The study and shard a folder belongs to: written before the first run.
pub const STUDY_FILE: &str = "study.json";
const POINTS_DIR: &str = "points";
const KIND: &str = "retrylab shard";
/// Version of the shard folder layout and point file format.
pub const SHARD_FORMAT: u32 = 1;

/// What makes runs comparable: the same build, scenario text, overrides, seed and replicates give the same runs.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Study {
    pub retrylab_version: String,
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

    /// How `other` differs from this study, one phrase per field ("seed 42 here, 7 there").
    pub fn differences(&self, other: &Study) -> Vec<String> {
        let mut found = Vec::new();
        let mut check = |name: &str, here: String, there: String| {
            if here != there {
                found.push(format!("{name} {here} vs {there}"));
            }
        };
        check("retrylab version", self.retrylab_version.clone(), other.retrylab_version.clone());
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

/// `shard.json`: a complete shard.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct ShardManifest {
    #[serde(flatten)]
    pub record: StudyRecord,
    /// The stable ids of the points this shard owns (it ran all of them, or the runs of them it owns).
    pub point_ids: Vec<String>,
    pub runs: u64,
    pub events: u64,
    /// Runs that stopped at `max_events_per_run`.
    pub truncated_runs: usize,
    pub threads: usize,
    /// Seconds spent simulating, summed over the invocations that ran this shard's points.
    pub elapsed_s: f64,
    pub command_line: Vec<String>,
}

/// An open shard folder.
pub struct ShardFolder {
    pub dir: PathBuf,
    pub record: StudyRecord,
    fingerprint: [u8; 32],
}

impl ShardFolder {
    /// Opens `dir` for a run of `record`. Without `resume` it starts clean (removing this layout's files left by an
    /// earlier run); with it, returns the point files already finished, after checking they belong to the same
    /// study and shard (otherwise a [`Error::Shards`] names what differs). Damaged point files are reported and
    /// run again.
    pub fn open(dir: &Path, record: StudyRecord, resume: bool) -> Result<(ShardFolder, Vec<PointRecord>), Error> {
        atomic::ensure_writable_dir(&dir.join(POINTS_DIR))?;
        let fingerprint = record.study.fingerprint(&record.shard);
        let folder = ShardFolder { dir: dir.to_owned(), record, fingerprint };
        let mut done = Vec::new();
        if resume && let Some(previous) = read_json::<StudyRecord>(&dir.join(STUDY_FILE))? {
            folder.check_same_study(&previous)?;
        }
        remove_partial_files(&dir.join(POINTS_DIR));
        if resume {
            for path in folder.point_files()? {
                let decoded = fs::read(&path).map_err(|e| e.to_string()).and_then(|bytes| codec::decode(&bytes));
                match decoded {
                    Ok(point) if point.fingerprint == folder.fingerprint => done.push(point),
                    Ok(_) => {
                        return Err(Error::Shards(format!(
                            "{}: this point file belongs to another study or shard layout; run without --resume to \
                             start {} afresh",
                            path.display(),
                            dir.display()
                        )));
                    }
                    Err(problem) => eprintln!("warning: {}: {problem}; running its point again", path.display()),
                }
            }
        } else {
            folder.clear()?;
        }
        let study_json = to_json(&folder.record);
        atomic::write_atomic(&dir.join(STUDY_FILE), &study_json)?;
        Ok((folder, done))
    }

    fn check_same_study(&self, previous: &StudyRecord) -> Result<(), Error> {
        let mut differences = self.record.study.differences(&previous.study);
        if previous.shard != self.record.shard {
            let layout = |s: &ShardSpec| format!("{s} by {}", s.by);
            differences.push(format!("shard {} vs {}", layout(&self.record.shard), layout(&previous.shard)));
        }
        if differences.is_empty() {
            return Ok(());
        }
        Err(Error::Shards(format!(
            "--resume: {} holds runs of a different study (this run's value first: {}); run without --resume to \
             start it afresh",
            self.dir.display(),
            differences.join("; ")
        )))
    }

    /// Removes the files an earlier run of this layout left (never anything else).
    fn clear(&self) -> Result<(), Error> {
        let remove = |path: &Path| match fs::remove_file(path) {
            Err(source) if source.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::Write { path: path.to_owned(), source })
            }
            _ => Ok(()),
        };
        remove(&self.dir.join(MANIFEST_FILE))?;
        for path in self.point_files()? {
            remove(&path)?;
        }
        Ok(())
    }

    /// The point files present, sorted by name (so by point index).
    fn point_files(&self) -> Result<Vec<PathBuf>, Error> {
        point_files(&self.dir)
    }

    /// Stores one point's finished runs atomically.
    pub fn save_point(&self, point: &PlannedPoint, runs: &[Run]) -> Result<(), Error> {
        let bytes = codec::encode(&self.fingerprint, point.index, point.hash, runs);
        atomic::write_atomic(&point_path(&self.dir, point), &bytes)
    }

    /// Marks the shard complete.
    pub fn finish(&self, manifest: &ShardManifest) -> Result<(), Error> {
        atomic::write_atomic(&self.dir.join(MANIFEST_FILE), &to_json(manifest))
    }

    /// Removes the whole folder (an unsharded run's checkpoint, once its results are written).
    pub fn remove(self) -> Result<(), Error> {
        fs::remove_dir_all(&self.dir).map_err(|source| Error::Write { path: self.dir, source })
    }
}

/// Removes temporary files a killed writer left behind (hidden `.<pid>.partial-<name>` files; see
/// [`atomic::temporary_path`]). Best effort: a file that cannot be removed is only clutter.
fn remove_partial_files(dir: &Path) {
    for entry in fs::read_dir(dir).into_iter().flatten().filter_map(Result::ok) {
        if entry.file_name().to_string_lossy().starts_with('.')
            && entry.file_name().to_string_lossy().contains(".partial-")
        {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Where a point's file lives in a shard folder.
pub fn point_path(dir: &Path, point: &PlannedPoint) -> PathBuf {
    dir.join(POINTS_DIR).join(format!("p{:07}-{}.bin", point.index, point.id()))
}

/// The point files in a shard folder, sorted by name.
pub fn point_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
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
pub fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, Error> {
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

fn to_json<T: Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).unwrap_or_default();
    bytes.push(b'\n');
    bytes
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
