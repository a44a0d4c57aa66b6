//! Running a sweep (or one shard of it) with a checkpoint per finished point, and `retrylab merge`.
//!
//! Every run keeps its finished points in a shard folder as it goes: a sharded run in `shard-I-of-N/`, which
//! `merge` reads; an unsharded run in `<out>/.retrylab-checkpoint/` (the whole sweep as shard 0/1), removed once
//! the results are written. `--resume` starts from what such a folder already holds.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use super::{RunOptions, default_out_dir, progress_bar};
use crate::budget::{self, Bytes, MemoryEstimate};
use crate::report::{self, RunInfo, atomic};
use crate::scenario::{PlannedPoint, Scenario};
use crate::shard::folder::STUDY_FILE;
use crate::shard::folder::StudyRecord;
use crate::shard::merge::{find_shard_folders, merge as merge_shards};
use crate::shard::{CHECKPOINT_DIR, ShardFolder, ShardManifest, ShardSpec, Study};
use crate::sweep::{PointTimelines, PointWork, Run, SweepSettings, run_work};
use crate::{Error, interrupt};

/// Runs one scenario's sweep, or its shard's part (`options.shard`), into `out` (the results folder, or the shard
/// folder).
pub(super) fn run_one(
    scenario: &Scenario,
    points: &[PlannedPoint],
    out: &Path,
    options: &RunOptions,
    stdout: &mut dyn Write,
) -> Result<(), Error> {
    let shard = options.shard.unwrap_or(ShardSpec::WHOLE);
    let (folder_dir, record) = checkpoint(scenario, points, out, options);
    let (folder, mut swept) = ShardFolder::open(&folder_dir, record, options.resume, points, scenario.model)?;
    let done: HashSet<usize> = swept.runs.iter().map(|run| run.point).collect();
    let owned = shard.work(points.len(), scenario.replicates);
    if options.resume && !options.quiet {
        let _ = match done.len() {
            0 => writeln!(stdout, "{}: nothing to resume in {}", scenario.name, folder.dir.display()),
            done => writeln!(
                stdout,
                "{}: resuming from {}: {done} of {} points already done",
                scenario.name,
                folder.dir.display(),
                owned.len()
            ),
        };
    }
    if owned.is_empty() {
        eprintln!(
            "note: shard {shard} owns no runs of this sweep ({} in all); it writes an empty shard, which merge still \
             expects",
            points.len() * scenario.replicates as usize
        );
    }
    let work: Vec<PointWork> = owned.iter().filter(|share| !done.contains(&share.point)).cloned().collect();
    let total: u64 = work.iter().map(|share| share.replicates.len() as u64).sum();
    let label = match options.shard {
        Some(shard) => format!("{} {shard}", scenario.name),
        None => scenario.name.clone(),
    };
    let bar = progress_bar(total, &label, options.quiet);
    let started = Instant::now();
    let settings = SweepSettings::for_scenario(scenario, options.threads);
    let saved = AtomicUsize::new(0);
    let save = |point_runs: &[Run], timelines: &PointTimelines| {
        folder.save_point(&points[point_runs[0].point], point_runs, timelines)?;
        saved.fetch_add(1, Ordering::Relaxed);
        Ok(())
    };
    // A signal ends the run with what the checkpoint holds and how to go on.
    let kept = |error: Error| match error {
        Error::Interrupted { signal, .. } => Error::Interrupted {
            signal,
            message: format!(
                "{}: interrupted by {}; kept {} of {} points in {}",
                label,
                interrupt::name(signal),
                done.len() + saved.load(Ordering::Relaxed),
                owned.len(),
                folder.dir.display()
            ),
            resumable: true,
        },
        other => other,
    };
    let fresh = run_work(points, &work, settings, &|| bar.inc(1), &save).map_err(|error| {
        bar.finish_and_clear();
        kept(error)
    })?;
    bar.finish_and_clear();
    let elapsed_s = started.elapsed().as_secs_f64();
    let threads = options.threads.unwrap_or_else(rayon::current_num_threads);
    let timing = match fresh.runs.len() {
        0 => "all stored already".to_owned(),
        ran => format!(
            "{ran} simulated now in {elapsed_s:.2} s, {:.1} M events/s on {threads} threads",
            fresh.runs.iter().map(|run| run.output.events).sum::<u64>() as f64 / elapsed_s.max(1e-9) / 1e6
        ),
    };
    let estimate = MemoryEstimate::of(scenario, &shard.owned_points(points, scenario.replicates), threads);
    let timing = match budget::peak_resident() {
        Some(peak) => format!("{timing}; peak memory {}, estimated {}", Bytes(peak), Bytes(estimate.peak_bytes)),
        None => timing,
    };
    swept.absorb(fresh);
    let runs = &swept.runs;
    let truncated = runs.iter().filter(|run| run.output.truncated).count();
    warn_truncated(scenario, truncated, runs.len());
    if let Some(shard) = options.shard {
        let manifest = ShardManifest {
            record: folder.record.clone(),
            point_ids: owned.iter().map(|share| points[share.point].id()).collect(),
            runs: runs.len(),
            events: runs.iter().map(|run| run.output.events).sum(),
            truncated_runs: truncated,
            threads,
            elapsed_s,
            command_line: std::env::args().collect(),
        };
        folder.finish(&manifest)?;
        if !options.quiet {
            let shards_dir = out.parent().unwrap_or(out);
            let _ = writeln!(stdout, "{label}: {} points, {} runs ({timing})", owned.len(), runs.len());
            let _ = writeln!(
                stdout,
                "wrote shard {shard} to {}; when every shard is done: retrylab merge {}",
                out.display(),
                shards_dir.display()
            );
        }
        return Ok(());
    }
    let aggregate = report::aggregate_swept(scenario.model, &swept);
    let info = RunInfo { threads, elapsed_s, overrides: options.set.clone(), shards: None, emulation: None };
    let written = report::write_results(scenario, points, runs, &aggregate, &info, out).map_err(|error| {
        if let Error::Write { .. } | Error::Chart { .. } = error {
            eprintln!(
                "note: {} was left as it was; the {} finished points stay in {}, and the same command with --resume \
                 writes the results from them without running them again",
                out.display(),
                owned.len(),
                folder.dir.display()
            );
        }
        kept(error)
    })?;
    folder.remove()?;
    let warnings = report::backlog_warnings(scenario, points, &aggregate);
    warn_backlog(scenario, &warnings);
    if !options.quiet {
        let _ = writeln!(
            stdout,
            "{}: {} points × {} replicates, {} events ({timing}){}",
            scenario.name,
            points.len(),
            scenario.replicates,
            aggregate.events,
            warning_count(&warnings),
        );
        let _ = writeln!(stdout, "wrote {} files to {}", written.len(), out.display());
    }
    Ok(())
}

