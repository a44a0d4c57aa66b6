//! Gathering complete shard folders back into one sweep: every shard of one study, each exactly once, every run
//! present exactly once with the seed its point and replicate give. Anything else is refused with a message that
//! lists what is missing, duplicated or different, before a single output file is written.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::codec;
use super::folder::{self, MANIFEST_FILE, STUDY_FILE, ShardManifest};
use crate::Error;
use crate::engine::replicate_seed;
use crate::scenario::{PlannedPoint, Scenario, plan};
use crate::sweep::Run;

/// Most items a refusal lists before it says "and N more".
const LIST_AT_MOST: usize = 12;

/// The merged sweep, ready for `report::write_results`.
pub struct Merged {
    pub scenario: Scenario,
    pub points: Vec<PlannedPoint>,
    /// Ordered by (point, replicate).
    pub runs: Vec<Run>,
    /// The shard manifests, by shard index.
    pub shards: Vec<(PathBuf, ShardManifest)>,
}

/// The shard folders named by `dirs`: each is a shard folder itself (it has `study.json`), or holds shard folders
/// one level down.
pub fn find_shard_folders(dirs: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let is_shard = |dir: &Path| dir.join(STUDY_FILE).is_file() || dir.join(MANIFEST_FILE).is_file();
    let mut found: Vec<PathBuf> = Vec::new();
    let mut add = |dir: PathBuf| {
        // The same folder named twice (a path and its parent, say) is one shard, not a duplicate.
        let same = |other: &PathBuf| other.canonicalize().ok().is_some_and(|o| dir.canonicalize().ok() == Some(o));
        if !found.iter().any(same) {
            found.push(dir);
        }
    };
    for dir in dirs {
        if is_shard(dir) {
            add(dir.clone());
            continue;
        }
        let entries = std::fs::read_dir(dir).map_err(|source| Error::Results {
            path: dir.clone(),
            message: format!("cannot read this folder ({source}); give shard folders or the folder that holds them"),
        })?;
        let mut inside: Vec<PathBuf> =
            entries.filter_map(Result::ok).map(|entry| entry.path()).filter(|path| is_shard(path)).collect();
        if inside.is_empty() {
            return Err(Error::Results {
                path: dir.clone(),
                message: "no shard folders here: expected study.json and shard.json, or shard-I-of-N/ folders \
                          written by `retrylab run … --shard I/N`"
                    .into(),
            });
        }
        inside.sort();
        inside.into_iter().for_each(&mut add);
    }
    Ok(found)
}

/// Reads and checks the shard folders (see the module doc) and returns the runs of the whole sweep.
pub fn merge(folders: &[PathBuf]) -> Result<Merged, Error> {
    let mut shards = Vec::new();
    for dir in folders {
        let manifest = folder::read_json::<ShardManifest>(&dir.join(MANIFEST_FILE))?.ok_or_else(|| {
            Error::Shards(format!(
                "{} is incomplete: its job has not finished (no {MANIFEST_FILE}); rerun it with the same command plus \
                 --resume",
                dir.display()
            ))
        })?;
        shards.push((dir.clone(), manifest));
    }
    shards.sort_by_key(|(_, manifest)| manifest.record.shard.index);
    check_one_study(&shards)?;
    let first = &shards[0].1.record;
    if first.study.retrylab_version != env!("CARGO_PKG_VERSION") {
        return Err(Error::Shards(format!(
            "the shards were run by retrylab {}, and this is retrylab {}: merge with the build that ran them, which \
             plans and aggregates the sweep the same way",
            first.study.retrylab_version,
            env!("CARGO_PKG_VERSION")
        )));
    }
    let mut scenario =
        Scenario::with_overrides(Path::new(&first.scenario_path), first.scenario_text.clone(), &first.study.overrides)?;
    scenario.seed = first.study.master_seed;
    scenario.replicates = first.study.replicates;
    let points = plan(&scenario)?;
    if points.len() != first.study.points {
        return Err(Error::Shards(format!(
            "the stored scenario gives {} points with this build, but the shards ran {}",
            points.len(),
            first.study.points
        )));
    }
    check_every_shard_once(&shards, &points)?;
    let runs = gather_runs(&shards, &scenario, &points)?;
    Ok(Merged { scenario, points, runs, shards })
}

