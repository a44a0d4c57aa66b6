use super::{Outcome, Permit, RetryLimiter, ShippedLimiter};
use crate::params::{ParamError, Point};
use crate::time::SimTime;

/// AWS SDK "standard" retry quota: a bucket of 500 tokens; a retry costs 5 (10 when it follows a timeout); a
/// successful retry refunds its cost; a first try that succeeds adds 1; no retry without enough tokens.
/// The 2026 behaviour's cost of 14 for transient errors can be had with `new(500, 14, 10)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AwsRetryQuota {
    capacity: f64,
    tokens: f64,
    retry_cost: f64,
    timeout_cost: f64,
}

impl AwsRetryQuota {
    /// The SDK defaults: capacity 500, retry cost 5, timeout retry cost 10.
    pub fn standard() -> Self {
        Self::new(500.0, 5.0, 10.0)
    }

    pub fn new(capacity: f64, retry_cost: f64, timeout_cost: f64) -> Self {
        AwsRetryQuota { capacity, tokens: capacity, retry_cost, timeout_cost }
    }
}

impl RetryLimiter for AwsRetryQuota {
    fn acquire_retry(&mut self, _: SimTime, after_timeout: bool) -> Option<Permit> {
        let cost = if after_timeout { self.timeout_cost } else { self.retry_cost };
        (self.tokens >= cost).then(|| {
            self.tokens -= cost;
            Permit { cost }
        })
    }

    fn record(&mut self, _: SimTime, outcome: Outcome) {
        if !outcome.succeeded {
            return;
        }
        let refund = outcome.permit.map_or(1.0, |permit| permit.cost);
        self.tokens = (self.tokens + refund).min(self.capacity);
    }
}

/// `limiter = "aws-quota"`.
pub struct AwsQuota;

impl ShippedLimiter for AwsQuota {
    type State = AwsRetryQuota;
    const NAME: &'static str = "aws-quota";
    const ABOUT: &'static str = "AWS SDK retry quota: 500 tokens, a retry costs 5 (10 after a timeout), a successful retry refunds its \
                                 cost, a successful first try adds 1";
    const SOURCE: &'static str = "AWS SDKs and Tools reference guide, \"Retry behavior\" (standard mode retry quota)";

    fn build(_: &Point) -> Result<AwsRetryQuota, ParamError> {
        Ok(AwsRetryQuota::standard())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retries_until_empty(after_timeout: bool) -> u32 {
        let mut quota = AwsRetryQuota::standard();
        let mut retries = 0;
        while let Some(permit) = quota.acquire_retry(SimTime::ZERO, after_timeout) {
            quota.record(
                SimTime::ZERO,
                if after_timeout { Outcome::timeout(Some(permit)) } else { Outcome::failure(Some(permit)) },
            );
            retries += 1;
        }
        retries
    }

    #[test]
    fn at_total_failure_the_quota_allows_100_retries_or_50_after_timeouts() {
        assert_eq!(retries_until_empty(false), 100);
        assert_eq!(retries_until_empty(true), 50);
    }

    #[test]
    fn a_successful_retry_refunds_its_cost_and_first_tries_add_one() {
        let mut quota = AwsRetryQuota::new(20.0, 5.0, 10.0);
        let permit = quota.acquire_retry(SimTime::ZERO, true).unwrap();
        assert_eq!(quota.tokens, 10.0);
        quota.record(SimTime::ZERO, Outcome::success(Some(permit)));
        assert_eq!(quota.tokens, 20.0);
        quota.acquire_retry(SimTime::ZERO, false).unwrap();
        quota.record(SimTime::ZERO, Outcome::first_try(true));
        assert_eq!(quota.tokens, 16.0);
        for _ in 0..10 {
            quota.record(SimTime::ZERO, Outcome::first_try(true));
        }
        assert_eq!(quota.tokens, 20.0, "never above capacity");
    }
}
