//! The fluid model of one server point: the configuration's rates, laws and choices in the units the integrator
//! steps in.

use super::tables::{Law, RetryTable, service_failures, service_law};
use crate::model::distributions::TimeDistribution;
use crate::model::faults::{FaultKind, Faults};
use crate::model::server::outcome::Outcome;
use crate::model::server::{OnTimeout, ServerConfig, decide};
use crate::policy::limiters::RetryBudget;
use crate::time::{SimDuration, SimTime};
use crate::workload::Arrivals;

/// Steps one trajectory takes at most unless `--step` asks for a finer grid.
pub(crate) const MAX_STEPS: usize = 4_000_000;
/// Entries of a retry kernel's law by step, at most.
const MAX_KERNEL_STEPS: usize = 256;
/// Ring cells at most over every lane (8 bytes each): 512 MiB.
const MAX_RING_CELLS: usize = 1 << 26;

/// How the fluid is stepped.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StepSettings {
    /// The timeline's bucket; the step divides it.
    pub(crate) bucket: SimDuration,
    /// The step asked for, if any; else the largest that resolves the service, the timeout and the bucket.
    pub(crate) step: Option<SimDuration>,
    /// Arrivals, workers and queue limit are multiplied by this (and the per-request load divided by it).
    pub(crate) scale: f64,
}

/// A retry's timing on the grid: the share retried, the sleep's law by whole steps (the nearest, as
/// [`super::integrate`]'s rings round), and for counting, by bucket: `by_bucket[φ]` holds, for a decision at a step
/// φ steps into its bucket, the share sent j buckets later. Both are built from every sampled sleep, so a count per
/// bucket has no aliasing between the law's points and the grid.
#[derive(Clone, Debug)]
pub(crate) struct Kernel {
    pub(crate) retried: f64,
    pub(crate) by_step: Vec<(usize, f64)>,
    pub(crate) by_bucket: Vec<Vec<(usize, f64)>>,
}

impl Kernel {
    fn of(retried: f64, draws: &[f32], step_s: f64, steps_per_bucket: usize) -> Kernel {
        let weight = 1.0 / draws.len().max(1) as f64;
        let mut by_step: Vec<(usize, f64)> = Vec::new();
        let mut by_bucket: Vec<Vec<(usize, f64)>> = vec![Vec::new(); steps_per_bucket];
        // The draws are sorted, so each list is built in order; per phase, the draws below each bucket's end are
        // found by bisection rather than one by one.
        let positions: Vec<f64> = draws.iter().map(|&sleep| f64::from(sleep) / step_s).collect();
        // For the dynamics, each draw on its nearest step; when the law spans more than MAX_KERNEL_STEPS steps,
        // draws are gathered in groups of g whole steps, each group at its own mean (its mass and mean time kept).
        let span = positions.last().map_or(0.0, |&last| last + 0.5);
        let group = (span / MAX_KERNEL_STEPS as f64).ceil().max(1.0);
        let mut from = 0;
        while from < positions.len() {
            let key = ((positions[from] + 0.5) / group).floor();
            let to = from + positions[from..].partition_point(|&x| ((x + 0.5) / group).floor() <= key);
            let mean = positions[from..to].iter().sum::<f64>() / (to - from) as f64;
            let at = if group == 1.0 { key as usize } else { (mean + 0.5).floor() as usize };
            match by_step.last_mut() {
                Some(last) if last.0 == at => last.1 += (to - from) as f64 * weight,
                _ => by_step.push((at, (to - from) as f64 * weight)),
            }
            from = to;
        }
        for (phase, list) in by_bucket.iter_mut().enumerate() {
            let mut counted = 0;
            let mut bucket = 0;
            while counted < positions.len() {
                let end = ((bucket + 1) * steps_per_bucket) as f64 - phase as f64;
                let below = positions.partition_point(|&x| x < end);
                if below > counted {
                    list.push((bucket, (below - counted) as f64 * weight));
                    counted = below;
                }
                bucket += 1;
            }
        }
        if draws.is_empty() {
            by_step.push((0, 1.0));
            by_bucket.iter_mut().for_each(|list| list.push((0, 1.0)));
        }
        Kernel { retried, by_step, by_bucket }
    }
}