fn check_one_study(shards: &[(PathBuf, ShardManifest)]) -> Result<(), Error> {
    let (first_dir, first) = &shards[0];
    let mut problems = Vec::new();
    for (dir, manifest) in &shards[1..] {
        let mut differences = first.record.study.differences(&manifest.record.study);
        let (a, b) = (&first.record.shard, &manifest.record.shard);
        if (a.count, a.by) != (b.count, b.by) {
            differences.push(format!("{} shards by {} vs {} shards by {}", a.count, a.by, b.count, b.by));
        }
        if !differences.is_empty() {
            problems.push(format!("  {}: {}", dir.display(), differences.join("; ")));
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(Error::Shards(format!(
        "these shards come from different studies (first {}, then this shard's):\n{}\nmerge only shards of one study: the \
         same scenario file, --set overrides, seed, replicates and retrylab version",
        first_dir.display(),
        problems.join("\n")
    )))
}

/// Each shard index of the layout exactly once; a refusal names the missing or repeated shards and the runs they
/// hold.
fn check_every_shard_once(shards: &[(PathBuf, ShardManifest)], points: &[PlannedPoint]) -> Result<(), Error> {
    let spec = shards[0].1.record.shard;
    let replicates = shards[0].1.record.study.replicates;
    let mut by_index: BTreeMap<u32, Vec<&Path>> = BTreeMap::new();
    for (dir, manifest) in shards {
        by_index.entry(manifest.record.shard.index).or_default().push(dir);
    }
    let mut message = String::new();
    for (index, dirs) in by_index.iter().filter(|(_, dirs)| dirs.len() > 1) {
        let places: Vec<String> = dirs.iter().map(|dir| dir.display().to_string()).collect();
        let _ = writeln!(message, "shard {index}/{} is given {} times: {}", spec.count, dirs.len(), places.join(", "));
    }
    let missing: Vec<u32> = (0..spec.count).filter(|index| !by_index.contains_key(index)).collect();
    if !missing.is_empty() {
        let record = &shards[0].1.record;
        let listed = listed(missing.iter().map(|index| format!("{index}/{}", spec.count)));
        let _ = writeln!(message, "missing {} of {} shards: {listed}", missing.len(), spec.count);
        let mut command = format!("retrylab run {} --shard {}/{}", record.scenario_path, missing[0], spec.count);
        if spec.by != super::ShardBy::Runs {
            command.push_str(&format!(" --shard-by {}", spec.by));
        }
        for set in &record.study.overrides {
            command.push_str(&format!(" --set '{set}'"));
        }
        let shards_dir = shards[0].0.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let _ = writeln!(
            message,
            "run each missing one with the same seed and replicates, into the same folder, e.g. `{command} --seed {} \
             --replicates {} --out {} --resume`, then merge again",
            record.study.master_seed,
            record.study.replicates,
            shards_dir.display()
        );
    }
    if message.is_empty() {
        return Ok(());
    }
    let mut seen = vec![0u32; points.len() * replicates as usize];
    for (_, manifest) in shards {
        for point in points {
            for r in manifest.record.shard.replicates_of(point.index, replicates) {
                seen[point.index * replicates as usize + r as usize] += 1;
            }
        }
    }
    let message = message.trim_end().to_owned() + &coverage_problems(&seen, points, replicates).unwrap_or_default();
    Err(Error::Shards(message))
}

/// Loads every shard's point files, checks each against the plan, and checks that together they hold every run
/// of the sweep exactly once.
fn gather_runs(
    shards: &[(PathBuf, ShardManifest)],
    scenario: &Scenario,
    points: &[PlannedPoint],
) -> Result<Vec<Run>, Error> {
    let replicates = scenario.replicates;
    let mut runs = Vec::with_capacity(points.len() * replicates as usize);
    for (dir, manifest) in shards {
        let record = &manifest.record;
        let fingerprint = record.study.fingerprint(&record.shard);
        let owned: Vec<&PlannedPoint> =
            points.iter().filter(|point| !record.shard.replicates_of(point.index, replicates).is_empty()).collect();
        let owned_ids: Vec<String> = owned.iter().map(|point| point.id()).collect();
        if owned_ids != manifest.point_ids {
            return Err(Error::Results {
                path: dir.join(MANIFEST_FILE),
                message: format!(
                    "lists other points than shard {} owns with this build's plan of the scenario",
                    record.shard
                ),
            });
        }
        for point in owned {
            let path = folder::point_path(dir, point);
            let bad = |message: String| Error::Results { path: path.clone(), message };
            let bytes = std::fs::read(&path).map_err(|source| {
                bad(format!("cannot read ({source}); the shard is incomplete: rerun it with --resume"))
            })?;
            let stored = codec::decode(&bytes).map_err(|problem| bad(format!("{problem}; rerun the shard")))?;
            if stored.fingerprint != fingerprint || stored.point != point.index || stored.point_hash != point.hash {
                return Err(bad("belongs to another study, shard or point".into()));
            }
            let expected = record.shard.replicates_of(point.index, replicates);
            let got: Vec<u32> = stored.runs.iter().map(|run| run.replicate).collect();
            if got != expected {
                return Err(bad(format!("holds replicates {got:?}, but the shard owns {expected:?}")));
            }
            if let Some(run) =
                stored.runs.iter().find(|run| run.seed != replicate_seed(scenario.seed, point.hash, run.replicate))
            {
                return Err(bad(format!(
                    "replicate {} has seed {}, not the one its point gives",
                    run.replicate, run.seed
                )));
            }
            runs.extend(stored.runs);
        }
    }
    runs.sort_by_key(|run| (run.point, run.replicate));
    check_coverage(&runs, points, replicates)?;
    Ok(runs)
}

/// Every (point, replicate) exactly once; otherwise the message lists the points with missing or repeated runs.
fn check_coverage(runs: &[Run], points: &[PlannedPoint], replicates: u32) -> Result<(), Error> {
    let mut seen = vec![0u32; points.len() * replicates as usize];
    for run in runs {
        seen[run.point * replicates as usize + run.replicate as usize] += 1;
    }
    match coverage_problems(&seen, points, replicates) {
        None => Ok(()),
        Some(problems) => Err(Error::Shards(format!("the shards do not hold every run exactly once{problems}"))),
    }
}

/// Lines listing the points whose runs are missing (`seen` 0) or repeated (`seen` > 1); `None` when none are.
/// `seen` counts each (point, replicate), point-major.
fn coverage_problems(seen: &[u32], points: &[PlannedPoint], replicates: u32) -> Option<String> {
    let describe = |wanted: fn(u32) -> bool| -> Vec<String> {
        points
            .iter()
            .filter_map(|point| {
                let slots = &seen[point.index * replicates as usize..][..replicates as usize];
                let odd: Vec<String> =
                    (0..replicates).filter(|&r| wanted(slots[r as usize])).map(|r| r.to_string()).collect();
                (!odd.is_empty())
                    .then(|| format!("point {} ({}) replicates {}", point.index, point.id(), odd.join(" ")))
            })
            .collect()
    };
    let missing = describe(|count| count == 0);
    let repeated = describe(|count| count > 1);
    let mut text = String::new();
    if !missing.is_empty() {
        let _ = write!(text, "\nmissing runs of {} points: {}", missing.len(), listed(missing.into_iter()));
    }
    if !repeated.is_empty() {
        let _ = write!(text, "\nrepeated runs of {} points: {}", repeated.len(), listed(repeated.into_iter()));
    }
    (!text.is_empty()).then_some(text)
}

/// At most [`LIST_AT_MOST`] items joined by ", ", then how many more there are.
fn listed(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    let shown = items.iter().take(LIST_AT_MOST).cloned().collect::<Vec<_>>().join(", ");
    match items.len().saturating_sub(LIST_AT_MOST) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}
