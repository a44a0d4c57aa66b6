use super::{Failed, Outcome, Permit, RetryLimiter, ShippedLimiter};
use crate::params::{ParamError, Point};
use crate::time::SimTime;

/// AWS SDK "standard" retry quota: a bucket of 500 tokens; a retry costs 5 (10 when it follows a timeout); a
/// successful retry refunds its cost; a first try that succeeds adds 1; no retry without enough tokens.
/// [`AwsRetryQuota::since_2026`] prices retries as botocore 1.44 and @smithy/util-retry 4.6 do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AwsRetryQuota {
    capacity: f64,
    tokens: f64,
    retry_cost: f64,
    timeout_cost: f64,
    throttled_cost: f64,
}

impl AwsRetryQuota {
    /// The classic SDK values: capacity 500, retry cost 5, 10 after a timeout (5 after throttling).
    pub fn standard() -> Self {
        Self::new(500.0, 5.0, 10.0, 5.0)
    }

    /// The values of botocore 1.44 (`botocore/retries/quota.py`, `standard.py`) and @smithy/util-retry 4.6:
    /// capacity 500, a retry costs 14, or 5 after a throttling error; a timeout costs as any error.
    pub fn since_2026() -> Self {
        Self::new(500.0, 14.0, 14.0, 5.0)
    }

    pub fn new(capacity: f64, retry_cost: f64, timeout_cost: f64, throttled_cost: f64) -> Self {
        AwsRetryQuota { capacity, tokens: capacity, retry_cost, timeout_cost, throttled_cost }
    }

    /// The tokens left now.
    #[cfg(test)]
    pub(crate) fn tokens(&self) -> f64 {
        self.tokens
    }
}

impl RetryLimiter for AwsRetryQuota {
    fn acquire_retry(&mut self, _: SimTime, failed: Failed) -> Option<Permit> {
        let cost = match failed {
            Failed::Error => self.retry_cost,
            Failed::Timeout => self.timeout_cost,
            Failed::Throttled => self.throttled_cost,
        };
        (self.tokens >= cost).then(|| {
            self.tokens -= cost;
            Permit::costing(cost)
        })
    }

    fn release(&mut self, _: SimTime, permit: Permit) {
        self.tokens = (self.tokens + permit.cost).min(self.capacity);
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
        while let Some(permit) = quota.acquire_retry(SimTime::ZERO, Failed::of(after_timeout, false)) {
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
        let mut quota = AwsRetryQuota::new(20.0, 5.0, 10.0, 5.0);
        let permit = quota.acquire_retry(SimTime::ZERO, Failed::Timeout).unwrap();
        assert_eq!(quota.tokens, 10.0);
        quota.record(SimTime::ZERO, Outcome::success(Some(permit)));
        assert_eq!(quota.tokens, 20.0);
        quota.acquire_retry(SimTime::ZERO, Failed::Error).unwrap();
        quota.record(SimTime::ZERO, Outcome::first_try(true));
        assert_eq!(quota.tokens, 16.0);
        for _ in 0..10 {
            quota.record(SimTime::ZERO, Outcome::first_try(true));
        }
        assert_eq!(quota.tokens, 20.0, "never above capacity");
    }
}
