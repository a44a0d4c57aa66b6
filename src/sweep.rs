//! Runs every (point, replicate) pair of a sweep in parallel. Each pair's seeds come from the master seed, the
//! point's parameter hashes and the replicate number, and results are collected in canonical order, so the outputs
//! do not depend on the number of threads or on scheduling.
//!
//! A run's timeline is added into its point's [`PointTimelines`] as the run ends and then dropped, so a sweep's
//! memory grows with its points, not with its replicates. The sums are exact, so the order runs end in does not
//! matter.

use std::sync::Mutex;
use std::sync::atomic::AtomicUsize;

use rayon::prelude::*;

use crate::model::{ModelKind, RunOutput, RunSettings};
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
    /// Events after which a run stops and is reported as truncated (`None`: [`crate::model::event_cap`]'s default).
    pub max_events_per_run: Option<u64>,
    /// The flag that stops the sweep (see [`crate::interrupt::check_flag`]): the process's signal, or a lab run's.
    pub stop: &'static AtomicUsize,
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
            stop: &crate::interrupt::SIGNAL,
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

/// Called once per finished point with its runs and summed timelines (to store a checkpoint); its first error
/// stops the sweep.
pub type OnPointDone<'a> = dyn Fn(&[Run], &PointTimelines) -> Result<(), crate::Error> + Sync + 'a;

/// What a sweep (or a share of one) produced: the runs, their timelines already added into their points.
#[derive(Debug, Default)]
pub struct Swept {
    /// Ordered by (point, replicate); every `output.timeline` is empty (it is in `timelines`).
    pub runs: Vec<Run>,
    /// One per planned point, indexed by point (empty for points with no run here).
    pub timelines: Vec<PointTimelines>,
}

impl Swept {
    /// Adds `other`'s runs and timelines (runs of other replicates), keeping the runs in (point, replicate) order.
    pub fn absorb(&mut self, other: Swept) {
        self.runs.extend(other.runs);
        self.runs.sort_by_key(|run| (run.point, run.replicate));
        if self.timelines.len() < other.timelines.len() {
            self.timelines.resize_with(other.timelines.len(), PointTimelines::default);
        }
        for (mine, theirs) in self.timelines.iter_mut().zip(&other.timelines) {
            mine.merge(theirs);
        }
    }
}

/// Fixed point of the timeline sums: 2^-64. Counts (whole numbers below 2^63) add exactly, and so do fractions down
/// to 2^-11 with a full 53-bit mantissa; smaller ones round once, the same way whatever the order.
const FIXED_POINT_ONE: f64 = 18_446_744_073_709_551_616.0;

/// The exact sum of some runs' timelines, bucket-major, as 2^-64 fixed point (a run with fewer buckets adds 0).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimelineSum {
    pub runs: u32,
    pub sums: Vec<i128>,
}

impl TimelineSum {
    fn add(&mut self, timeline: &[f64]) {
        self.runs += 1;
        if self.sums.len() < timeline.len() {
            self.sums.resize(timeline.len(), 0);
        }
        for (sum, value) in self.sums.iter_mut().zip(timeline) {
            *sum = sum.saturating_add((value * FIXED_POINT_ONE).round() as i128);
        }
    }

    fn merge(&mut self, other: &TimelineSum) {
        self.runs += other.runs;
        if self.sums.len() < other.sums.len() {
            self.sums.resize(other.sums.len(), 0);
        }
        for (sum, value) in self.sums.iter_mut().zip(&other.sums) {
            *sum = sum.saturating_add(*value);
        }
    }

    /// The mean over the runs (0 runs: the sums themselves, which are then 0).
    pub fn mean(&self) -> Vec<f64> {
        let runs = f64::from(self.runs.max(1));
        self.sums.iter().map(|&sum| sum as f64 / FIXED_POINT_ONE / runs).collect()
    }
}

