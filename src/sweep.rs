//! Runs every (point, replicate) pair of a sweep in parallel. Each pair's seed comes from the master seed, the
//! point's parameter hash and the replicate number, and results are collected in canonical order, so the outputs
//! do not depend on the number of threads or on scheduling.

use rayon::prelude::*;

use crate::engine::{SimDuration, replicate_seed};
use crate::model::{RunOutput, RunSettings};
use crate::scenario::{PlannedPoint, Scenario};

/// One finished replicate.
#[derive(Debug, Clone)]
pub struct Run {
    /// Index into the planned points.
    pub point: usize,
    pub replicate: u32,
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

/// Runs all pairs, calling `on_done` once per finished run (from any thread), and returns the runs ordered by
/// (point, replicate).
pub fn run_sweep(
    points: &[PlannedPoint],
    settings: SweepSettings,
    on_done: &(dyn Fn() + Sync),
) -> Result<Vec<Run>, rayon::ThreadPoolBuildError> {
    let pairs: Vec<(usize, u32)> =
        (0..points.len()).flat_map(|p| (0..settings.replicates).map(move |r| (p, r))).collect();
    let work = || {
        pairs
            .par_iter()
            .map(|&(point, replicate)| {
                let planned = &points[point];
                let seed = replicate_seed(settings.master_seed, planned.hash, replicate);
                let run = RunSettings {
                    seed,
                    bucket: settings.timeline_bucket,
                    max_events: settings.max_events_per_run,
                    trace: false,
                };
                let output = planned.config.simulate(run);
                on_done();
                Run { point, replicate, seed, output }
            })
            .collect()
    };
    match settings.threads {
        Some(threads) => Ok(rayon::ThreadPoolBuilder::new().num_threads(threads).build()?.install(work)),
        None => Ok(work()),
    }
}
