use super::Preset;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// google-api-core's default `Retry` as of 2.44.0 (`google/api_core/retry/retry_base.py`): before retry n it
/// sleeps `U(0, min(1 s·2^(n−1), 60 s))`, with no attempt limit but a 120 s timeout: it gives up rather than sleep
/// past 120 s since the call began. Retry-After is not read.
pub(super) const PRESET: Preset = Preset {
    name: "google-api-core",
    strategy: Strategy::FullJitterFromBase,
    backoff: BackoffParams::new(SimDuration::from_secs(1), SimDuration::from_secs(60), 2.0),
    max_attempts: None,
    limiter: None,
    throttling_base: None,
    retry_after: RetryAfterPolicy::Ignore,
    pushback: PushbackPolicy::Ignore,
    retry_on: Some("429, 500, 503, reset"),
    deadline: Some(SimDuration::from_secs(120)),
    source: "google-api-core 2.44.0 google/api_core/retry/retry_base.py (exponential_sleep_generator, defaults)",
};