/// A point's timelines summed over its replicates, apart by the model's outcome metric
/// ([`ModelKind::outcome_metric`]): the runs where it is 1, those where it is 0, and the rest (undefined, or a
/// model without one).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PointTimelines {
    pub by_outcome: [TimelineSum; 3],
}

impl PointTimelines {
    /// The timelines of `runs` (whole, as [`run_sweep`] returns them) summed by point.
    pub fn of_runs(model: ModelKind, point_count: usize, runs: &[Run]) -> Vec<PointTimelines> {
        let mut timelines = vec![PointTimelines::default(); point_count];
        for run in runs {
            timelines[run.point].add(&run.output, model.outcome_metric());
        }
        timelines
    }

    /// Adds a finished run's timeline; `outcome` is the model's outcome metric.
    pub fn add(&mut self, output: &RunOutput, outcome: Option<usize>) {
        let group = match outcome.map(|metric| output.metrics[metric]) {
            Some(1.0) => 0,
            Some(0.0) => 1,
            _ => 2,
        };
        self.by_outcome[group].add(&output.timeline);
    }

    pub fn merge(&mut self, other: &PointTimelines) {
        for (mine, theirs) in self.by_outcome.iter_mut().zip(&other.by_outcome) {
            mine.merge(theirs);
        }
    }

    /// Every run together.
    pub fn all(&self) -> TimelineSum {
        let mut all = TimelineSum::default();
        self.by_outcome.iter().for_each(|group| all.merge(group));
        all
    }

    /// Runs added.
    pub fn runs(&self) -> u32 {
        self.by_outcome.iter().map(|group| group.runs).sum()
    }
}

/// Runs all pairs, calling `on_done` once per finished run (from any thread), and returns the runs ordered by
/// (point, replicate), each with its whole timeline (for a library caller that wants them per run; the CLI folds
/// them as they end, with [`run_work`]).
pub fn run_sweep(
    points: &[PlannedPoint],
    settings: SweepSettings,
    on_done: &(dyn Fn() + Sync),
) -> Result<Vec<Run>, crate::Error> {
    let work: Vec<PointWork> =
        (0..points.len()).map(|point| PointWork { point, replicates: (0..settings.replicates).collect() }).collect();
    Ok(execute(points, &work, settings, on_done, &|_, _| Ok(()), false)?.runs)
}

/// Runs the given share of a sweep, adding each run's timeline into its point's as it ends. `on_run_done` is called
/// once per finished run and `on_point_done` once per finished point with its runs and timelines (both from any
/// thread; the latter stores checkpoints, and its first error stops the sweep). The runs come back ordered by
/// (point, replicate) when `work` is ordered by point. Once a signal asks the process to stop
/// ([`crate::interrupt`]), no run starts and no point is stored, and the sweep ends with [`crate::Error::Interrupted`].
pub fn run_work(
    points: &[PlannedPoint],
    work: &[PointWork],
    settings: SweepSettings,
    on_run_done: &(dyn Fn() + Sync),
    on_point_done: &OnPointDone<'_>,
) -> Result<Swept, crate::Error> {
    execute(points, work, settings, on_run_done, on_point_done, true)
}

