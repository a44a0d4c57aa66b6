use super::Preset;
use crate::policy::limiters::LimiterKind;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// The AWS SDK for JavaScript v3's standard retry strategy (`@smithy/util-retry` 4.6.2 over @smithy/core 3.41.1):
/// 3 attempts; before retry n it sleeps `⌊U(0, min(b·2^(n−1), 20 s))⌋` whole ms, b = 50 ms after a transient
/// error and 1 s after throttling; a Retry-After hint may lengthen a sleep by at most 5 s; retries spend the
/// 2026-priced quota (14 tokens, 5 after throttling).
pub(super) const PRESET: Preset = Preset {
    name: "aws-sdk-js-v3",
    strategy: Strategy::FullJitterWholeMs,
    backoff: BackoffParams::new(SimDuration::from_millis(50), SimDuration::from_secs(20), 2.0),
    max_attempts: Some(3),
    limiter: Some(LimiterKind::AwsQuota2026),
    throttling_base: Some(SimDuration::from_secs(1)),
    retry_after: RetryAfterPolicy::AwsBounded,
    pushback: PushbackPolicy::Ignore,
    retry_on: Some("429, 500, 502, 503, 504, timeout, reset"),
    deadline: None,
    source: "@smithy/util-retry 4.6.2 (@smithy/core 3.41.1 retry: StandardRetryStrategy, DefaultRetryBackoffStrategy)",
};
