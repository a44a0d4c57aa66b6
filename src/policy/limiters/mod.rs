//! Retry limiters as real systems ship them: they decide whether a client may retry at all, whatever its
//! backoff says, and some of them whether it may send at all. Each keeps per-client state and sees every result;
//! pure values, no engine and no random source (a probabilistic limiter is handed a uniform draw).
//!
//! The protocol, for every attempt of an operation, in this order:
//!
//! 1. **Retry permission** (retries only): after a failed attempt, if the backoff policy would retry, the model
//!    asks [`RetryLimiter::acquire_retry`], which may spend tokens and answers with a [`Permit`] or `None` (give
//!    up).
//! 2. **Admission** (every attempt, first tries included): just before sending, the model calls
//!    [`RetryLimiter::admit`] with a uniform draw from `[0, 1)` taken from its own rng. The answer is an
//!    [`Admission`]: `Send`; `Reject`, the attempt fails locally without reaching the server (the model counts
//!    it, does not report an outcome for it, and lets its retry policy decide what next); or `Wait(d)`, the
//!    attempt is admitted but must be sent `d` from now (the limiter has already counted it: the model does not
//!    ask again). The default admits everything.
//! 3. **Send**: when the attempt actually leaves, the model calls [`RetryLimiter::on_send`] (`is_retry` false
//!    for a first try), so concurrency-based limiters can count what is in flight. Default: nothing.
//! 4. **Outcome**: once the attempt has an outcome (an answer or a timeout, exactly once per sent attempt) the
//!    model reports it with [`RetryLimiter::record`], passing back the permit the attempt was made with, if any
//!    (AWS refunds a successful retry's cost), and whether the server refused it as throttled (429).
//! 5. **Withdrawal**: an attempt sent but then cancelled by its caller (it will have no outcome), or a retry
//!    granted but never sent, is reported once with [`RetryLimiter::withdraw`], so counts of what is in flight
//!    stay right. Default: nothing.

mod aws_adaptive;
mod aws_quota;
mod circuit_breaker;
mod envoy_budget;
mod grpc_throttle;
mod retry_budget;
mod sre_ratio;
mod sre_throttle;
mod start_limit;
mod token_bucket_deposit;
mod window;

pub use aws_adaptive::{AwsAdaptive, Cubic, RateClocker};
pub use aws_quota::AwsRetryQuota;
pub use circuit_breaker::{BreakerState, CircuitBreaker};
pub use envoy_budget::EnvoyRetryBudget;
pub use grpc_throttle::GrpcThrottle;
pub use retry_budget::RetryBudget;
pub use sre_ratio::SreRetryRatio;
pub use sre_throttle::SreAdaptiveThrottle;
pub use start_limit::StartLimit;
pub use token_bucket_deposit::{DepositRule, RetryTokenBucket};

use crate::time::{SimDuration, SimTime};

/// Permission to make one retry, and what it cost (returned on success by limiters that refund).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Permit {
    pub cost: f64,
}

/// What one attempt came to. Build it with the constructors ([`Outcome::success`], [`Outcome::failure`],
/// [`Outcome::timeout`], [`Outcome::throttled`], [`Outcome::first_try`]) rather than a struct literal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    pub succeeded: bool,
    /// The attempt failed by timing out (AWS charges more for retrying those).
    pub timed_out: bool,
    /// The server refused the attempt as throttled (HTTP 429 from a rate limiter). AWS adaptive mode slows down
    /// on these; Google's adaptive throttling does not count them as accepted.
    pub throttled: bool,
    /// The permit this attempt was made with: `None` for a first try.
    pub permit: Option<Permit>,
}

impl Outcome {
    /// A first try that succeeded or failed (not by timeout, not throttled).
    pub fn first_try(succeeded: bool) -> Self {
        Outcome { succeeded, timed_out: false, throttled: false, permit: None }
    }

    /// An attempt that succeeded.
    pub fn success(permit: Option<Permit>) -> Self {
        Outcome { succeeded: true, timed_out: false, throttled: false, permit }
    }

    /// An attempt the server answered with an error other than throttling.
    pub fn failure(permit: Option<Permit>) -> Self {
        Outcome { succeeded: false, timed_out: false, throttled: false, permit }
    }

    /// An attempt that timed out at the client.
    pub fn timeout(permit: Option<Permit>) -> Self {
        Outcome { succeeded: false, timed_out: true, throttled: false, permit }
    }

    /// An attempt the server refused as throttled (429).
    pub fn throttled(permit: Option<Permit>) -> Self {
        Outcome { succeeded: false, timed_out: false, throttled: true, permit }
    }
}

/// A limiter's answer before an attempt is sent (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Send it now.
    Send,
    /// Do not send it: it fails locally, without reaching the server.
    Reject,
    /// Admitted, but send it this much later (the limiter has counted it already).
    Wait(SimDuration),
}

/// One client's retry limiter. `acquire_retry` and `record` are required; `admit` and `on_send` default to
/// admitting everything and ignoring sends, so limiters that only gate retries need not mention them.
pub trait RetryLimiter {
    /// May the client retry now? `after_timeout` says whether the failed attempt timed out.
    fn acquire_retry(&mut self, now: SimTime, after_timeout: bool) -> Option<Permit>;
    /// Every sent attempt's result, first tries included.
    fn record(&mut self, now: SimTime, outcome: Outcome);
    /// Before every attempt (first tries included): send it, reject it locally, or send it later. `draw` is a
    /// uniform draw from `[0, 1)`, used only by probabilistic limiters.
    fn admit(&mut self, _now: SimTime, _draw: f64) -> Admission {
        Admission::Send
    }
    /// An attempt leaves now; `is_retry` is false for a first try.
    fn on_send(&mut self, _now: SimTime, _is_retry: bool) {}
    /// The caller gave up on something without an outcome: an attempt it had sent (`sent`: a hedge race's loser,
    /// a branch of a failed fan-out) or a retry it was granted but never sent (cancelled during its backoff).
    /// `permit` is the retry's permit, if it was one. Default: nothing.
    fn withdraw(&mut self, _now: SimTime, _sent: bool, _permit: Option<Permit>) {}
}

