use super::Preset;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// client-go's `retry.DefaultBackoff` (k8s.io/client-go `util/retry/util.go`): Steps 4, so 4 attempts, sleeping
/// 10 ms, 50 ms, 250 ms (Duration 10 ms, Factor 5, no cap: c = 1 day stands for none), each stretched by up to 10%.
pub(super) const PRESET: Preset = Preset {
    name: "client-go-backoff",
    strategy: Strategy::ProportionalJitter,
    backoff: BackoffParams {
        jitter_fraction: 0.1,
        ..BackoffParams::new(SimDuration::from_millis(10), SimDuration::from_secs(86_400), 5.0)
    },
    max_attempts: Some(4),
    limiter: None,
    throttling_base: None,
    retry_after: RetryAfterPolicy::Ignore,
    pushback: PushbackPolicy::Ignore,
    retry_on: None,
    deadline: None,
    source: "k8s.io/client-go util/retry/util.go (DefaultBackoff); k8s.io/apimachinery pkg/util/wait/backoff.go",
};
