//! Splitting against exact probabilities: a birth-death chain of its own, and the server model as an M/M/1 queue,
//! each against P(the number in system reaches L by T) computed by uniformising the absorbing chain.

use rand::RngExt;

use super::splitting::{self, Design, PilotGoal, Splittable};
use super::*;
use crate::engine::{SimRng, sim_rng};
use crate::model::{ModelKind, SimModel};
use crate::params::Value;

/// P(an M/M/1 queue empty at t = 0 has `level` in system at some time ≤ `t_secs`): the chain on 0..=level with
/// `level` absorbing, uniformised at Λ = λ + μ, P = Σ_k Poisson(k; Λt) · (Pᵏ)[0, level] (Jensen 1953; Stewart
/// 2009, *Probability, Markov Chains, Queues, and Simulation*, §10.7).
pub(super) fn mm1_reaches(arrival_rate: f64, service_rate: f64, level: usize, t_secs: f64) -> f64 {
    let uniform = arrival_rate + service_rate;
    let (up, down) = (arrival_rate / uniform, service_rate / uniform);
    let x = uniform * t_secs;
    assert!(x < 700.0, "e^-Λt underflows");
    let mut v = vec![0.0; level + 1];
    v[0] = 1.0;
    let (mut weight, mut total) = ((-x).exp(), 0.0);
    let mut k = 0.0;
    while k < x + 12.0 * x.sqrt() + 60.0 {
        total += weight * v[level];
        let mut next = vec![0.0; level + 1];
        for n in 0..level {
            next[n + 1] += v[n] * up;
            next[n.saturating_sub(1)] += v[n] * down;
        }
        next[level] += v[level];
        v = next;
        k += 1.0;
        weight *= x / k;
    }
    total
}

#[test]
fn uniformisation_matches_a_hand_computed_case() {
    // Level 1 from 0: the first arrival by t, 1 − e^(−λt).
    let p = mm1_reaches(2.0, 5.0, 1, 0.7);
    assert!((p - (1.0 - (-1.4_f64).exp())).abs() < 1e-12, "{p}");
}

const PINNED_REPLICATION: (f64, &[usize], u64) = (4.636262400000002e-5, &[44, 3, 7, 4, 14, 14], 12701);
const PINNED_PILOT: (&[u64], u64, usize) = (&[7, 8, 10, 12, 13, 15, 16, 18], 19366, 400);
const PINNED_COPIES: &[usize] = &[0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 0, 3];

/// An M/M/1 queue as a chain of its own: the number in system, its clock and its stream.
#[derive(Clone)]
struct Chain {
    n: u64,
    now: f64,
    rng: SimRng,
    events: u64,
    max: u64,
    rates: (f64, f64),
    horizon: f64,
    /// Judged at the end: in the event when the path's maximum reached this (`None`: never).
    judged_at: Option<u64>,
}

impl Splittable for Chain {
    fn advance(&mut self, level: Option<u64>) -> bool {
        let level = level.unwrap_or(u64::MAX);
        loop {
            if self.n >= level {
                return true;
            }
            let (up, down) = self.rates;
            let total = if self.n > 0 { up + down } else { up };
            let wait = -(1.0 - self.rng.random::<f64>()).ln() / total;
            if self.now + wait > self.horizon {
                self.now = self.horizon;
                return false;
            }
            self.now += wait;
            self.events += 1;
            self.n = if self.rng.random::<f64>() * total < up { self.n + 1 } else { self.n - 1 };
            self.max = self.max.max(self.n);
        }
    }
    fn reseed(&mut self, seed: u64) {
        self.rng = sim_rng(seed);
    }
    fn max_importance(&self) -> u64 {
        self.max
    }
    fn events(&self) -> u64 {
        self.events
    }
    fn judge(mut self) -> (bool, u64) {
        self.advance(None);
        (self.judged_at.is_some_and(|at| self.max >= at), self.events)
    }
}

