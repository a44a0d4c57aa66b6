//! The fluid limit's delay laws as tables: the service time and every retry's sleep, each a distribution over
//! time kept as equal-mass points.
//!
//! A law is sampled `DRAWS` times with the same code the simulation calls (`TimeDistribution::sample_nanos`,
//! `RetryPolicy::after_failure`), sorted, and cut into `POINTS` blocks of equal mass; each block keeps its mean,
//! so the table's mean is the sample's. Equal points merge, so a constant law is one point. The seed is fixed:
//! the fluid limit is a pure function of the scenario.

use crate::engine::{sim_rng, stable_hash};
use crate::model::distributions::TimeDistribution;
use crate::model::server::ServerConfig;
use crate::model::server::outcome::Outcome;
use crate::policy::{BackoffMemory, FailureKind, RetryDecision};
use crate::time::SimDuration;

/// Draws per law.
const DRAWS: usize = 1 << 16;
/// Equal-mass points kept per law.
pub(crate) const POINTS: usize = 256;
/// Attempt classes at most: with unlimited attempts the last class stands for every later one.
pub(crate) const MAX_CLASSES: usize = 64;

/// A distribution over seconds: points with weights summing to 1, in increasing order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Law {
    pub(crate) points: Vec<(f64, f64)>,
}

impl Law {
    /// The law of `draws` (seconds), in `POINTS` equal-mass blocks, equal neighbours merged.
    pub(crate) fn of_draws(mut draws: Vec<f64>) -> Law {
        if !draws.is_sorted() {
            draws.sort_by(f64::total_cmp);
        }
        let blocks = POINTS.min(draws.len()).max(1);
        let mut points: Vec<(f64, f64)> = Vec::with_capacity(blocks);
        for block in 0..blocks {
            let (from, to) = (block * draws.len() / blocks, (block + 1) * draws.len() / blocks);
            let slice = &draws[from..to];
            let weight = slice.len() as f64 / draws.len() as f64;
            let mean = slice.iter().sum::<f64>() / slice.len() as f64;
            match points.last_mut() {
                Some(last) if last.0 == mean => last.1 += weight,
                _ => points.push((mean, weight)),
            }
        }
        // Weights summed over merged blocks are exact fractions up to rounding: make them sum to 1.
        let total: f64 = points.iter().map(|p| p.1).sum();
        points.iter_mut().for_each(|p| p.1 /= total);
        Law { points }
    }

    /// The mean, in seconds.
    pub(crate) fn mean(&self) -> f64 {
        self.points.iter().map(|(x, w)| x * w).sum()
    }

    /// P(X ≤ x).
    pub(crate) fn cdf(&self, x: f64) -> f64 {
        self.points.iter().take_while(|(point, _)| *point <= x).map(|(_, w)| w).sum()
    }
}

/// The service time's law, in seconds, before load and slowdown. Exact for the constant, exponential and bimodal
/// shapes: an exponential's block of quantiles [p, q) has mean m·(G(q) − G(p))/(q − p) with
/// G(u) = (1 − u)·ln(1 − u) + u, the integral of its quantile function −m·ln(1 − u). A log-normal is sampled, its
/// draws rescaled to the exact mean.
pub(crate) fn service_law(service: &TimeDistribution) -> Law {
    let mean = service.mean_nanos() * 1e-9;
    match service {
        TimeDistribution::Constant(_) => Law { points: vec![(mean, 1.0)] },
        TimeDistribution::Exponential(..) => {
            let integral = |u: f64| if u >= 1.0 { 1.0 } else { (1.0 - u) * (1.0 - u).ln() + u };
            let points = (0..POINTS)
                .map(|block| {
                    let (p, q) = (block as f64 / POINTS as f64, (block + 1) as f64 / POINTS as f64);
                    (mean * (integral(q) - integral(p)) / (q - p), 1.0 / POINTS as f64)
                })
                .collect();
            Law { points }
        }
        TimeDistribution::Bimodal { fast, slow, p_slow } => {
            let points = [(fast * 1e-9, 1.0 - p_slow), (slow * 1e-9, *p_slow)];
            let mut points: Vec<(f64, f64)> = points.into_iter().filter(|(_, w)| *w > 0.0).collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Law { points }
        }
        TimeDistribution::LogNormal(..) => {
            let mut rng = sim_rng(stable_hash(b"fluid service"));
            let draws: Vec<f64> = (0..DRAWS).map(|_| service.sample_nanos(&mut rng) * 1e-9).collect();
            let sampled = draws.iter().sum::<f64>() / DRAWS as f64;
            Law::of_draws(draws.into_iter().map(|d| d * mean / sampled).collect())
        }
    }
}

