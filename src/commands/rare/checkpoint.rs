//! The folder of `retrylab rare --out DIR` or `--resume` (docs/rare.md, "Resuming"), which keeps an estimate's
//! work as it finishes so that an interrupted estimate goes on where it stopped:
//!
//! - `study.json`: what the estimate depends on; a `--resume` of another study is refused, naming what differs;
//! - `pilot.json`: the levels and the cost of the pilot (or calibration), once it has run;
//! - `rep-<r>.json`: replication r, the moment it finishes.
//!
//! Each file is written beside its name and renamed into place. The pilot and replication files carry the study's
//! SHA-256, so none is read into another study, and each f64 also as its bits in hex, since a JSON decimal does not
//! always read back to the same number.

use std::fs;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::analysis::rare::{Design, Pilot, Replication};
use crate::report::{atomic, sha256_hex};
use crate::shard::folder::to_json;

pub(super) const STUDY_FILE: &str = "study.json";
const PILOT_FILE: &str = "pilot.json";
const KIND: &str = "retrylab rare";
/// Version of the folder's layout and files.
const FORMAT: u32 = 1;

/// What an estimate's numbers depend on: the same study gives the same pilot and replications.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(super) struct Study {
    pub(super) retrylab_version: String,
    pub(super) scenario_name: String,
    pub(super) scenario_sha256: String,
    /// `--set KEY=VALUE`, in order.
    pub(super) overrides: Vec<String>,
    pub(super) seed: u64,
    /// The horizon, as [`crate::time::SimDuration`] prints it.
    pub(super) within: String,
    pub(super) event: String,
    pub(super) importance: String,
    /// `auto`, or the levels given.
    pub(super) levels: String,
    pub(super) budget: u64,
    pub(super) replications: u32,
}

impl Study {
    /// How `other` differs, one phrase per field, this study's value first ("--seed 2 vs 1").
    fn differences(&self, other: &Study) -> Vec<String> {
        let fields = |study: &Study| {
            [
                ("retrylab version", study.retrylab_version.clone()),
                ("scenario name", study.scenario_name.clone()),
                ("scenario sha256", study.scenario_sha256.clone()),
                ("--set", format!("[{}]", study.overrides.join(", "))),
                ("--seed", study.seed.to_string()),
                ("--within", study.within.clone()),
                ("--event", study.event.clone()),
                ("--importance", study.importance.clone()),
                ("--levels", study.levels.clone()),
                ("--budget", study.budget.to_string()),
                ("--replications", study.replications.to_string()),
            ]
        };
        fields(self)
            .into_iter()
            .zip(fields(other))
            .filter(|((_, here), (_, there))| here != there)
            .map(|((name, here), (_, there))| format!("{name} {here} vs {there}"))
            .collect()
    }
}

/// `study.json`.
#[derive(Serialize, Deserialize)]
struct StudyFile {
    kind: String,
    format: u32,
    #[serde(flatten)]
    study: Study,
}

/// `pilot.json`.
#[derive(Serialize, Deserialize)]
struct PilotFile {
    kind: String,
    format: u32,
    study_sha256: String,
    levels: Vec<u64>,
    /// A plain run's mean events; `run_events_bits` is what is read back.
    run_events: f64,
    run_events_bits: String,
    events: u64,
    runs: usize,
}

/// `rep-<r>.json`.
#[derive(Serialize, Deserialize)]
struct ReplicationFile {
    kind: String,
    format: u32,
    study_sha256: String,
    replication: usize,
    seed: u64,
    /// The design it ran: the main run's levels and trajectories per stage.
    levels: Vec<u64>,
    runs_per_stage: usize,
    /// p̂; `estimate_bits` is what is read back.
    estimate: f64,
    estimate_bits: String,
    survivors: Vec<usize>,
    events: u64,
}

/// A replication read back, with the design it ran.
pub(super) struct Kept {
    replication: Replication,
    levels: Vec<u64>,
    effort: usize,
}

/// What an earlier estimate of the study kept: its pilot, and by index its replications.
pub(super) struct Stored {
    pub(super) pilot: Option<Pilot>,
    pub(super) replications: Vec<Option<Kept>>,
}

/// An estimate's folder.
pub(super) struct Folder {
    pub(super) dir: PathBuf,
    study: Study,
    fingerprint: String,
}

