//! Fixed-effort multilevel splitting over any run that can be stopped at a level, copied and reseeded
//! ([`Splittable`]), and the pilot that places its levels.
//!
//! **The estimator.** Levels 0 < L₁ < … < L_m of an integer importance function Φ split the way to the event E.
//! Stage k (k = 1 … m) runs n trajectories; stage 1's start at t = 0, stage k's from the states in which stage
//! k−1's survivors first reached L_{k−1}, each survivor copied about n / R_{k−1} times (every survivor
//! ⌊n / R⌋ times, the remaining n mod R copies to distinct survivors drawn at random) and each copy given new
//! random streams. A trajectory survives when Φ ≥ L_k at an event no later than the horizon T; one that does not
//! is run to its end and judged: in E or not (e_k of them). When E is "Φ reaches L_m" there is nothing to judge
//! below the level and the last stage's survivors are the event; otherwise a final stage m+1 runs its n
//! trajectories from L_m to the end and judges them all. With p̂_k = R_k / n,
//!
//! p̂ = Σ_k (Π_{j<k} p̂_j) · e_k / n  (+ Π_{k≤m} p̂_k when E is reaching L_m),
//!
//! an unbiased estimate of P(E) for any fixed levels and effort: each term is the unnormalised Feynman-Kac
//! measure of a genealogical particle system, whose particle approximations are unbiased (Cérou, Del Moral,
//! Le Gland & Lezaud 2006, ALEA 1:181-203, §3; Del Moral 2004, *Feynman-Kac Formulae*, Springer, Th. 7.4.2).
//! The scheme is Garvels's fixed-effort splitting (Garvels 2000, PhD thesis, University of Twente, ch. 2; L'Ecuyer,
//! Le Gland, Lezaud & Tuffin 2009, "Splitting techniques", in Rubino & Tuffin (eds.), *Rare Event Simulation
//! using Monte Carlo Methods*, Wiley, ch. 3, §3.2).
//!
//! **The levels** come from a pilot of its own seed: each pilot stage runs its trajectories to the horizon, notes
//! the largest Φ each reached, and puts the next level at the (1 − p₀) quantile of those maxima (p₀ = 0.2), as
//! in adaptive multilevel splitting (Cérou & Guyader 2007, Stoch. Anal. Appl. 25:417-443); the survivors are
//! replayed from their stored start to the new level, which a copy and its seed reproduce exactly. The main run
//! then uses the levels fixed, so its estimate stays unbiased.
//!
//! **Determinism.** Trajectory j of stage k gets the seed mix64(parent ⊕ mix64(k·2³² + j)), where parent is the
//! seed of the trajectory it was copied from (stage 0: the replication's seed); the copies are drawn from a
//! stream seeded by the replication and the stage; trajectories run in parallel under rayon and are collected in
//! index order. The result does not depend on the number of threads.

use rand::RngExt;
use rayon::prelude::*;

use crate::engine::{mix64, sim_rng};

/// A run that splitting can branch: stopped where its importance reaches a level, copied, reseeded, judged.
pub(crate) trait Splittable: Clone + Send + Sync {
    /// Runs until the importance is at least `level` at an event no later than the horizon (`None`: no level, to
    /// the horizon). True when it reached the level.
    fn advance(&mut self, level: Option<u64>) -> bool;
    /// Draws from new random streams seeded by `seed` from now on.
    fn reseed(&mut self, seed: u64);
    /// The largest importance on this path so far.
    fn max_importance(&self) -> u64;
    /// Events the engine delivered on this path so far (its ancestors' included).
    fn events(&self) -> u64;
    /// Runs to the end if the event needs it and says whether the run is in the event, with the path's events
    /// at the end.
    fn judge(self) -> (bool, u64);
}

/// The levels and the effort of a splitting run.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Design {
    /// L₁ < … < L_m, all above the importance at t = 0.
    pub(crate) levels: Vec<u64>,
    /// The event is "the importance reaches the last level" (no final stage).
    pub(crate) level_event: bool,
    /// Trajectories per stage.
    pub(crate) effort: usize,
}

impl Design {
    /// Stages per replication: one per level, and a final one unless the event is the last level.
    pub(crate) fn stages(&self) -> usize {
        self.levels.len() + usize::from(!self.level_event)
    }
}

/// One replication's outcome.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Replication {
    /// p̂.
    pub(crate) estimate: f64,
    /// R_k of each stage run (fewer than the design's stages when one had no survivor).
    pub(crate) survivors: Vec<usize>,
    /// Events delivered in this replication, every segment counted once.
    pub(crate) events: u64,
}

/// The seed of trajectory `index` of stage `stage` copied from a trajectory seeded `parent`.
pub(crate) fn child_seed(parent: u64, stage: usize, index: usize) -> u64 {
    mix64(parent ^ mix64(((stage as u64) << 32) | index as u64))
}