fn chain(seed: u64) -> Chain {
    Chain { n: 0, now: 0.0, rng: sim_rng(seed), events: 0, max: 0, rates: (5.0, 10.0), horizon: 10.0, judged_at: None }
}

#[test]
fn copies_give_every_survivor_its_share_and_the_rest_to_distinct_ones() {
    let parents = splitting::copies(3, 10, 9);
    assert_eq!(parents.len(), 10);
    let counts: Vec<usize> = (0..3).map(|i| parents.iter().filter(|&&p| p == i).count()).collect();
    assert!(counts.iter().all(|&c| c == 3 || c == 4), "{counts:?}");
    assert_eq!(counts.iter().sum::<usize>(), 10);
    assert_eq!(splitting::copies(4, 2, 1).len(), 2, "fewer copies than survivors");
    assert_eq!(splitting::upper_quantile(&[1, 5, 3, 9, 7], 0.2), 9);
    assert_eq!(splitting::upper_quantile(&[1, 5, 3, 9, 7], 0.4), 7);
}

#[test]
fn splitting_a_birth_death_chain_finds_its_exact_probability() {
    let exact = mm1_reaches(5.0, 10.0, 18, 10.0);
    let design = Design { levels: vec![4, 8, 11, 14, 16, 18], level_event: true, effort: 400 };
    let estimates: Vec<f64> = (0..20).map(|r| splitting::replicate(&chain, &design, 100 + r).estimate).collect();
    let estimate = Estimate::of(&estimates);
    assert!((estimate.mean - exact).abs() <= estimate.ci95, "{estimate:?} against {exact:e}");
    assert!(estimate.ci95 / estimate.mean < 0.3, "{estimate:?}");
}

/// The chain judged at the end: in the event when its maximum reached 18.
fn judged_chain(seed: u64) -> Chain {
    Chain { judged_at: Some(18), ..chain(seed) }
}

#[test]
fn splitting_counts_the_runs_in_the_event_below_a_level_and_above_the_last() {
    // Level 20 lies beyond the event (18): the stage toward it counts the runs that reached 18 but not 20, and the
    // final stage those that reached 20. Both terms are needed for the exact probability.
    let exact = mm1_reaches(5.0, 10.0, 18, 10.0);
    let design = Design { levels: vec![4, 8, 11, 14, 16, 20], level_event: false, effort: 400 };
    assert_eq!(design.stages(), 7);
    let estimates: Vec<f64> = (0..20).map(|r| splitting::replicate(&judged_chain, &design, 300 + r).estimate).collect();
    let estimate = Estimate::of(&estimates);
    assert!((estimate.mean - exact).abs() <= estimate.ci95, "{estimate:?} against {exact:e}");
    assert!(estimate.ci95 / estimate.mean < 0.3, "{estimate:?}");
    let below = Design { levels: vec![4, 8, 11, 14, 16], ..design.clone() };
    let estimates: Vec<f64> = (0..20).map(|r| splitting::replicate(&judged_chain, &below, 300 + r).estimate).collect();
    let estimate = Estimate::of(&estimates);
    assert!((estimate.mean - exact).abs() <= estimate.ci95, "final stage only: {estimate:?} against {exact:e}");
}

#[test]
fn a_pilot_for_an_event_judged_at_the_end_stops_where_a_fifth_of_the_runs_reach_it() {
    let goal = PilotGoal { target: None, cap: None, effort: 200, max_runs: 10_000 };
    let pilot = splitting::pilot(&judged_chain, goal, 5).unwrap();
    let last = *pilot.levels.last().unwrap();
    assert!((10..18).contains(&last), "{:?}", pilot.levels);
    let capped = splitting::pilot(&judged_chain, PilotGoal { cap: Some(9), ..goal }, 5).unwrap();
    assert_eq!(capped.levels.last(), Some(&9), "{:?}", capped.levels);
    assert!(capped.levels.iter().all(|&level| level <= 9));
}