impl Folder {
    pub(super) fn new(dir: PathBuf, study: Study) -> Folder {
        let fingerprint = sha256_hex(&to_json(&study));
        Folder { dir, study, fingerprint }
    }

    /// Before any run: refuses a `study.json` that is not a rare estimate's (the folder is another command's), or,
    /// with `resume`, one of another study, naming what differs.
    pub(super) fn check(&self, resume: bool) -> Result<(), Error> {
        let path = self.dir.join(STUDY_FILE);
        let text = match fs::read(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(source) => return Err(Error::OutputFolder { path: self.dir.clone(), source }),
        };
        let other = match parse::<StudyFile>(&text) {
            Ok(file) => file.study,
            Err(problem) => {
                return Err(Error::Usage(format!(
                    "{}: {problem}; give `retrylab rare` a folder of its own with --out",
                    path.display()
                )));
            }
        };
        let differences = self.study.differences(&other);
        if !resume || differences.is_empty() {
            return Ok(());
        }
        Err(Error::Usage(format!(
            "--resume: {} holds an estimate of a different study (this run's value first: {}); run without --resume \
             to start it afresh",
            self.dir.display(),
            differences.join("; ")
        )))
    }

    /// The pilot and replications kept in the folder (`seeds`: each replication's seed). A damaged file, or one
    /// that does not fit, is reported and run again; one of another study is refused.
    pub(super) fn stored(&self, seeds: &[u64]) -> Result<Stored, Error> {
        let pilot = match self.read::<PilotFile>(&self.dir.join(PILOT_FILE))? {
            Some(file) => pilot_of(&file).or_else(|| {
                eprintln!("warning: {}: damaged bits; running the pilot again", self.dir.join(PILOT_FILE).display());
                None
            }),
            None => None,
        };
        let mut replications: Vec<Option<Kept>> = seeds.iter().map(|_| None).collect();
        for (index, seed) in seeds.iter().enumerate() {
            let path = self.replication_path(index);
            let Some(file) = self.read::<ReplicationFile>(&path)? else { continue };
            let problem = if file.replication != index {
                Some(format!("holds replication {}", file.replication))
            } else if file.seed != *seed {
                Some(format!("has seed {}, not the one replication {index} gives", file.seed))
            } else {
                None
            };
            match (problem, bits(&file.estimate_bits)) {
                (None, Some(estimate)) => {
                    let replication = Replication { estimate, survivors: file.survivors, events: file.events };
                    replications[index] = Some(Kept { replication, levels: file.levels, effort: file.runs_per_stage });
                }
                (problem, _) => {
                    let problem = problem.unwrap_or_else(|| "damaged bits".to_owned());
                    eprintln!("warning: {}: {problem}; running it again", path.display());
                }
            }
        }
        Ok(Stored { pilot, replications })
    }

    /// The kept replications that ran `design`; the others are reported, to run again.
    pub(super) fn fit(&self, stored: Vec<Option<Kept>>, design: &Design) -> Vec<Option<Replication>> {
        let fits = |(index, kept): (usize, Option<Kept>)| {
            let kept = kept?;
            if kept.levels == design.levels && kept.effort == design.effort {
                return Some(kept.replication);
            }
            eprintln!(
                "warning: {}: ran levels {:?} with {} trajectories per stage, not this study's {:?} with {}; running \
                 it again",
                self.replication_path(index).display(),
                kept.levels,
                kept.effort,
                design.levels,
                design.effort
            );
            None
        };
        stored.into_iter().enumerate().map(fits).collect()
    }

    /// Makes the folder and locks it against a second process; without `resume`, removes what an earlier
    /// estimate kept (saying so). Then records the study. The lock lasts as long as the returned file.
    pub(super) fn open(&self, resume: bool) -> Result<Option<fs::File>, Error> {
        atomic::ensure_writable_dir(&self.dir)?;
        let lock = crate::shard::folder::lock(&self.dir)?;
        atomic::remove_temporary_files(&self.dir);
        if !resume {
            let earlier = self.files()?;
            if !earlier.is_empty() {
                eprintln!(
                    "note: {} held {} files of an earlier estimate; starting afresh (--resume keeps them)",
                    self.dir.display(),
                    earlier.len()
                );
            }
            for path in earlier {
                fs::remove_file(&path).map_err(|source| Error::Write { path, source })?;
            }
        }
        let file = StudyFile { kind: KIND.to_owned(), format: FORMAT, study: self.study.clone() };
        atomic::write_atomic(&self.dir.join(STUDY_FILE), &to_json(&file))?;
        Ok(lock)
    }

