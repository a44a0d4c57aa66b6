//! The fluid limit of the server model: what a fleet of N clients does as N grows with the server (arrivals,
//! workers and queue places all ×N), where the noise vanishes and the counts per client follow deterministic
//! equations (Kurtz 1970, "Solutions of ordinary differential equations as limits of pure jump Markov
//! processes"; Whitt 2006, "Fluid models for multiserver queues with abandonments", for the waits and
//! deadlines).
//!
//! - [`support`] decides whether a point has a fluid form (no per-client state but the attempt count);
//! - `tables` turns the service time and the retry policy into laws, sampled with the simulation's own code;
//! - `integrate` steps the expected counts through time into a timeline like a run's;
//! - `regimes` solves the stationary equations at a constant rate: healthy, stuck, and the separatrix between;
//! - [`FluidPoint`] ties them together for the `fluid` command and for tests.

mod integrate;
mod model;
mod regimes;
pub(crate) mod support;
mod tables;

pub(crate) use integrate::{SERIES, Trajectory};
pub(crate) use model::StepSettings;
pub(crate) use regimes::bisect;
pub(crate) use regimes::{Regime, RegimeKind, Regimes};

use crate::model::server::ServerConfig;
use crate::model::verdict::Verdict;
use crate::time::SimDuration;
use crate::workload::Arrivals;
use model::FluidModel;

/// One server point's fluid model, ready to integrate or solve.
#[derive(Clone, Debug)]
pub(crate) struct FluidPoint {
    model: FluidModel,
}

impl FluidPoint {
    /// The fluid model of `config`, or the key that asks for what it cannot express.
    pub(crate) fn new(config: &ServerConfig, settings: StepSettings) -> Result<FluidPoint, support::Unsupported> {
        support::check(config)?;
        Ok(FluidPoint { model: FluidModel::new(config, settings) })
    }

    /// The time step, in seconds.
    pub(crate) fn step_s(&self) -> f64 {
        self.model.step_s
    }

    /// Attempt classes the retry policy was cut into.
    pub(crate) fn classes(&self) -> usize {
        self.model.classes
    }

    /// The strategy carries each client's previous sleep into the next (decorrelated jitter, Polly v2): the fluid
    /// keeps each retry's law, not their correlation.
    pub(crate) fn correlated(&self) -> bool {
        self.model.table.correlated
    }

    /// The fleet's ratio budget, if the clients keep one: the share of requests it grants as retries and its
    /// reserve in retries per second (scaled with the fleet).
    pub(crate) fn budget(&self) -> Option<(f64, f64)> {
        self.model.budget.as_ref().map(|budget| budget.rates())
    }

    /// The trajectory from t = 0.
    pub(crate) fn integrate(&self) -> Trajectory {
        integrate::integrate(&self.model)
    }

    /// The stationary regimes at the open workload's last rate, or why there are none.
    pub(crate) fn regimes(&self) -> Result<Regimes, &'static str> {
        if let Some(why) = regimes::unsupported(&self.model) {
            return Err(why);
        }
        let Arrivals::Open { schedule } = &self.model.arrivals else { unreachable!("checked above") };
        Ok(self.model.regimes(schedule.final_rate() * self.model.scale))
    }

    /// The stuck-state verdict of a trajectory, judged as a run's is, on first tries answered in good time.
    pub(crate) fn verdict(&self, trajectory: &Trajectory, bucket: SimDuration) -> Verdict {
        let offered = integrate::OFFERED;
        Verdict::judge_series(
            bucket,
            |b| {
                let row = trajectory.rows.get(b).map_or(0.0, |row| row[offered]);
                (row, trajectory.in_time.get(b).copied().unwrap_or(0.0))
            },
            self.model.trigger_end,
            self.model.arrivals_end,
            self.model.verdict,
        )
    }

    /// Whether the verdict counts every in-time success: true when every retry follows a timeout (so none can
    /// succeed within the first try's timeout); otherwise fast failures' retries are left out.
    pub(crate) fn verdict_exact(&self) -> bool {
        use crate::model::faults::FaultKind;
        let m = &self.model;
        let has = |wanted: fn(&FaultKind) -> bool| m.faults.windows().iter().any(|window| wanted(&window.kind));
        let errors_retried = m.service_failures.iter().any(|(p, retried)| *p > 0.0 && *retried);
        let refusals = m.retry_503 && (m.queue_limit.is_finite() || has(|k| matches!(k, FaultKind::FailFast)));
        let resets = m.retry_reset && has(|k| matches!(k, FaultKind::Reset));
        !(errors_retried || refusals || resets)
    }
}

#[cfg(test)]
mod tests;
