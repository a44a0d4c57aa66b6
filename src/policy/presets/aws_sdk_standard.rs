use super::Preset;
use crate::policy::limiters::LimiterKind;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// AWS SDK standard retry mode, classic values: 3 attempts; the delay before retry i (1-based) is
/// `U(0,1)·min(1 s·2^(i−1), 20 s)`; retries spend the 500-token retry quota (5 per retry, 10 after a timeout).
/// The behaviour the AWS guide documented until 2026 and botocore shipped before 1.44; today's botocore is
/// `botocore-standard` (50 ms base for transient errors, 1 s after throttling, costs 14 and 5).
pub(super) const PRESET: Preset = Preset {
    name: "aws-sdk-standard",
    strategy: Strategy::FullJitterFromBase,
    backoff: BackoffParams::new(SimDuration::from_secs(1), SimDuration::from_secs(20), 2.0),
    max_attempts: Some(3),
    limiter: Some(LimiterKind::AwsQuota),
    throttling_base: None,
    retry_after: RetryAfterPolicy::Honour,
    pushback: PushbackPolicy::Ignore,
    retry_on: None,
    deadline: None,
    source: "AWS SDKs and Tools reference guide, \"Retry behavior\" (standard mode)",
};
