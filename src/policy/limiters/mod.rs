//! Retry limiters as real systems ship them: they decide whether a client may retry at all, whatever its
//! backoff says. Each keeps per-client state and sees every result; pure values, no engine.
//!
//! The protocol: before each retry the client asks [`RetryLimiter::acquire_retry`], which may spend tokens and
//! answers with a [`Permit`] or `None` (do not retry); after every attempt it reports the [`Outcome`], passing
//! back the permit the attempt was made with, if any (AWS refunds a successful retry's cost).

mod aws_quota;
mod circuit_breaker;
mod grpc_throttle;
mod retry_budget;
mod token_bucket_deposit;

pub use aws_quota::AwsRetryQuota;
pub use circuit_breaker::{BreakerState, CircuitBreaker};
pub use grpc_throttle::GrpcThrottle;
pub use retry_budget::RetryBudget;
pub use token_bucket_deposit::{DepositRule, RetryTokenBucket};

use crate::engine::SimTime;

/// Permission to make one retry, and what it cost (returned on success by limiters that refund).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Permit {
    pub cost: f64,
}

/// What one attempt came to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    pub succeeded: bool,
    /// The attempt failed by timing out (AWS charges more for retrying those).
    pub timed_out: bool,
    /// The permit this attempt was made with: `None` for a first try.
    pub permit: Option<Permit>,
}

impl Outcome {
    pub fn first_try(succeeded: bool) -> Self {
        Outcome { succeeded, timed_out: false, permit: None }
    }
}

/// One client's retry limiter.
pub trait RetryLimiter {
    /// May the client retry now? `after_timeout` says whether the failed attempt timed out.
    fn acquire_retry(&mut self, now: SimTime, after_timeout: bool) -> Option<Permit>;
    /// Every attempt's result, first tries included.
    fn record(&mut self, now: SimTime, outcome: Outcome);
}

/// The `limiter` choices models offer: `none`, `budget` (each model's own ratio budget) and the presets of
/// [`Limiter::preset`].
pub const LIMITER_NAMES: &[&str] = &["none", "budget", "token-bucket", "breaker", "grpc", "aws-quota", "finagle"];

/// Any of the limiters, dispatched with a `match` (models keep one per client).
#[derive(Clone, Debug, PartialEq)]
pub enum Limiter {
    Grpc(GrpcThrottle),
    AwsQuota(AwsRetryQuota),
    TokenBucket(RetryTokenBucket),
    Breaker(CircuitBreaker),
    Budget(RetryBudget),
}

impl Limiter {
    /// The limiters as shipped, by name: `token-bucket` (0.1 per call, capacity 5, Brooker 2022), `breaker` (no
    /// retries while more than 10% of the last 100 calls failed, 1 s pauses), `grpc` (10, 0.1), `aws-quota`
    /// (500, 5, 10) and `finagle` (20% + 10/s over 10 s). `None` for any other name.
    pub fn preset(name: &str) -> Option<Limiter> {
        match name {
            "token-bucket" => Some(Limiter::TokenBucket(RetryTokenBucket::new(0.1, 5.0, DepositRule::PerCall))),
            "breaker" => {
                Some(Limiter::Breaker(CircuitBreaker::new(0.1, 100, crate::engine::SimDuration::from_secs(1))))
            }
            "grpc" => Some(Limiter::Grpc(GrpcThrottle::new(10.0, 0.1))),
            "aws-quota" => Some(Limiter::AwsQuota(AwsRetryQuota::standard())),
            "finagle" => Some(Limiter::Budget(RetryBudget::finagle())),
            _ => None,
        }
    }
}

impl RetryLimiter for Limiter {
    fn acquire_retry(&mut self, now: SimTime, after_timeout: bool) -> Option<Permit> {
        match self {
            Limiter::Grpc(l) => l.acquire_retry(now, after_timeout),
            Limiter::AwsQuota(l) => l.acquire_retry(now, after_timeout),
            Limiter::TokenBucket(l) => l.acquire_retry(now, after_timeout),
            Limiter::Breaker(l) => l.acquire_retry(now, after_timeout),
            Limiter::Budget(l) => l.acquire_retry(now, after_timeout),
        }
    }

    fn record(&mut self, now: SimTime, outcome: Outcome) {
        match self {
            Limiter::Grpc(l) => l.record(now, outcome),
            Limiter::AwsQuota(l) => l.record(now, outcome),
            Limiter::TokenBucket(l) => l.record(now, outcome),
            Limiter::Breaker(l) => l.record(now, outcome),
            Limiter::Budget(l) => l.record(now, outcome),
        }
    }
}
