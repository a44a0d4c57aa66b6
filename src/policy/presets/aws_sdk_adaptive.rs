use super::Preset;
use crate::policy::limiters::LimiterKind;
use crate::policy::{BackoffParams, Strategy};
use crate::time::SimDuration;

/// AWS SDK adaptive retry mode: the standard mode's backoff and attempts, plus the CUBIC client-side rate limiter
/// on top of the retry quota (limiter `aws-adaptive`).
pub(super) const PRESET: Preset = Preset {
    name: "aws-sdk-adaptive",
    strategy: Strategy::FullJitterFromBase,
    backoff: BackoffParams { base: SimDuration::from_secs(1), cap: SimDuration::from_secs(20), multiplier: 2.0 },
    max_attempts: Some(3),
    limiter: Some(LimiterKind::AwsAdaptive),
    source: "AWS SDKs and Tools reference guide, \"Retry behavior\" (adaptive mode); botocore retries/adaptive.py",
};