    pub(super) fn keep_pilot(&self, pilot: &Pilot) -> Result<(), Error> {
        let file = PilotFile {
            kind: KIND.to_owned(),
            format: FORMAT,
            study_sha256: self.fingerprint.clone(),
            levels: pilot.levels.clone(),
            run_events: pilot.run_events,
            run_events_bits: format!("{:016x}", pilot.run_events.to_bits()),
            events: pilot.events,
            runs: pilot.runs,
        };
        atomic::write_atomic(&self.dir.join(PILOT_FILE), &to_json(&file))
    }

    /// Keeps replication `index`, seeded `seed`, of `design`.
    pub(super) fn keep(
        &self,
        index: usize,
        seed: u64,
        design: &Design,
        replication: &Replication,
    ) -> Result<(), Error> {
        let file = ReplicationFile {
            kind: KIND.to_owned(),
            format: FORMAT,
            study_sha256: self.fingerprint.clone(),
            replication: index,
            seed,
            levels: design.levels.clone(),
            runs_per_stage: design.effort,
            estimate: replication.estimate,
            estimate_bits: format!("{:016x}", replication.estimate.to_bits()),
            survivors: replication.survivors.clone(),
            events: replication.events,
        };
        atomic::write_atomic(&self.replication_path(index), &to_json(&file))
    }

    fn replication_path(&self, index: usize) -> PathBuf {
        self.dir.join(format!("rep-{index}.json"))
    }

    /// The pilot and replication files in the folder (made by [`Folder::open`]).
    fn files(&self) -> Result<Vec<PathBuf>, Error> {
        let entries =
            fs::read_dir(&self.dir).map_err(|source| Error::OutputFolder { path: self.dir.clone(), source })?;
        let ours = |name: &str| name == PILOT_FILE || (name.starts_with("rep-") && name.ends_with(".json"));
        Ok(entries
            .filter_map(Result::ok)
            .filter(|entry| ours(&entry.file_name().to_string_lossy()))
            .map(|entry| entry.path())
            .collect())
    }

    /// A pilot or replication file of this study; `None` (with a warning) when it is missing or damaged. One of
    /// another study is refused.
    fn read<T: DeserializeOwned + Stamped>(&self, path: &Path) -> Result<Option<T>, Error> {
        let bytes = match fs::read(path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => {
                eprintln!("warning: {}: cannot read ({error}); running it again", path.display());
                return Ok(None);
            }
        };
        let file = match parse::<T>(&bytes) {
            Ok(file) => file,
            Err(problem) => {
                eprintln!("warning: {}: {problem}; running it again", path.display());
                return Ok(None);
            }
        };
        if file.study_sha256() != self.fingerprint {
            return Err(Error::Usage(format!(
                "--resume: {} belongs to an estimate of another study; run without --resume to start {} afresh",
                path.display(),
                self.dir.display()
            )));
        }
        Ok(Some(file))
    }
}

/// A file that names the study it belongs to.
trait Stamped {
    fn study_sha256(&self) -> &str;
}

impl Stamped for PilotFile {
    fn study_sha256(&self) -> &str {
        &self.study_sha256
    }
}

impl Stamped for ReplicationFile {
    fn study_sha256(&self) -> &str {
        &self.study_sha256
    }
}

fn pilot_of(file: &PilotFile) -> Option<Pilot> {
    Some(Pilot {
        levels: file.levels.clone(),
        run_events: bits(&file.run_events_bits)?,
        events: file.events,
        runs: file.runs,
    })
}

/// An f64 from its bits in hex.
fn bits(hex: &str) -> Option<f64> {
    u64::from_str_radix(hex, 16).ok().map(f64::from_bits)
}