#[test]
fn a_replication_and_a_pilot_are_functions_of_their_seed() {
    // Pinned: any change to the seeding, the copies' draw or the event count moves these.
    let design = Design { levels: vec![4, 8, 11, 14, 16, 18], level_event: true, effort: 50 };
    let run = splitting::replicate(&chain, &design, 11);
    assert_eq!((run.estimate, run.survivors.as_slice(), run.events), PINNED_REPLICATION, "{run:?}");
    let goal = PilotGoal { target: Some(18), cap: None, effort: 50, max_runs: 10_000 };
    let pilot = splitting::pilot(&chain, goal, 11).unwrap();
    assert_eq!((pilot.levels.as_slice(), pilot.events, pilot.runs), PINNED_PILOT, "{pilot:?}");
    assert!((pilot.run_events - 98.44).abs() < 1e-9, "{pilot:?}");
    assert_eq!(splitting::copies(5, 12, 3), PINNED_COPIES);
    assert_ne!(splitting::child_seed(1, 0, 1), splitting::child_seed(1, 1, 0));
    assert_ne!(splitting::child_seed(1, 0, 1), splitting::child_seed(2, 0, 1));
}

#[test]
fn the_pilot_places_rising_levels_up_to_the_target() {
    let goal = PilotGoal { target: Some(18), cap: None, effort: 200, max_runs: 10_000 };
    let pilot = splitting::pilot(&chain, goal, 5).unwrap();
    assert_eq!(pilot.levels.last(), Some(&18));
    assert!(pilot.levels.windows(2).all(|pair| pair[0] < pair[1]), "{:?}", pilot.levels);
    assert!(pilot.levels.len() >= 4, "{:?}", pilot.levels);
    assert!(pilot.run_events > 10.0 && pilot.events > 0);
    let short = PilotGoal { max_runs: 400, ..goal };
    let err = splitting::pilot(&chain, short, 5).unwrap_err();
    assert!(!err.stalled && err.runs == 400, "{err:?}");
}

/// The server model as an M/M/1 queue: Poisson arrivals at 5/s for 10 s, one worker serving in 100 ms on
/// average (exponential), no network delay, no timeout, no retries. Its live queue is the number in system
/// minus one.
fn mm1_setup<'a>(config: &'a ServerConfig, level: u64, budget: usize, seed: u64) -> Setup<'a> {
    Setup {
        config,
        bucket: SimDuration::from_secs(1),
        horizon: SimTime::ZERO + SimDuration::from_secs(10),
        max_events: u64::MAX,
        event: Event::QueueAtLeast(level),
        importance: Importance::Queue,
        levels: None,
        cap: None,
        budget,
        replication_seeds: (0..10).map(|r| mix64(seed + r)).collect(),
        pilot_seed: mix64(seed ^ 0xffff),
    }
}

fn ms(n: u64) -> Value {
    Value::Duration(SimDuration::from_millis(n))
}

/// A server point with every default, then `changes`.
pub(super) fn server_config(changes: &[(&str, Value)]) -> ServerConfig {
    crate::model::server::Server::configure(&ModelKind::Server.point_with(changes)).unwrap()
}

fn mm1_config() -> ServerConfig {
    server_config(&[
        ("kind", Value::Choice("open")),
        ("rate", Value::Real(5.0)),
        ("duration", ms(10_000)),
        ("workers", Value::Count(1)),
        ("service_mean", ms(100)),
        ("network_delay", ms(0)),
        ("strategy", Value::Choice("none")),
    ])
}

#[test]
fn splitting_the_server_as_an_mm1_queue_finds_p_near_one_in_a_hundred() {
    let config = mm1_config();
    let exact = mm1_reaches(5.0, 10.0, 11, 10.0);
    let report = estimate(&mm1_setup(&config, 10, 4_000, 1)).unwrap();
    let e = report.estimate;
    assert!((e.mean - exact).abs() <= e.ci95, "{e:?} against {exact:e}");
    assert!(report.relative_half_width < 0.5, "{report:?}");
}