/// The `limiter` choices models offer: `none`, `budget` (each model's own ratio budget) and the presets of
/// [`Limiter::preset`].
pub const LIMITER_NAMES: &[&str] = &[
    "none",
    "budget",
    "token-bucket",
    "breaker",
    "grpc",
    "aws-quota",
    "finagle",
    "envoy",
    "sre-ratio",
    "sre-throttle",
    "aws-adaptive",
    "systemd",
];

/// Any of the limiters, dispatched with a `match` (models keep one per client).
#[derive(Clone, Debug, PartialEq)]
pub enum Limiter {
    Grpc(GrpcThrottle),
    AwsQuota(AwsRetryQuota),
    TokenBucket(RetryTokenBucket),
    Breaker(CircuitBreaker),
    Budget(RetryBudget),
    Envoy(EnvoyRetryBudget),
    SreRatio(SreRetryRatio),
    SreThrottle(SreAdaptiveThrottle),
    AwsAdaptive(AwsAdaptive),
    StartLimit(StartLimit),
}

impl Limiter {
    /// The limiters as shipped, by name: `token-bucket` (0.1 per call, capacity 5, Brooker 2022), `breaker` (no
    /// retries while more than 10% of the last 100 calls failed, 1 s pauses), `grpc` (10, 0.1), `aws-quota`
    /// (500, 5, 10), `finagle` (20% + 10/s over 10 s), `envoy` (concurrent retries ≤ max(3, 20% of active
    /// requests)), `sre-ratio` (retries < 10% of requests over 2 min), `sre-throttle` (Google SRE adaptive
    /// throttling, K = 2 over 2 min), `aws-adaptive` (the AWS quota plus a CUBIC client rate limiter) and
    /// `systemd` (5 starts per 10 s). `None` for any other name.
    pub fn preset(name: &str) -> Option<Limiter> {
        match name {
            "token-bucket" => Some(Limiter::TokenBucket(RetryTokenBucket::new(0.1, 5.0, DepositRule::PerCall))),
            "breaker" => Some(Limiter::Breaker(CircuitBreaker::new(0.1, 100, crate::time::SimDuration::from_secs(1)))),
            "grpc" => Some(Limiter::Grpc(GrpcThrottle::new(10.0, 0.1))),
            "aws-quota" => Some(Limiter::AwsQuota(AwsRetryQuota::standard())),
            "finagle" => Some(Limiter::Budget(RetryBudget::finagle())),
            "envoy" => Some(Limiter::Envoy(EnvoyRetryBudget::envoy_default())),
            "sre-ratio" => Some(Limiter::SreRatio(SreRetryRatio::sre_book())),
            "sre-throttle" => Some(Limiter::SreThrottle(SreAdaptiveThrottle::sre_book())),
            "aws-adaptive" => Some(Limiter::AwsAdaptive(AwsAdaptive::standard())),
            "systemd" => Some(Limiter::StartLimit(StartLimit::systemd_default())),
            _ => None,
        }
    }
}

/// Forwards a call to whichever limiter the enum holds.
macro_rules! dispatch {
    ($self:ident, $l:ident => $call:expr) => {
        match $self {
            Limiter::Grpc($l) => $call,
            Limiter::AwsQuota($l) => $call,
            Limiter::TokenBucket($l) => $call,
            Limiter::Breaker($l) => $call,
            Limiter::Budget($l) => $call,
            Limiter::Envoy($l) => $call,
            Limiter::SreRatio($l) => $call,
            Limiter::SreThrottle($l) => $call,
            Limiter::AwsAdaptive($l) => $call,
            Limiter::StartLimit($l) => $call,
        }
    };
}

impl RetryLimiter for Limiter {
    fn acquire_retry(&mut self, now: SimTime, after_timeout: bool) -> Option<Permit> {
        dispatch!(self, l => l.acquire_retry(now, after_timeout))
    }

    fn record(&mut self, now: SimTime, outcome: Outcome) {
        dispatch!(self, l => l.record(now, outcome))
    }

    fn admit(&mut self, now: SimTime, draw: f64) -> Admission {
        dispatch!(self, l => l.admit(now, draw))
    }

    fn on_send(&mut self, now: SimTime, is_retry: bool) {
        dispatch!(self, l => l.on_send(now, is_retry))
    }

    fn withdraw(&mut self, now: SimTime, sent: bool, permit: Option<Permit>) {
        dispatch!(self, l => l.withdraw(now, sent, permit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_limiter_name_but_none_and_budget_has_a_preset_and_every_preset_is_listed() {
        for &name in LIMITER_NAMES {
            let expected = !matches!(name, "none" | "budget");
            assert_eq!(Limiter::preset(name).is_some(), expected, "{name}");
        }
        assert_eq!(Limiter::preset("envoy-budget"), None);
        let mut names = LIMITER_NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), LIMITER_NAMES.len(), "names are unique");
    }

    #[test]
    fn limiters_that_only_gate_retries_admit_everything_by_default() {
        let mut grpc = Limiter::preset("grpc").unwrap();
        assert_eq!(grpc.admit(SimTime::ZERO, 0.0), Admission::Send);
        grpc.on_send(SimTime::ZERO, false);
        assert_eq!(grpc.admit(SimTime::ZERO, 0.999), Admission::Send);
    }
}