/// Which survivor each of `effort` copies starts from: every survivor ⌊effort / survivors⌋ times, in order, then
/// the remainder to distinct survivors drawn from `seed` (residual resampling with a fixed total), so each is
/// copied effort / survivors times on average.
pub(crate) fn copies(survivors: usize, effort: usize, seed: u64) -> Vec<usize> {
    assert!(survivors > 0);
    let each = effort / survivors;
    let mut parents: Vec<usize> = (0..survivors).flat_map(|i| std::iter::repeat_n(i, each)).collect();
    let mut pool: Vec<usize> = (0..survivors).collect();
    let mut rng = sim_rng(seed);
    let extra = effort - parents.len();
    for taken in 0..extra {
        let pick = rng.random_range(taken..survivors);
        pool.swap(taken, pick);
    }
    let mut chosen = pool[..extra].to_vec();
    chosen.sort_unstable();
    parents.extend(chosen);
    parents
}

/// What became of one trajectory of a stage.
enum Outcome<S> {
    Survived { run: S, seed: u64, events: u64 },
    Judged { hit: bool, events: u64 },
}

/// Runs trajectory `index` of stage `stage` from `entrant` (or from t = 0 with `start`) to `level`, then judges it
/// if it fell short.
fn trajectory<S: Splittable>(run: S, seed: u64, level: Option<u64>) -> Outcome<S> {
    let mut run = run;
    let before = run.events();
    if run.advance(level) {
        let events = run.events() - before;
        return Outcome::Survived { run, seed, events };
    }
    let (hit, after) = run.judge();
    Outcome::Judged { hit, events: after - before }
}

/// The n trajectories of a stage: from t = 0 (no entrants), or copies of the entrants.
fn stage<S: Splittable>(
    start: &(impl Fn(u64) -> S + Sync),
    entrants: &[(S, u64)],
    parents: &[usize],
    (stage, effort, level): (usize, usize, Option<u64>),
    replication_seed: u64,
) -> Vec<Outcome<S>> {
    (0..effort)
        .into_par_iter()
        .map(|j| {
            if entrants.is_empty() {
                let seed = child_seed(replication_seed, stage, j);
                trajectory(start(seed), seed, level)
            } else {
                let (parent, parent_seed) = &entrants[parents[j]];
                let seed = child_seed(*parent_seed, stage, j);
                let mut run = parent.clone();
                run.reseed(seed);
                trajectory(run, seed, level)
            }
        })
        .collect()
}

/// The seed of the copies' draw at stage `stage` of a replication.
fn resampling_seed(replication_seed: u64, stage: usize) -> u64 {
    mix64(replication_seed ^ mix64(0x7265_7361_6d70_6c65 ^ stage as u64))
}

/// One replication of the design, from `start(seed)` runs at t = 0.
pub(crate) fn replicate<S: Splittable>(
    start: &(impl Fn(u64) -> S + Sync),
    design: &Design,
    replication_seed: u64,
) -> Replication {
    let n = design.effort;
    let mut entrants: Vec<(S, u64)> = Vec::new();
    let mut parents: Vec<usize> = Vec::new();
    let (mut weight, mut estimate, mut events) = (1.0_f64, 0.0_f64, 0_u64);
    let mut survivors_per_stage = Vec::with_capacity(design.stages());
    for k in 0..design.stages() {
        let level = design.levels.get(k).copied();
        let outcomes = stage(start, &entrants, &parents, (k, n, level), replication_seed);
        let mut survivors = Vec::new();
        let mut hits = 0_usize;
        for outcome in outcomes {
            match outcome {
                Outcome::Survived { run, seed, events: spent } => {
                    events += spent;
                    survivors.push((run, seed));
                }
                Outcome::Judged { hit, events: spent } => {
                    events += spent;
                    hits += usize::from(hit);
                }
            }
        }
        estimate += weight * hits as f64 / n as f64;
        weight *= survivors.len() as f64 / n as f64;
        survivors_per_stage.push(survivors.len());
        if survivors.is_empty() {
            break;
        }
        parents = copies(survivors.len(), n, resampling_seed(replication_seed, k));
        entrants = survivors;
    }
    if design.level_event {
        estimate += weight;
    }
    Replication { estimate, survivors: survivors_per_stage, events }
}

/// The share of trajectories left above each level in the pilot, p₀.
pub(crate) const PILOT_SHARE: f64 = 0.2;
/// The most levels a pilot places.
pub(crate) const MAX_LEVELS: usize = 200;

/// What the pilot found.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Pilot {
    pub(crate) levels: Vec<u64>,
    /// The mean events of a plain run (the pilot's first stage: runs from t = 0 to the horizon, or to the event's
    /// level, and judged as brute force would).
    pub(crate) run_events: f64,
    /// Events the pilot delivered, replays included.
    pub(crate) events: u64,
    /// Trajectories it ran.
    pub(crate) runs: usize,
}

