use super::{Failed, Outcome, Permit, RetryLimiter, ShippedLimiter, positive_knob};
use crate::params::{Choice, ParamDefault, ParamError, ParamKind, ParamSpec, Point, Section, Value, choices};
use crate::time::SimTime;

choices! {
    /// When a retry token bucket earns its tokens.
    pub enum DepositRule {
        /// After every call, successful or not (Brooker 2022: 0.1 per call).
        PerCall = "per-call",
        /// Only after a successful call.
        PerSuccess = "per-success",
    }
}

/// A retry token bucket: calls deposit `deposit` tokens (by `rule`) up to `capacity`; a retry spends one.
/// Brooker, "Fixing retries with token buckets and circuit breakers" (2022): 0.1 per call, capacity 5.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryTokenBucket {
    deposit: f64,
    capacity: f64,
    rule: DepositRule,
    tokens: f64,
}

impl RetryTokenBucket {
    /// Starts full.
    pub fn new(deposit: f64, capacity: f64, rule: DepositRule) -> Self {
        RetryTokenBucket { deposit, capacity, rule, tokens: capacity }
    }

    /// The tokens in the bucket now.
    #[cfg(test)]
    pub(crate) fn tokens(&self) -> f64 {
        self.tokens
    }
}

impl RetryLimiter for RetryTokenBucket {
    fn acquire_retry(&mut self, _: SimTime, _: Failed) -> Option<Permit> {
        (self.tokens >= 1.0).then(|| {
            self.tokens -= 1.0;
            Permit::costing(1.0)
        })
    }

    /// A retry costs one token, whatever the permit says (a stack's permit carries its costliest member's cost).
    fn release(&mut self, _: SimTime, _: Permit) {
        self.tokens = (self.tokens + 1.0).min(self.capacity);
    }

    fn record(&mut self, _: SimTime, outcome: Outcome) {
        if self.rule == DepositRule::PerCall || outcome.succeeded {
            self.tokens = (self.tokens + self.deposit).min(self.capacity);
        }
    }
}

/// `limiter = "token-bucket"`: Brooker's retry token bucket.
pub struct TokenBucket;

impl ShippedLimiter for TokenBucket {
    type State = RetryTokenBucket;
    const NAME: &'static str = "token-bucket";
    const ABOUT: &'static str = "retry token bucket: every call deposits bucket_deposit up to bucket_capacity, a \
                                 retry spends 1 (0.1 per call, capacity 5)";
    const SOURCE: &'static str = "Brooker, \"Fixing retries with token buckets and circuit breakers\" (2022)";
    const KNOBS: &'static [ParamSpec] = &[
        ParamSpec::new(
            Section::Client,
            "bucket_deposit",
            ParamKind::Real { min: 0.0, max: 1000.0 },
            ParamDefault::Implied(Value::Real(0.1)),
            "token-bucket: tokens deposited per call or per success, > 0",
        ),
        ParamSpec::new(
            Section::Client,
            "bucket_capacity",
            ParamKind::Real { min: 0.0, max: 1e9 },
            ParamDefault::Implied(Value::Real(5.0)),
            "token-bucket: capacity, > 0",
        ),
        ParamSpec::new(
            Section::Client,
            "deposit_rule",
            ParamKind::Choice(DepositRule::NAMES),
            ParamDefault::Implied(Value::Choice("per-call")),
            "token-bucket: deposit after every call, or only after successes",
        ),
    ];

    fn build(point: &Point) -> Result<RetryTokenBucket, ParamError> {
        let deposit = positive_knob(point, "bucket_deposit", "with no deposits the bucket never refills")?;
        let capacity = positive_knob(point, "bucket_capacity", "an empty bucket allows no retry")?;
        Ok(RetryTokenBucket::new(deposit, capacity, point.choice_of("deposit_rule")?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_total_failure_one_retry_per_ten_calls_once_the_bucket_is_empty() {
        let mut bucket = RetryTokenBucket::new(0.1, 5.0, DepositRule::PerCall);
        let mut retries = 0;
        for _ in 0..1_000 {
            bucket.record(SimTime::ZERO, Outcome::first_try(false));
            if let Some(permit) = bucket.acquire_retry(SimTime::ZERO, Failed::Error) {
                retries += 1;
                bucket.record(SimTime::ZERO, Outcome::failure(Some(permit)));
            }
        }
        // Each first try and each retry deposit 0.1; a retry spends 1. In steady state r = 0.1·(1000 + r), so
        // r ≈ 111, plus the 5 tokens the bucket started with.
        assert!((retries as f64 - (100.0 / 0.9 + 5.0)).abs() <= 2.0, "{retries}");
    }

    #[test]
    fn per_success_deposits_nothing_when_everything_fails() {
        let mut bucket = RetryTokenBucket::new(0.1, 5.0, DepositRule::PerSuccess);
        let mut retries = 0;
        for _ in 0..1_000 {
            bucket.record(SimTime::ZERO, Outcome::first_try(false));
            retries += u32::from(bucket.acquire_retry(SimTime::ZERO, Failed::Error).is_some());
        }
        assert_eq!(retries, 5, "only the initial tokens");
    }
}
