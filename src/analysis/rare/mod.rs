//! Rare events: the probability that a server run reaches an event (stuck, tipped, a queue length, a condition on
//! its metrics) within a horizon, by fixed-effort multilevel splitting ([`splitting`]) on the server's live queue
//! (or the clients' backlog), with a Student-t interval over independent replications, the cost in engine events,
//! and what plain Monte Carlo would have cost for the same precision. docs/rare.md explains the scheme.

pub(crate) mod event;
pub(crate) mod splitting;
#[cfg(test)]
mod tests;

use rayon::prelude::*;

pub(crate) use event::{Event, EventError};
pub(crate) use splitting::{Design, Pilot, Replication};
use splitting::{PilotGoal, PilotShort, Splittable};

use crate::Error;
use crate::engine::{RunSeeds, mix64};
use crate::model::server::ServerConfig;
use crate::model::server::branch::{Branch, Importance, Stop};
use crate::stats::Estimate;
use crate::time::{SimDuration, SimTime};

/// The fewest trajectories per stage the main run accepts.
pub(crate) const MIN_EFFORT: usize = 20;
/// The most trajectories per pilot stage.
const MAX_PILOT_EFFORT: usize = 2_000;
/// The 97.5% normal quantile, for brute force's expected cost.
const Z_975: f64 = 1.959_964;

/// Everything a splitting estimate of one server point needs.
pub(crate) struct Setup<'a> {
    pub(crate) config: &'a ServerConfig,
    /// The timeline bucket (the verdict judges per bucket).
    pub(crate) bucket: SimDuration,
    /// Levels count, and events judged by the verdict happen, no later than this.
    pub(crate) horizon: SimTime,
    /// A path's event cap (the scenario's `max_events_per_run`).
    pub(crate) max_events: u64,
    pub(crate) event: Event,
    pub(crate) importance: Importance,
    /// `None`: placed by a pilot.
    pub(crate) levels: Option<Vec<u64>>,
    /// The largest importance possible (the queue limit, for the queue).
    pub(crate) cap: Option<u64>,
    /// Trajectories in all: pilot and main run.
    pub(crate) budget: usize,
    /// One seed per independent replication.
    pub(crate) replication_seeds: Vec<u64>,
    /// The pilot's own seed.
    pub(crate) pilot_seed: u64,
}

/// A splitting estimate and what it cost.
#[derive(Clone, Debug)]
pub(crate) struct Report {
    pub(crate) levels: Vec<u64>,
    /// The levels came from the pilot.
    pub(crate) auto_levels: bool,
    /// Trajectories per stage.
    pub(crate) effort: usize,
    pub(crate) replications: Vec<Replication>,
    /// Over the replications' p̂: mean, sd, Student-t 95% interval (its ends kept within [0, 1]).
    pub(crate) estimate: Estimate,
    /// The interval's half-width over the estimate.
    pub(crate) relative_half_width: f64,
    /// Mean over replications of each stage's R_k / n.
    pub(crate) stage_probabilities: Vec<f64>,
    /// Events of the main run (every replication).
    pub(crate) events: u64,
    /// Events and trajectories of the pilot (levels, or a plain run's cost).
    pub(crate) pilot_events: u64,
    pub(crate) pilot_runs: usize,
    /// A plain run's mean events, as brute force would run it.
    pub(crate) run_events: f64,
    /// e_run · 1.96² · (1 − p) / (p · rhw²): brute force's expected cost at the same relative half-width.
    pub(crate) brute_force_events: f64,
    /// Plain Monte Carlo's variance at the same total cost over splitting's: [p(1 − p) e_run / W] / [s² / M].
    pub(crate) variance_ratio: f64,
}

/// Why the budget cannot buy an estimate.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Short {
    /// Too few trajectories per stage, or a pilot that did not reach the event: about this many would do.
    Budget { needed: usize, why: String },
}

/// A server run as splitting sees it.
#[derive(Clone)]
struct ServerPath<'a> {
    branch: Branch<'a>,
    rules: &'a Rules,
}

/// What every path shares.
struct Rules {
    horizon: SimTime,
    max_events: u64,
    event: Event,
    /// The server's metric names, in `RunOutput::metrics` order.
    metrics: Vec<&'static str>,
}

/// The world and policy seeds of a trajectory seeded `seed`.
fn run_seeds(seed: u64) -> RunSeeds {
    RunSeeds { world: mix64(seed ^ 0x77_6f72_6c64), policy: mix64(seed ^ 0x706f_6c69_6379) }
}

