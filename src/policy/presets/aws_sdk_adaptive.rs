use super::Preset;
use crate::policy::limiters::LimiterKind;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// AWS SDK adaptive retry mode: the standard mode's backoff and attempts, plus the CUBIC client-side rate limiter
/// on top of the retry quota (limiter `aws-adaptive`).
pub(super) const PRESET: Preset = Preset {
    name: "aws-sdk-adaptive",
    strategy: Strategy::FullJitterFromBase,
    backoff: BackoffParams::new(SimDuration::from_secs(1), SimDuration::from_secs(20), 2.0),
    max_attempts: Some(3),
    limiter: Some(LimiterKind::AwsAdaptive),
    throttling_base: None,
    retry_after: RetryAfterPolicy::Honour,
    pushback: PushbackPolicy::Ignore,
    retry_on: None,
    deadline: None,
    source: "AWS SDKs and Tools reference guide, \"Retry behavior\" (adaptive mode); botocore retries/adaptive.py",
};