/// A server point as the fluid integrator and the regime solver read it.
#[derive(Clone, Debug)]
pub(crate) struct FluidModel {
    pub(crate) arrivals: Arrivals,
    pub(crate) scale: f64,
    /// Workers (∞ when unlimited) and queue places (∞ when unbounded), scaled.
    pub(crate) workers: f64,
    pub(crate) queue_limit: f64,
    pub(crate) service: Law,
    pub(crate) latency_per_request_s: f64,
    pub(crate) faults: Faults,
    pub(crate) on_timeout: OnTimeout,
    pub(crate) network_s: f64,
    pub(crate) timeout_s: Option<f64>,
    pub(crate) good_within_s: Option<f64>,
    pub(crate) table: RetryTable,
    pub(crate) classes: usize,
    /// The fleet's ratio budget, its reserve scaled with the fleet, fresh (as at t = 0).
    pub(crate) budget: Option<RetryBudget>,
    /// `(probability, retried)` of 502, disguised 400 and 422 after a service.
    pub(crate) service_failures: [(f64, bool); 3],
    pub(crate) success_share: f64,
    pub(crate) retry_timeouts: bool,
    pub(crate) retry_reset: bool,
    pub(crate) retry_503: bool,
    pub(crate) trigger_end: Option<SimTime>,
    pub(crate) arrivals_end: SimTime,
    pub(crate) verdict: crate::model::verdict::VerdictRule,
    // The grid:
    pub(crate) step_s: f64,
    pub(crate) steps_per_bucket: usize,
    pub(crate) network_steps: usize,
    pub(crate) timeout_steps: Option<usize>,
    pub(crate) good_within_steps: Option<f64>,
    pub(crate) arrivals_end_step: usize,
    pub(crate) max_steps: usize,
    pub(crate) ring_length: usize,
    /// Per failure kind and attempt class.
    pub(crate) kernels: [Vec<Kernel>; 2],
    /// The share of thinking clients that send in one step (closed workloads).
    pub(crate) think_share: f64,
}

impl FluidModel {
    /// The fluid model of `config` (which `support::check` has accepted) on the grid `settings` asks for.
    pub(crate) fn new(config: &ServerConfig, settings: StepSettings) -> FluidModel {
        let service = service_law(&config.service);
        let table = RetryTable::of(config);
        let network_s = match config.network {
            TimeDistribution::Constant(nanos) => nanos * 1e-9,
            _ => unreachable!("support::check refuses a random network delay"),
        };
        let service_failures = service_failures(config);
        let finite = |d: SimDuration| (d != SimDuration::MAX).then(|| d.as_secs_f64());
        let scale = settings.scale;
        let mut model = FluidModel {
            arrivals: config.workload.arrivals.clone(),
            scale,
            workers: config.workers.map_or(f64::INFINITY, |w| f64::from(w) * scale),
            queue_limit: config.queue_limit.map_or(f64::INFINITY, |k| k as f64 * scale),
            latency_per_request_s: config.latency_per_request.as_secs_f64(),
            faults: config.faults.clone(),
            on_timeout: config.on_timeout,
            network_s,
            timeout_s: config.timeout.map(|t| t.as_secs_f64()),
            good_within_s: finite(config.good_within),
            classes: table.classes,
            budget: config
                .limiter
                .as_ref()
                .and_then(super::support::fleet_budget)
                .map(|budget| budget.with_reserve_scaled(scale)),
            success_share: 1.0 - service_failures.iter().map(|(p, _)| p).sum::<f64>(),
            service_failures,
            retry_timeouts: config.retry_on.timeout,
            retry_reset: decide::retried(config, Outcome::ConnectionReset.response()),
            retry_503: decide::retried(config, Outcome::Overloaded.response()),
            trigger_end: config.trigger_end,
            arrivals_end: match config.workload.arrivals {
                Arrivals::Burst { .. } => SimTime::ZERO,
                _ => config.workload.duration,
            },
            verdict: config.verdict,
            service,
            table,
            step_s: 0.0,
            steps_per_bucket: 1,
            network_steps: 0,
            timeout_steps: None,
            good_within_steps: None,
            arrivals_end_step: 1,
            max_steps: MAX_STEPS,
            ring_length: 2,
            kernels: [Vec::new(), Vec::new()],
            think_share: 1.0,
        };
        let think_mean_s = match &config.workload.arrivals {
            Arrivals::Closed { think_time, .. } => Some(think_time.mean().as_secs_f64()),
            _ => None,
        };
        model.lay_grid(settings, think_mean_s);
        model
    }