impl Splittable for ServerPath<'_> {
    fn advance(&mut self, level: Option<u64>) -> bool {
        self.branch.advance(level, self.rules.horizon, self.rules.max_events) == Stop::Level
    }

    fn reseed(&mut self, seed: u64) {
        self.branch.reseed(run_seeds(seed));
    }

    fn max_importance(&self) -> u64 {
        self.branch.max_importance()
    }

    fn events(&self) -> u64 {
        self.branch.events()
    }

    fn judge(self) -> (bool, u64) {
        let rules = self.rules;
        if let Event::QueueAtLeast(level) = rules.event {
            return (self.branch.max_queue() >= level, self.branch.events());
        }
        let output = self.branch.finish(rules.max_events);
        let metric = |name: &str| {
            rules.metrics.iter().position(|known| *known == name).map_or(f64::NAN, |index| output.metrics[index])
        };
        let hit = match &rules.event {
            Event::Stuck => metric("stuck") == 1.0,
            Event::Tipped => metric("tipped") == 1.0,
            Event::Metrics { constraint, .. } => constraint.holds(metric),
            Event::QueueAtLeast(_) => unreachable!("judged above"),
        };
        (hit, output.events)
    }
}

/// The event is reaching the importance's last level: a queue level measured on the queue.
fn target_level(setup: &Setup<'_>) -> Option<u64> {
    match (&setup.event, setup.importance) {
        (Event::QueueAtLeast(level), Importance::Queue) => Some(*level),
        _ => None,
    }
}

/// The design of the main run, and the pilot (or calibration) it came from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Plan {
    pub(crate) design: Design,
    pub(crate) pilot: Pilot,
}

/// What every trajectory of `setup` shares.
fn rules(setup: &Setup<'_>) -> Rules {
    Rules {
        horizon: setup.horizon,
        max_events: setup.max_events,
        event: setup.event.clone(),
        metrics: crate::model::ModelKind::Server.metrics().iter().map(|m| m.name).collect(),
    }
}

/// Runs the pilot (auto levels) or a short calibration (explicit levels), unless `stored` holds the one an
/// earlier estimate of the same setup ran, and fixes the design; a budget that cannot reach the event with at
/// least [`MIN_EFFORT`] trajectories per stage is refused with the budget that would.
pub(crate) fn plan(setup: &Setup<'_>, stored: Option<Pilot>) -> Result<Plan, Short> {
    let rules = rules(setup);
    let start = |seed: u64| ServerPath {
        branch: Branch::start(setup.config, run_seeds(seed), setup.bucket, setup.importance),
        rules: &rules,
    };
    let target = target_level(setup);
    let replications = setup.replication_seeds.len();
    let (levels, pilot) = match &setup.levels {
        Some(levels) => {
            let mut levels = levels.clone();
            if target.is_some() && levels.last() != target.as_ref() {
                levels.extend(target);
            }
            let stages = levels.len() + usize::from(target.is_none());
            // A short calibration (levels placed past any reach) measures a plain run's cost.
            let goal =
                PilotGoal { target, cap: Some(0), effort: (setup.budget / 20).clamp(10, 200), max_runs: usize::MAX };
            check_budget(setup.budget, replications, stages, goal.effort)?;
            let pilot = stored.unwrap_or_else(|| {
                splitting::pilot(&start, goal, setup.pilot_seed).expect("a calibration places no level")
            });
            (levels, pilot)
        }
        None => {
            let max_runs = setup.budget / 5;
            let effort = (max_runs / 12).clamp(MIN_EFFORT, MAX_PILOT_EFFORT);
            let goal = PilotGoal { target, cap: setup.cap, effort, max_runs };
            let pilot = match stored {
                Some(pilot) => pilot,
                None => splitting::pilot(&start, goal, setup.pilot_seed).map_err(|short| pilot_short(setup, short))?,
            };
            (pilot.levels.clone(), pilot)
        }
    };
    let mut design = Design { levels, level_event: target.is_some(), effort: 0 };
    if design.level_event && design.levels.last() != target.as_ref() {
        design.levels.extend(target);
    }
    let main_runs = setup.budget.saturating_sub(pilot.runs);
    design.effort = main_runs / (replications * design.stages());
    if design.effort < MIN_EFFORT {
        let needed = pilot.runs + replications * design.stages() * MIN_EFFORT;
        return Err(Short::Budget {
            needed,
            why: format!(
                "{} levels and {replications} replications leave {} trajectories per stage, fewer than {MIN_EFFORT}",
                design.levels.len(),
                design.effort
            ),
        });
    }
    Ok(Plan { design, pilot })
}