/// A random stream whose first word per draw is stratified: draw i gets a word from slice `first[i]` of M equal
/// slices of [0, 2^64), so a strategy that turns one uniform into its sleep is sampled evenly over its quantiles
/// (an error of order 1/M rather than 1/√M); later words come from `inner`.
struct Stratified {
    inner: crate::engine::SimRng,
    first: Option<u64>,
}

impl rand::TryRng for Stratified {
    type Error = std::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        self.try_next_u64().map(|word| (word >> 32) as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(self.first.take().unwrap_or_else(|| rand::Rng::next_u64(&mut self.inner)))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        rand::Rng::fill_bytes(&mut self.inner, dst);
        Ok(())
    }
}

/// What a failed attempt was, as the retry policy sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// A timeout, a reset or a 5xx after service: retried on the policy's own schedule.
    Plain,
    /// A 503 refusal, which carries `overload_retry_after` when the server sets it.
    Refused,
}

/// After a failure of attempt class `n` (1-based: the n-th attempt failed): the share retried and the law of the
/// sleep before the retry.
#[derive(Clone, Debug)]
pub(crate) struct RetryStep {
    pub(crate) retried: f64,
    pub(crate) sleep: Law,
    /// Every sampled sleep, sorted, in seconds (f32 is finer than any step): the fluid's kernels are built from
    /// them and then dropped.
    pub(crate) draws: Vec<f32>,
}

/// The retry policy as laws per attempt class and failure: `steps[failure][n − 1]`.
#[derive(Clone, Debug)]
pub(crate) struct RetryTable {
    pub(crate) steps: [Vec<RetryStep>; 2],
    /// Attempt classes: `max_attempts`, or with unlimited attempts the first class whose sleep law repeats the
    /// one before it (the cap reached), at most [`MAX_CLASSES`]; the last class stands for every later one. With a
    /// limiter, at least two: first tries apart.
    pub(crate) classes: usize,
    /// The strategy carries a memory from one sleep to the next (decorrelated jitter, Polly v2): each retry's law
    /// is exact, their correlation within a client is lost.
    pub(crate) correlated: bool,
}