/// Why the pilot could not place the levels up to the event.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PilotShort {
    /// The levels placed so far.
    pub(crate) levels: Vec<u64>,
    /// The trajectories it ran.
    pub(crate) runs: usize,
    /// No trajectory of the last stage rose above the last level (rather than the pilot's runs running out).
    pub(crate) stalled: bool,
}

/// How far the pilot must go.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PilotGoal {
    /// The event is "the importance reaches this level".
    pub(crate) target: Option<u64>,
    /// The largest importance possible (a queue limit), if known.
    pub(crate) cap: Option<u64>,
    /// Trajectories per pilot stage.
    pub(crate) effort: usize,
    /// The most trajectories the pilot may run.
    pub(crate) max_runs: usize,
}

/// The (1 − p₀) quantile of `maxima`: the largest value that at least p₀ of them reach.
pub(crate) fn upper_quantile(maxima: &[u64], share: f64) -> u64 {
    let mut sorted = maxima.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let rank = ((share * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Places the levels: stage by stage, the next level at the (1 − p₀) quantile of the maxima the stage's
/// trajectories reach by the horizon, until the target level, the cap, or (for an event judged at the end) a
/// stage in which at least p₀ of the trajectories end in the event.
pub(crate) fn pilot<S: Splittable>(
    start: &(impl Fn(u64) -> S + Sync),
    goal: PilotGoal,
    seed: u64,
) -> Result<Pilot, PilotShort> {
    let n = goal.effort;
    let mut levels: Vec<u64> = Vec::new();
    let mut entrants: Vec<(S, u64)> = Vec::new();
    let mut parents: Vec<usize> = Vec::new();
    let (mut events, mut runs, mut run_events) = (0_u64, 0_usize, 0.0);
    loop {
        if runs + n > goal.max_runs || levels.len() >= MAX_LEVELS {
            return Err(PilotShort { levels, runs, stalled: false });
        }
        let k = levels.len();
        let current = levels.last().copied().unwrap_or(0);
        // Each trajectory's start (kept to replay it to the new level), then its run to the horizon.
        let ran: Vec<(S, u64, u64, bool, u64)> = (0..n)
            .into_par_iter()
            .map(|j| {
                let (begin, seed) = if entrants.is_empty() {
                    let seed = child_seed(seed, k, j);
                    (start(seed), seed)
                } else {
                    let (parent, parent_seed) = &entrants[parents[j]];
                    let seed = child_seed(*parent_seed, k, j);
                    let mut run = parent.clone();
                    run.reseed(seed);
                    (run, seed)
                };
                let mut run = begin.clone();
                let before = run.events();
                let reached = run.advance(goal.target);
                let maximum = run.max_importance();
                let (hit, after) = if reached { (true, run.events()) } else { run.judge() };
                (begin, seed, maximum, hit, after - before)
            })
            .collect();
        runs += n;
        events += ran.iter().map(|r| r.4).sum::<u64>();
        if k == 0 {
            run_events = ran.iter().map(|r| r.4 as f64).sum::<f64>() / n as f64;
        }
        let hits = ran.iter().filter(|r| r.3).count();
        let maxima: Vec<u64> = ran.iter().map(|r| r.2).collect();
        let mut level = upper_quantile(&maxima, PILOT_SHARE).max(current + 1);
        if let Some(target) = goal.target {
            level = level.min(target);
        }
        if let Some(cap) = goal.cap {
            level = level.min(cap);
        }
        let judged_at_end = goal.target.is_none();
        let done_by_share = judged_at_end && hits as f64 >= PILOT_SHARE * n as f64;
        if done_by_share || level <= current {
            // The event is common from here, or no level is left above: the final stage starts here.
            return Ok(Pilot { levels, run_events, events, runs });
        }
        let survivors: Vec<&(S, u64, u64, bool, u64)> = ran.iter().filter(|r| r.2 >= level).collect();
        if survivors.is_empty() {
            return Err(PilotShort { levels, runs, stalled: true });
        }
        levels.push(level);
        if goal.target == Some(level) {
            return Ok(Pilot { levels, run_events, events, runs });
        }
        // Replay each survivor from its start to its first crossing of the new level.
        let replayed: Vec<(S, u64, u64)> = survivors
            .par_iter()
            .map(|(begin, seed, ..)| {
                let mut run = begin.clone();
                let before = run.events();
                let reached = run.advance(Some(level));
                debug_assert!(reached, "a replay from the same state and seed crosses the same level");
                let spent = run.events() - before;
                (run, *seed, spent)
            })
            .collect();
        events += replayed.iter().map(|r| r.2).sum::<u64>();
        parents = copies(replayed.len(), n, resampling_seed(seed, k));
        entrants = replayed.into_iter().map(|(run, seed, _)| (run, seed)).collect();
    }
}