fn execute(
    points: &[PlannedPoint],
    work: &[PointWork],
    settings: SweepSettings,
    on_run_done: &(dyn Fn() + Sync),
    on_point_done: &OnPointDone<'_>,
    fold: bool,
) -> Result<Swept, crate::Error> {
    let folds: Vec<Mutex<PointTimelines>> = points.iter().map(|_| Mutex::default()).collect();
    let run_point = |share: &PointWork| -> Result<Vec<Run>, crate::Error> {
        let planned = &points[share.point];
        let outcome = planned.config.kind().outcome_metric();
        let runs: Vec<Run> = share
            .replicates
            .par_iter()
            .map(|&replicate| {
                crate::interrupt::check_flag(settings.stop)?;
                let seeds = planned.seeds(settings.master_seed, replicate);
                let run = RunSettings {
                    seeds,
                    bucket: settings.timeline_bucket,
                    max_events: crate::model::event_cap(settings.max_events_per_run, &planned.config),
                    trace: false,
                    stop: settings.stop,
                };
                let mut output = planned.config.simulate(run);
                if fold {
                    folds[share.point].lock().unwrap_or_else(|poisoned| poisoned.into_inner()).add(&output, outcome);
                    output.timeline = Vec::new();
                }
                on_run_done();
                Ok(Run { point: share.point, replicate, seed: seeds.policy, output })
            })
            .collect::<Result<_, crate::Error>>()?;
        // A signal may have cut one of these runs short: once one has come, no point is stored.
        crate::interrupt::check_flag(settings.stop)?;
        on_point_done(&runs, &folds[share.point].lock().unwrap_or_else(|poisoned| poisoned.into_inner()))?;
        Ok(runs)
    };
    let work = || -> Result<Vec<Run>, crate::Error> {
        let per_point: Vec<Vec<Run>> = work.par_iter().map(run_point).collect::<Result<_, _>>()?;
        Ok(per_point.into_iter().flatten().collect())
    };
    let runs = match settings.threads {
        Some(threads) => rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| crate::Error::Threads(e.to_string()))?
            .install(work),
        None => work(),
    }?;
    let timelines =
        folds.into_iter().map(|fold| fold.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner())).collect();
    Ok(Swept { runs, timelines })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(timeline: Vec<f64>, outcome: f64) -> RunOutput {
        RunOutput {
            metrics: vec![outcome],
            timeline,
            events: 0,
            truncated: false,
            latency: None,
            highlights: Vec::new(),
            spans: Vec::new(),
        }
    }

    #[test]
    fn summed_timelines_do_not_depend_on_the_order_runs_end_in() {
        let runs = [vec![0.1, 7.0, 1e-9], vec![0.2, 3.0], vec![0.3, 1.0, 2.5, 1.0 / 3.0]];
        let mut forward = PointTimelines::default();
        let mut backward = PointTimelines::default();
        runs.iter().for_each(|timeline| forward.add(&output(timeline.clone(), f64::NAN), None));
        runs.iter().rev().for_each(|timeline| backward.add(&output(timeline.clone(), f64::NAN), None));
        assert_eq!(forward, backward);
        let bits = |values: Vec<f64>| values.into_iter().map(f64::to_bits).collect::<Vec<_>>();
        assert_eq!(bits(forward.all().mean()), bits(backward.all().mean()));
        // Counts are exact: the mean is what adding the f64s in any order gives.
        assert_eq!(forward.all().mean()[1], (7.0 + 3.0 + 1.0) / 3.0);
        // Fractions round once, to within an ulp of the sum in f64.
        assert!((forward.all().mean()[0] - 0.2).abs() < 1e-16);
    }

    #[test]
    fn runs_are_summed_apart_by_outcome_and_together_in_all() {
        let mut timelines = PointTimelines::default();
        timelines.add(&output(vec![2.0, 4.0], 1.0), Some(0));
        timelines.add(&output(vec![6.0], 0.0), Some(0));
        timelines.add(&output(vec![1.0, 1.0, 1.0], f64::NAN), Some(0));
        let [yes, no, neither] = &timelines.by_outcome;
        assert_eq!((yes.runs, no.runs, neither.runs, timelines.runs()), (1, 1, 1, 3));
        assert_eq!(yes.mean(), vec![2.0, 4.0]);
        assert_eq!(no.mean(), vec![6.0]);
        assert_eq!(timelines.all().mean(), vec![3.0, 5.0 / 3.0, 1.0 / 3.0]);
        let mut merged = PointTimelines::default();
        merged.merge(&timelines);
        merged.merge(&timelines);
        assert_eq!(merged.all().mean(), timelines.all().mean());
        assert_eq!(merged.runs(), 6);
    }
}