impl RetryTable {
    /// Samples `config`'s retry policy along `DRAWS` request histories per failure kind, carrying each history's
    /// backoff memory from one retry to the next as a client does; only each retry's marginal law is kept. The
    /// draws are stratified ([`Stratified`]).
    pub(crate) fn of(config: &ServerConfig) -> RetryTable {
        let limit = config.retry.max_attempts.map_or(MAX_CLASSES, |max| (max as usize).min(MAX_CLASSES));
        let correlated = std::cell::Cell::new(false);
        // Slice k of the stratified first word starts at its own fixed offset; every retry hands the slices out
        // in a fresh order, so a memoryless strategy's law at its cap repeats exactly (which ends the classes)
        // while a strategy with memory sees its draws independent from one retry to the next.
        let mut offsets_rng = sim_rng(stable_hash(b"fluid strata"));
        let words: Vec<u64> = (0..DRAWS)
            .map(|slice| {
                let within = rand::RngExt::random::<f64>(&mut offsets_rng);
                (((slice as f64 + within) / DRAWS as f64) * 2f64.powi(64)) as u64
            })
            .collect();
        let sample = |failure: Failure| -> Vec<RetryStep> {
            let hint = match failure {
                Failure::Plain => None,
                Failure::Refused => config.overload_retry_after,
            };
            let mut memories = vec![BackoffMemory::default(); DRAWS];
            let mut steps: Vec<RetryStep> = Vec::new();
            let mut order: Vec<usize> = (0..DRAWS).collect();
            let mut shuffle = sim_rng(stable_hash(b"fluid order") ^ failure as u64);
            for n in 1..=limit {
                rand::seq::SliceRandom::shuffle(&mut order[..], &mut shuffle);
                let mut rng =
                    Stratified { inner: sim_rng(stable_hash(b"fluid retries") ^ failure as u64), first: None };
                let mut sleeps = Vec::with_capacity(DRAWS);
                for (memory, &slice) in memories.iter_mut().zip(&order) {
                    rng.first = Some(words[slice]);
                    let decision = config.retry.after_failure(
                        n as u32,
                        SimDuration::ZERO,
                        (FailureKind::Transient, hint),
                        memory,
                        &mut rng,
                    );
                    if let RetryDecision::RetryAfter(sleep) = decision {
                        sleeps.push(sleep.as_secs_f64());
                    }
                }
                let retried = sleeps.len() as f64 / DRAWS as f64;
                sleeps.sort_by(f64::total_cmp);
                let draws = sleeps.iter().map(|&s| s as f32).collect();
                let sleep = if sleeps.is_empty() { Law { points: vec![(0.0, 1.0)] } } else { Law::of_draws(sleeps) };
                steps.push(RetryStep { retried, sleep, draws });
            }
            if memories.iter().any(|memory| *memory != BackoffMemory::default()) {
                correlated.set(true);
            }
            steps
        };
        let steps = [sample(Failure::Plain), sample(Failure::Refused)];
        let classes = match config.retry.max_attempts {
            Some(_) => limit,
            None => (2..=limit)
                .find(|&n| (0..2).all(|f| steps[f][n - 1].sleep == steps[f][n - 2].sleep))
                .map_or(limit, |n| n - 1),
        };
        // A fleet budget books first tries apart from retries, so first tries keep a class of their own.
        let classes = if config.limiter.is_some() { classes.max(2.min(limit)) } else { classes };
        RetryTable { steps, classes, correlated: correlated.get() }
    }

    /// The step after attempt class `n` failed (classes past the last repeat it).
    pub(crate) fn step(&self, failure: Failure, n: usize) -> &RetryStep {
        &self.steps[failure as usize][n.min(self.classes) - 1]
    }
}

/// Whether the clients retry each answer the server can give after a service, and with what probability the
/// service gives it: `(probability, retried)` for 502, the disguised 400 and 422.
pub(crate) fn service_failures(config: &ServerConfig) -> [(f64, bool); 3] {
    let outcomes = [Outcome::TransientError, Outcome::DisguisedTransient, Outcome::Permanent];
    std::array::from_fn(|index| {
        let outcome = outcomes[index];
        (config.error_probabilities[index], crate::model::server::decide::retried(config, outcome.response()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_law_keeps_the_mean_of_its_draws_and_merges_equal_points() {
        // 2,560 draws of eight values, 320 each: blocks of ten never straddle two values.
        let draws: Vec<f64> = (0..2560).map(|i| f64::from(i % 8)).collect();
        let law = Law::of_draws(draws.clone());
        let mean = draws.iter().sum::<f64>() / 2560.0;
        assert!((law.mean() - mean).abs() < 1e-12);
        assert_eq!(law.points.len(), 8, "eight values, each a run of equal blocks merged: {:?}", law.points);
        assert!((law.points.iter().map(|p| p.1).sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((law.cdf(3.0) - 0.5).abs() < 1e-12 && law.cdf(-1.0) == 0.0 && law.cdf(7.0) == 1.0);
        assert_eq!(Law::of_draws(vec![2.0; 100]).points, vec![(2.0, 1.0)]);
    }
}
