use super::Preset;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// client-go's `retry.DefaultRetry` as used by `retry.RetryOnConflict` (k8s.io/client-go `util/retry/util.go`,
/// k8s.io/apimachinery `pkg/util/wait/backoff.go`): Steps 5, so 5 attempts and 4 sleeps, of 10 ms (Factor 1)
/// stretched by up to 10% (Jitter 0.1).
pub(super) const PRESET: Preset = Preset {
    name: "client-go-retry",
    strategy: Strategy::ProportionalJitter,
    backoff: BackoffParams {
        jitter_fraction: 0.1,
        ..BackoffParams::new(SimDuration::from_millis(10), SimDuration::from_secs(86_400), 1.0)
    },
    max_attempts: Some(5),
    limiter: None,
    throttling_base: None,
    retry_after: RetryAfterPolicy::Ignore,
    pushback: PushbackPolicy::Ignore,
    retry_on: None,
    deadline: None,
    source: "k8s.io/client-go util/retry/util.go (DefaultRetry); k8s.io/apimachinery pkg/util/wait/backoff.go",
};
