//! Runs every (point, replicate) pair of a sweep in parallel. Each pair's seeds come from the master seed, the
//! point's parameter hashes and the replicate number, and results are collected in canonical order, so the outputs
//! do not depend on the number of threads or on scheduling.

use rayon::prelude::*;

use crate::model::{RunOutput, RunSettings};
use crate::scenario::{PlannedPoint, Scenario};
use crate::time::SimDuration;

/// One finished replicate.
#[derive(Debug, Clone)]
pub struct Run {
    /// Index into the planned points.
    pub point: usize,
    pub replicate: u32,
    /// The policy's seed (the world's follows from the point and the replicate).
    pub seed: u64,
    pub output: RunOutput,
}

/// What the runner needs to know about a sweep.
#[derive(Clone, Copy, Debug)]
pub struct SweepSettings {
    pub master_seed: u64,
    pub replicates: u32,
    pub timeline_bucket: SimDuration,
    /// Worker threads; `None` uses every core.
    pub threads: Option<usize>,
    /// Events after which a run stops and is reported as truncated.
    pub max_events_per_run: u64,
}

impl SweepSettings {
    /// The settings a scenario asks for, on `threads` worker threads (`None`: every core).
    pub fn for_scenario(scenario: &Scenario, threads: Option<usize>) -> Self {
        SweepSettings {
            master_seed: scenario.seed,
            replicates: scenario.replicates,
            timeline_bucket: scenario.timeline_bucket,
            threads,
            max_events_per_run: scenario.max_events_per_run,
        }
    }
}

/// One point's share of a sweep: the replicates of it to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointWork {
    /// Index into the planned points.
    pub point: usize,
    /// Ascending.
    pub replicates: Vec<u32>,
}

/// Runs all pairs, calling `on_done` once per finished run (from any thread), and returns the runs ordered by
/// (point, replicate).
pub fn run_sweep(
    points: &[PlannedPoint],
    settings: SweepSettings,
    on_done: &(dyn Fn() + Sync),
) -> Result<Vec<Run>, crate::Error> {
    let work: Vec<PointWork> =
        (0..points.len()).map(|point| PointWork { point, replicates: (0..settings.replicates).collect() }).collect();
    run_work(points, &work, settings, on_done, &|_| Ok(()))
}

/// Runs the given share of a sweep. `on_run_done` is called once per finished run and `on_point_done` once per
/// finished point with its runs (both from any thread; the latter stores checkpoints, and its first error stops
/// the sweep). Returns the runs ordered by (point, replicate) when `work` is ordered by point.
pub fn run_work(
    points: &[PlannedPoint],
    work: &[PointWork],
    settings: SweepSettings,
    on_run_done: &(dyn Fn() + Sync),
    on_point_done: &(dyn Fn(&[Run]) -> Result<(), crate::Error> + Sync),
) -> Result<Vec<Run>, crate::Error> {
    let run_point = |share: &PointWork| -> Result<Vec<Run>, crate::Error> {
        let planned = &points[share.point];
        let runs: Vec<Run> = share
            .replicates
            .par_iter()
            .map(|&replicate| {
                let seeds = planned.seeds(settings.master_seed, replicate);
                let run = RunSettings {
                    seeds,
                    bucket: settings.timeline_bucket,
                    max_events: settings.max_events_per_run,
                    trace: false,
                };
                let output = planned.config.simulate(run);
                on_run_done();
                Run { point: share.point, replicate, seed: seeds.policy, output }
            })
            .collect();
        on_point_done(&runs)?;
        Ok(runs)
    };
    let work = || -> Result<Vec<Run>, crate::Error> {
        let per_point: Vec<Vec<Run>> = work.par_iter().map(run_point).collect::<Result<_, _>>()?;
        Ok(per_point.into_iter().flatten().collect())
    };
    match settings.threads {
        Some(threads) => rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| crate::Error::Threads(e.to_string()))?
            .install(work),
        None => work(),
    }
}