/// Where a run of `scenario` into `out` keeps its finished points, and the study it records there: the shard
/// folder itself for a shard, else `<out>/.retrylab-checkpoint/` as shard 0/1.
pub(super) fn checkpoint(
    scenario: &Scenario,
    points: &[PlannedPoint],
    out: &Path,
    options: &RunOptions,
) -> (PathBuf, StudyRecord) {
    let shard = options.shard.unwrap_or(ShardSpec::WHOLE);
    let dir = if options.shard.is_some() { out.to_owned() } else { out.join(CHECKPOINT_DIR) };
    (dir, StudyRecord::new(scenario, Study::of(scenario, points.len(), &options.set), shard))
}

/// Each backlog warning on stderr, as manifest.json's `warnings` holds it.
fn warn_backlog(scenario: &Scenario, warnings: &[String]) {
    for warning in warnings {
        eprintln!("warning: {}: {warning}", scenario.name);
    }
}

/// The summary line's note of the warnings, if any: `; 2 warnings (above, and in manifest.json)`.
fn warning_count(warnings: &[String]) -> String {
    match warnings.len() {
        0 => String::new(),
        1 => "; 1 warning (above, and in manifest.json)".to_owned(),
        n => format!("; {n} warnings (above, and in manifest.json)"),
    }
}

fn warn_truncated(scenario: &Scenario, truncated: usize, runs: usize) {
    if truncated > 0 {
        let cap = scenario.max_events_per_run.map_or("its default".to_owned(), |cap| cap.to_string());
        eprintln!(
            "warning: {}: {truncated} of {runs} runs stopped at max_events_per_run = {cap} with work still pending \
             (an unstable system?); their metrics cover only the simulated part, and runs.csv marks them truncated = \
             1",
            scenario.name
        );
    }
}

/// `retrylab merge`: joins complete shard folders (or folders holding them) into one results folder, `out` or
/// `results/<scenario stem>/`, with CSV and charts byte-identical to the unsharded run's.
pub fn merge(dirs: &[PathBuf], out: Option<&Path>, quiet: bool, stdout: &mut dyn Write) -> Result<(), Error> {
    let not_a_shard_folder = |out: &Path| {
        if out.join(STUDY_FILE).exists() {
            return Err(Error::Usage(format!(
                "--out {} is a shard folder; write the merged results somewhere else (default: results/<stem>/)",
                out.display()
            )));
        }
        Ok(())
    };
    if let Some(out) = out {
        not_a_shard_folder(out)?;
        super::check_output_path("--out", out, super::OutputKind::Folder)?;
    }
    let folders = find_shard_folders(dirs)?;
    let merged = merge_shards(&folders)?;
    let (scenario, points, runs) = (&merged.scenario, &merged.points, &merged.swept.runs);
    let out = out.map_or_else(|| default_out_dir(scenario), Path::to_owned);
    not_a_shard_folder(&out)?;
    let aggregate = report::aggregate_swept(scenario.model, &merged.swept);
    atomic::ensure_writable_dir(&out)?;
    let manifests = merged.shards.iter().map(|(_, manifest)| manifest);
    let info = RunInfo {
        threads: manifests.clone().map(|manifest| manifest.threads).max().unwrap_or(1),
        elapsed_s: manifests.map(|manifest| manifest.elapsed_s).sum(),
        overrides: merged.shards[0].1.record.study.overrides.clone(),
        shards: Some(merged.shards[0].1.record.shard.count),
        emulation: None,
    };
    let written = report::write_results(scenario, points, runs, &aggregate, &info, &out)?;
    warn_truncated(scenario, aggregate.truncated_runs, runs.len());
    let warnings = report::backlog_warnings(scenario, points, &aggregate);
    warn_backlog(scenario, &warnings);
    if !quiet {
        let _ = writeln!(
            stdout,
            "{}: merged {} shards ({} points × {} replicates, {} events){}",
            scenario.name,
            merged.shards.len(),
            points.len(),
            scenario.replicates,
            aggregate.events,
            warning_count(&warnings),
        );
        let _ = writeln!(stdout, "wrote {} files to {}", written.len(), out.display());
    }
    Ok(())
}
