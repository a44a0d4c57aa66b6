//! Gathering complete shard folders back into one sweep: every shard of one study, each exactly once, every run
//! present exactly once with the seed its point and replicate give. Anything else is refused with a message that
//! lists what is missing, duplicated or different, before a single output file is written.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::codec;
use super::folder::{self, MANIFEST_FILE, STUDY_FILE, ShardManifest};
use crate::Error;
use crate::scenario::{PlannedPoint, Scenario, plan};
use crate::sweep::{PointTimelines, Swept};

/// Most items a refusal lists before it says "and N more".
const LIST_AT_MOST: usize = 12;

/// The merged sweep, ready for `report::write_results`.
pub(crate) struct Merged {
    pub scenario: Scenario,
    pub points: Vec<PlannedPoint>,
    /// The runs ordered by (point, replicate), and every point's timelines.
    pub swept: Swept,
    /// The shard manifests, by shard index.
    pub shards: Vec<(PathBuf, ShardManifest)>,
}

/// The shard folders named by `dirs`: each is a shard folder itself (it has `study.json`), or holds shard folders
/// one level down.
pub(crate) fn find_shard_folders(dirs: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
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
pub(crate) fn merge(folders: &[PathBuf]) -> Result<Merged, Error> {
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
    let swept = gather_runs(&shards, &scenario, &points)?;
    Ok(Merged { scenario, points, swept, shards })
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
        "these shards do not belong together (first {}, then this shard's):\n{}\nmerge only the shards of one run: \
         the same scenario file, --set overrides, seed, replicates, retrylab version and --shard N and --shard-by",
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
    let missing = (0..spec.count).filter(|index| !by_index.contains_key(index));
    if let Some(first_missing) = missing.clone().next() {
        let record = &shards[0].1.record;
        let (count, listed) = listed(missing, |index| format!("{index}/{}", spec.count));
        let _ = writeln!(message, "missing {count} of {} shards: {listed}", spec.count);
        let mut command = format!("retrylab run {} --shard {first_missing}/{}", record.scenario_path, spec.count);
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
    let owned = shards
        .iter()
        .flat_map(|(_, manifest)| manifest.record.shard.work(points.len(), replicates))
        .flat_map(|share| share.replicates.into_iter().map(move |replicate| (share.point, replicate)));
    let problems = coverage_problems(&count_runs(owned, points.len(), replicates), points, replicates);
    Err(Error::Shards(message.trim_end().to_owned() + &problems.unwrap_or_default()))
}

/// Loads every shard's point files and checks each against the plan: that it holds exactly the replicates its
/// shard owns. With every shard of the layout present once (checked before), that is every run exactly once,
/// since the ownership rule partitions the runs (`ShardSpec::replicates_of`).
fn gather_runs(
    shards: &[(PathBuf, ShardManifest)],
    scenario: &Scenario,
    points: &[PlannedPoint],
) -> Result<Swept, Error> {
    let replicates = scenario.replicates;
    let mut swept = Swept {
        runs: Vec::with_capacity(points.len() * replicates as usize),
        timelines: vec![PointTimelines::default(); points.len()],
    };
    for (dir, manifest) in shards {
        let record = &manifest.record;
        let fingerprint = record.study.fingerprint(&record.shard);
        let owned = record.shard.owned_points(points, replicates);
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
            let stored =
                codec::decode(&bytes).map_err(|problem| bad(format!("{problem}; rerun the shard with --resume")))?;
            if stored.fingerprint != fingerprint {
                return Err(bad("belongs to another study or shard layout".into()));
            }
            folder::check_point(&stored, point, record.shard, &record.study, scenario.model).map_err(bad)?;
            swept.runs.extend(stored.runs);
            swept.timelines[stored.point].merge(&stored.timelines);
        }
    }
    swept.runs.sort_by_key(|run| (run.point, run.replicate));
    Ok(swept)
}

/// How often each (point, replicate) occurs in `runs`, point-major.
fn count_runs(runs: impl Iterator<Item = (usize, u32)>, points: usize, replicates: u32) -> Vec<u32> {
    let mut seen = vec![0u32; points * replicates as usize];
    for (point, replicate) in runs {
        seen[point * replicates as usize + replicate as usize] += 1;
    }
    seen
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
        let (count, listed) = listed(missing.into_iter(), |line| line);
        let _ = write!(text, "\nmissing runs of {count} points: {listed}");
    }
    if !repeated.is_empty() {
        let (count, listed) = listed(repeated.into_iter(), |line| line);
        let _ = write!(text, "\nrepeated runs of {count} points: {listed}");
    }
    (!text.is_empty()).then_some(text)
}

/// How many `items` there are, and the first [`LIST_AT_MOST`] of them shown and joined by ", " (then "and N
/// more"); only those are formatted, so a huge list costs no memory.
fn listed<T>(items: impl Iterator<Item = T>, show: impl Fn(T) -> String) -> (usize, String) {
    let mut shown = Vec::new();
    let mut count = 0;
    for item in items {
        if count < LIST_AT_MOST {
            shown.push(show(item));
        }
        count += 1;
    }
    let text = shown.join(", ");
    match count.saturating_sub(LIST_AT_MOST) {
        0 => (count, text),
        more => (count, format!("{text} and {more} more")),
    }
}
