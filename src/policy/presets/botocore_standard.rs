use super::Preset;
use crate::policy::limiters::LimiterKind;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// botocore's standard retry mode as of 1.44.8 (`botocore/retries/standard.py`, `quota.py`): 3 attempts; before
/// retry n it sleeps `U(0, min(b·2^(n−1), 20 s))` with b = 50 ms after a transient error and 1 s after throttling
/// (a 429 or a throttling error code); an `x-amz-retry-after` hint may lengthen a sleep by at most 5 s; retries
/// spend the 2026-priced quota (14 tokens, 5 after throttling). DynamoDB's 25 ms base and 4 attempts are not
/// modelled. Differs from `aws-sdk-standard` (the classic 1 s base for every error, costs 5 and 10).
pub(super) const PRESET: Preset = Preset {
    name: "botocore-standard",
    strategy: Strategy::FullJitterFromBase,
    backoff: BackoffParams::new(SimDuration::from_millis(50), SimDuration::from_secs(20), 2.0),
    max_attempts: Some(3),
    limiter: Some(LimiterKind::AwsQuota2026),
    throttling_base: Some(SimDuration::from_secs(1)),
    retry_after: RetryAfterPolicy::AwsBounded,
    pushback: PushbackPolicy::Ignore,
    retry_on: Some("429, 500, 502, 503, 504, timeout, reset"),
    deadline: None,
    source: "botocore 1.44.8 botocore/retries/standard.py (ExponentialBackoff, RetryQuotaChecker), quota.py",
};