/// Every replication of `design`, in order: those in `done` as they are, the others run in parallel, each
/// passed to `keep` as soon as it finishes. Once a signal asks the process to stop, no replication starts and
/// none finished under it is kept: the result is [`Error::Interrupted`].
pub(crate) fn replications(
    setup: &Setup<'_>,
    design: &Design,
    done: Vec<Option<Replication>>,
    keep: &(dyn Fn(usize, &Replication) -> Result<(), Error> + Sync),
) -> Result<Vec<Replication>, Error> {
    let rules = rules(setup);
    let start = |seed: u64| ServerPath {
        branch: Branch::start(setup.config, run_seeds(seed), setup.bucket, setup.importance),
        rules: &rules,
    };
    assert_eq!(done.len(), setup.replication_seeds.len(), "one slot per replication");
    done.into_par_iter()
        .zip(&setup.replication_seeds)
        .enumerate()
        .map(|(index, (done, &seed))| {
            if let Some(replication) = done {
                return Ok(replication);
            }
            crate::interrupt::check()?;
            let replication = splitting::replicate(&start, design, seed);
            // A run a signal ended early is no estimate.
            crate::interrupt::check()?;
            keep(index, &replication)?;
            Ok(replication)
        })
        .collect()
}

/// Plans, then runs every replication (tests; the command keeps each as it finishes).
#[cfg(test)]
pub(crate) fn estimate(setup: &Setup<'_>) -> Result<Report, Short> {
    let plan = plan(setup, None)?;
    let none = vec![None; setup.replication_seeds.len()];
    let replications = replications(setup, &plan.design, none, &|_, _| Ok(())).expect("no signal in tests");
    Ok(report(setup, &plan, replications))
}

/// Refuses, before any work, a budget that cannot give each of `stages` stages [`MIN_EFFORT`] trajectories.
fn check_budget(budget: usize, replications: usize, stages: usize, calibration: usize) -> Result<(), Short> {
    let needed = calibration + replications * stages * MIN_EFFORT;
    if budget < needed {
        return Err(Short::Budget {
            needed,
            why: format!(
                "{stages} stages × {replications} replications × {MIN_EFFORT} trajectories, and {calibration} plain runs"
            ),
        });
    }
    Ok(())
}

/// The budget the pilot would have needed.
fn pilot_short(setup: &Setup<'_>, short: PilotShort) -> Short {
    let placed = short.levels.len();
    let last = short.levels.last().copied().unwrap_or(0);
    let what = setup.importance.name();
    let why = if short.stalled {
        format!(
            "no trajectory of the pilot's {} runs took the {what} above {last} within the horizon{}",
            short.runs,
            if placed == 0 { String::new() } else { format!(" (levels placed: {:?})", short.levels) }
        )
    } else {
        format!("the pilot's {} runs placed {placed} levels {:?} without reaching the event", short.runs, short.levels)
    };
    // Levels rise about evenly; toward a known target, scale by the stages still missing, else double.
    let factor = match target_level(setup) {
        Some(target) if placed > 0 && last > 0 => {
            let missing = (target - last).div_ceil(last.div_ceil(placed as u64).max(1)) as f64;
            (placed as f64 + missing + 1.0) / placed as f64
        }
        _ => 2.0,
    };
    let needed = (setup.budget as f64 * factor.max(2.0)).ceil() as usize;
    Short::Budget { needed, why }
}

/// The estimate, its interval, the stage probabilities and the costs.
pub(crate) fn report(setup: &Setup<'_>, plan: &Plan, replications: Vec<Replication>) -> Report {
    let (design, pilot) = (&plan.design, &plan.pilot);
    let estimates: Vec<f64> = replications.iter().map(|r| r.estimate).collect();
    let estimate = Estimate::within(&estimates, crate::stats::Support::Within { min: 0.0, max: 1.0 });
    let p = estimate.mean;
    let relative_half_width = if p > 0.0 { estimate.ci95 / p } else { f64::NAN };
    let n = design.effort as f64;
    let stage_probabilities: Vec<f64> = (0..design.levels.len())
        .map(|k| {
            let sum: f64 = replications.iter().map(|r| r.survivors.get(k).map_or(0.0, |&s| s as f64 / n)).sum();
            sum / replications.len() as f64
        })
        .collect();
    let events: u64 = replications.iter().map(|r| r.events).sum();
    let run_events = pilot.run_events;
    let brute_force_events = run_events * Z_975 * Z_975 * (1.0 - p) / (p * relative_half_width.powi(2));
    let spent = (events + pilot.events) as f64;
    let splitting_variance = estimate.sd.powi(2) / replications.len() as f64;
    let variance_ratio = (p * (1.0 - p) * run_events / spent) / splitting_variance;
    Report {
        levels: design.levels.clone(),
        auto_levels: setup.levels.is_none(),
        effort: design.effort,
        replications,
        estimate,
        relative_half_width,
        stage_probabilities,
        events,
        pilot_events: pilot.events,
        pilot_runs: pilot.runs,
        run_events,
        brute_force_events,
        variance_ratio,
    }
}