    /// Chooses the step and sizes everything counted in steps. The step resolves the service (a quarter of its
    /// mean), the timeout (a hundredth), the network delay (a half) and the bucket (a tenth), divides the bucket,
    /// and is coarsened until the run fits in [`MAX_STEPS`] and the rings in [`MAX_RING_CELLS`].
    fn lay_grid(&mut self, settings: StepSettings, think_mean_s: Option<f64>) {
        let bucket_s = settings.bucket.as_secs_f64();
        let mut wanted = match settings.step {
            Some(step) => step.as_secs_f64(),
            None => {
                let mut step = bucket_s / 10.0;
                let mean = self.service.mean();
                // A service shorter than a step ends a step late: a constant one is resolved in quarters, a random
                // one finer, so that its short draws (5% of an exponential's below m/20) cost little.
                let parts = if self.service.points.len() == 1 { 4.0 } else { 20.0 };
                if mean > 0.0 {
                    step = step.min(mean / parts);
                }
                if let Some(timeout) = self.timeout_s {
                    step = step.min(timeout / 100.0);
                }
                if self.network_s > 0.0 {
                    step = step.min(self.network_s / 2.0);
                }
                let span = (self.arrivals_end - SimTime::ZERO).as_secs_f64() + self.longest_delay_s();
                step.max(2.0 * span / MAX_STEPS as f64)
            }
        };
        loop {
            // A hair below the ceiling, so that a step that divides the bucket is not lost to rounding.
            let per_bucket = (bucket_s / wanted * (1.0 - 1e-9)).ceil().max(1.0);
            self.step_s = bucket_s / per_bucket;
            self.steps_per_bucket = per_bucket as usize;
            let ring = ((self.longest_delay_s() / self.step_s).ceil() as usize + 4).next_power_of_two();
            if ring * 6 * self.classes <= MAX_RING_CELLS || settings.step.is_some() && wanted >= bucket_s {
                self.ring_length = ring;
                break;
            }
            wanted *= 2.0;
        }
        let steps = |seconds: f64| (seconds / self.step_s).round() as usize;
        self.network_steps = steps(self.network_s);
        self.timeout_steps = self.timeout_s.map(steps);
        self.good_within_steps = self.good_within_s.map(|s| s / self.step_s);
        self.arrivals_end_step = steps((self.arrivals_end - SimTime::ZERO).as_secs_f64()).max(1);
        self.max_steps = MAX_STEPS.max(self.arrivals_end_step * 2);
        let (step_s, per_bucket) = (self.step_s, self.steps_per_bucket);
        self.kernels = [0, 1].map(|failure| {
            self.table.steps[failure]
                .iter()
                .map(|step| Kernel::of(step.retried, &step.draws, step_s, per_bucket))
                .collect()
        });
        self.table.steps.iter_mut().flatten().for_each(|step| step.draws = Vec::new());
        self.think_share =
            think_mean_s.map_or(1.0, |mean| if mean > 0.0 { -(-self.step_s / mean).exp_m1() } else { 1.0 });
    }

    /// The longest delay anything waits in a ring: the longest sleep, the slowest service, two trips and a timeout.
    fn longest_delay_s(&self) -> f64 {
        let sleep =
            self.table.steps.iter().flatten().map(|s| s.sleep.points.last().map_or(0.0, |p| p.0)).fold(0.0, f64::max);
        let slowest = self.faults.windows().iter().fold(1.0_f64, |most, window| match window.kind {
            FaultKind::Slowdown(factor) => most.max(factor),
            _ => most,
        });
        let load = if self.workers.is_finite() { self.latency_per_request_s * self.workers / self.scale } else { 0.0 };
        let service = (self.service.points.last().map_or(0.0, |p| p.0) + load) * slowest;
        sleep + service + 2.0 * self.network_s + self.timeout_s.unwrap_or(0.0)
    }

    /// The time `step` acts at.
    pub(crate) fn time_of(&self, step: usize) -> SimTime {
        SimTime::from_nanos((step as f64 * self.step_s * 1e9).round() as u64)
    }
}