/// A file of this folder's kind and format, or what is wrong with it.
fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    let kind = value.get("kind").and_then(serde_json::Value::as_str);
    if kind != Some(KIND) {
        return Err(format!(
            "not a `retrylab rare` file (its kind is {})",
            kind.map_or("missing".into(), |k| format!("{k:?}"))
        ));
    }
    let format = value.get("format").and_then(serde_json::Value::as_u64);
    if format != Some(u64::from(FORMAT)) {
        let format = format.map_or("missing".to_owned(), |f| f.to_string());
        return Err(format!("format {format} is not the format {FORMAT} this build reads"));
    }
    serde_json::from_value(value).map_err(|e| format!("unreadable: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn study() -> Study {
        Study {
            retrylab_version: "test".into(),
            scenario_name: "s".into(),
            scenario_sha256: "0".repeat(64),
            overrides: Vec::new(),
            seed: 1,
            within: "10s".into(),
            event: "queue>=10".into(),
            importance: "queue".into(),
            levels: "auto".into(),
            budget: 3000,
            replications: 3,
        }
    }

    fn design() -> Design {
        Design { levels: vec![5, 10], level_event: true, effort: 40 }
    }

    #[test]
    fn a_kept_pilot_and_replication_read_back_bit_for_bit() {
        let dir = tempfile::tempdir().unwrap();
        let folder = Folder::new(dir.path().join("rare"), study());
        let _lock = folder.open(false).unwrap();
        let pilot = Pilot { levels: vec![5], run_events: 0.1 + 0.2, events: 7, runs: 9 };
        folder.keep_pilot(&pilot).unwrap();
        // A value whose shortest decimal is long, and a subnormal.
        let first = Replication { estimate: 0.1 + 0.2, survivors: vec![3, 2], events: 11 };
        let last = Replication { estimate: 5e-324, survivors: vec![1], events: 4 };
        folder.keep(0, 100, &design(), &first).unwrap();
        folder.keep(2, 102, &design(), &last).unwrap();
        let stored = folder.stored(&[100, 101, 102]).unwrap();
        assert_eq!(stored.pilot, Some(pilot));
        let fit = folder.fit(stored.replications, &design());
        assert_eq!(fit, [Some(first), None, Some(last)]);
        // Run with another seed or design, they are run again.
        assert!(folder.stored(&[100, 101, 999]).unwrap().replications[2].is_none());
        let other = Design { effort: 41, ..design() };
        assert_eq!(folder.fit(folder.stored(&[100, 101, 102]).unwrap().replications, &other), [None, None, None]);
    }

    #[test]
    fn a_damaged_file_is_run_again_and_a_foreign_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let folder = Folder::new(dir.path().to_owned(), study());
        let _lock = folder.open(false).unwrap();
        folder.keep(0, 100, &design(), &Replication { estimate: 0.5, survivors: vec![1], events: 1 }).unwrap();
        let path = folder.replication_path(0);
        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, text.replace("3fe0000000000000", "not hex")).unwrap();
        assert!(folder.stored(&[100]).unwrap().replications[0].is_none());
        fs::write(&path, "{").unwrap();
        assert!(folder.stored(&[100]).unwrap().replications[0].is_none());
        fs::write(&path, text.replace("\"replication\": 0", "\"replication\": 1")).unwrap();
        assert!(folder.stored(&[100]).unwrap().replications[0].is_none());
        fs::write(&path, &text).unwrap();
        assert!(folder.stored(&[100]).unwrap().replications[0].is_some());
        let other = Folder::new(dir.path().to_owned(), Study { seed: 2, ..study() });
        let refused = other.stored(&[100]).err().map(|error| error.to_string()).unwrap_or_default();
        assert!(refused.contains("belongs to an estimate of another study"), "{refused}");
    }

    #[test]
    fn resuming_another_study_is_refused_naming_every_difference() {
        let dir = tempfile::tempdir().unwrap();
        let folder = Folder::new(dir.path().to_owned(), study());
        folder.check(true).unwrap();
        drop(folder.open(false).unwrap());
        folder.check(true).unwrap();
        let other = Study { seed: 2, budget: 4000, overrides: vec!["rate=6".into()], ..study() };
        let other = Folder::new(dir.path().to_owned(), other);
        other.check(false).unwrap();
        let refused = other.check(true).unwrap_err().to_string();
        assert!(refused.contains("--set [rate=6] vs []; --seed 2 vs 1; --budget 4000 vs 3000"), "{refused}");
        assert_eq!(study().differences(&study()), Vec::<String>::new());
    }
}
