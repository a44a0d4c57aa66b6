use super::Preset;
use crate::policy::limiters::LimiterKind;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// botocore's adaptive retry mode as of 1.44.8 (`botocore/retries/adaptive.py`): the standard mode's sleeps,
/// attempts and Retry-After handling ([`botocore-standard`]) plus the CUBIC client-side rate limiter (limiter
/// `aws-adaptive`, whose quota keeps the classic prices 5 and 10, not 14 and 5).
pub(super) const PRESET: Preset = Preset {
    name: "botocore-adaptive",
    strategy: Strategy::FullJitterFromBase,
    backoff: BackoffParams::new(SimDuration::from_millis(50), SimDuration::from_secs(20), 2.0),
    max_attempts: Some(3),
    limiter: Some(LimiterKind::AwsAdaptive),
    throttling_base: Some(SimDuration::from_secs(1)),
    retry_after: RetryAfterPolicy::AwsBounded,
    pushback: PushbackPolicy::Ignore,
    retry_on: Some("429, 500, 502, 503, 504, timeout, reset"),
    deadline: None,
    source: "botocore 1.44.8 botocore/retries/adaptive.py (ClientRateLimiter, CubicCalculator) over standard.py",
};
