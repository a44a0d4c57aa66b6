use super::{AwsRetryQuota, ShippedLimiter};
use crate::params::{ParamError, Point};

/// `limiter = "aws-quota-2026"`: the AWS retry quota as botocore 1.44 and the AWS SDK for JavaScript v3
/// (@smithy/util-retry 4.6) price it: 500 tokens, a retry costs 14, or 5 after a throttling error, with no
/// separate timeout price; a successful request returns its last retry's cost, or 1 if it never retried.
pub struct AwsQuota2026;

impl ShippedLimiter for AwsQuota2026 {
    type State = AwsRetryQuota;
    const NAME: &'static str = "aws-quota-2026";
    const ABOUT: &'static str = "AWS SDK retry quota as priced since 2026: 500 tokens, a retry costs 14 (5 after \
                                 throttling), a successful retry refunds its cost, a successful first try adds 1";
    const SOURCE: &'static str = "botocore 1.44.8 botocore/retries/quota.py and standard.py (RetryQuotaChecker); \
                                  @smithy/util-retry 4.6.2 StandardRetryStrategy";

    fn build(_: &Point) -> Result<AwsRetryQuota, ParamError> {
        Ok(AwsRetryQuota::since_2026())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::limiters::{Failed, Outcome, RetryLimiter};
    use crate::time::SimTime;

    fn retries_until_empty(failed: Failed) -> u32 {
        let mut quota = AwsRetryQuota::since_2026();
        let mut retries = 0;
        while let Some(permit) = quota.acquire_retry(SimTime::ZERO, failed) {
            quota.record(SimTime::ZERO, Outcome::failure(Some(permit)));
            retries += 1;
        }
        retries
    }

    #[test]
    fn at_total_failure_500_tokens_buy_35_retries_or_100_after_throttling() {
        // 500 / 14 = 35.7 and 500 / 5 = 100; a timeout is priced as any other error.
        assert_eq!(retries_until_empty(Failed::Error), 35);
        assert_eq!(retries_until_empty(Failed::Timeout), 35);
        assert_eq!(retries_until_empty(Failed::Throttled), 100);
    }
}