#[test]
fn splitting_the_server_as_an_mm1_queue_finds_p_near_one_in_a_million_at_under_a_hundredth_of_brute_force() {
    let config = mm1_config();
    let exact = mm1_reaches(5.0, 10.0, 24, 10.0);
    let report = estimate(&mm1_setup(&config, 23, 20_000, 2)).unwrap();
    let e = report.estimate;
    assert!((e.mean - exact).abs() <= e.ci95, "{e:?} against {exact:e}");
    assert!(e.ci95.is_finite() && e.lo95 > 0.0, "{e:?}");
    let spent = (report.events + report.pilot_events) as f64;
    assert!(spent < 0.01 * report.brute_force_events, "{spent} against {}", report.brute_force_events);
    assert!(report.variance_ratio > 100.0, "{}", report.variance_ratio);
}

#[test]
fn a_budget_too_small_for_the_levels_is_refused_with_the_budget_that_would_do() {
    let config = mm1_config();
    let setup = Setup { levels: Some(vec![3, 6, 9]), ..mm1_setup(&config, 10, 300, 1) };
    let Err(Short::Budget { needed, .. }) = estimate(&setup) else { panic!("accepted") };
    assert_eq!(needed, 15 + 10 * 4 * MIN_EFFORT, "a calibration of 15 and 4 stages of 20 in 10 replications");
    let short = estimate(&mm1_setup(&config, 23, 200, 1));
    assert!(matches!(short, Err(Short::Budget { needed, .. }) if needed >= 400), "{short:?}");
}

/// The storm of scenarios/rare-storm.toml at 8.2/s for 2 minutes, judged from t = 0: stuck in about one run in a
/// hundred.
fn small_storm() -> ServerConfig {
    let mut config = server_config(&[
        ("kind", Value::Choice("open")),
        ("rate", Value::Real(8.2)),
        ("duration", ms(120_000)),
        ("workers", Value::Count(1)),
        ("queue_limit", Value::Count(100)),
        ("service_mean", ms(100)),
        ("network_delay", ms(0)),
        ("strategy", Value::Choice("none")),
        ("timeout", ms(4_000)),
        ("max_attempts", Value::Count(4)),
        ("retry_on", Value::Text("timeout".into())),
    ]);
    config.trigger_end = Some(SimTime::ZERO);
    config
}

#[test]
fn splitting_and_brute_force_agree_on_a_small_storm_over_several_seeds() {
    let config = small_storm();
    let bucket = SimDuration::from_secs(1);
    let stuck = crate::model::ModelKind::Server.metrics().iter().position(|m| m.name == "stuck").unwrap();
    let runs = 6_000_u64;
    let outcomes: Vec<f64> = (0..runs)
        .into_par_iter()
        .map(|r| {
            let run = Branch::start(&config, RunSeeds::single(mix64(r + 77)), bucket, Importance::Queue);
            f64::from(u8::from(run.finish(u64::MAX).metrics[stuck] == 1.0))
        })
        .collect();
    let brute = Estimate::within(&outcomes, crate::stats::Support::Binary);
    assert!(brute.mean > 0.003 && brute.mean < 0.03, "{brute:?}");
    for seed in 0..3 {
        let setup = Setup {
            bucket,
            horizon: SimTime::ZERO + SimDuration::from_secs(120),
            event: Event::Stuck,
            cap: Some(100),
            budget: 3_000,
            ..mm1_setup(&config, 1, 0, 1_000 * seed)
        };
        let split = estimate(&setup).unwrap().estimate;
        assert!(split.lo95 <= brute.hi95 && brute.lo95 <= split.hi95, "seed {seed}: {split:?} against {brute:?}");
    }
}
