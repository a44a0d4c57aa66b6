use super::Preset;
use crate::policy::limiters::LimiterKind;
use crate::policy::{BackoffParams, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// Envoy's router retries with their defaults: num_retries 1 (2 attempts), backoff base 25 ms, max 250 ms
/// (10 × base), fully jittered over `[0, (2^n − 1)·25 ms)`; the cluster retry budget (20%, at least 3).
pub(super) const PRESET: Preset = Preset {
    name: "envoy",
    strategy: Strategy::EnvoyJitter,
    backoff: BackoffParams::new(SimDuration::from_millis(25), SimDuration::from_millis(250), 2.0),
    max_attempts: Some(2),
    limiter: Some(LimiterKind::Envoy),
    throttling_base: None,
    retry_after: RetryAfterPolicy::Honour,
    source: "Envoy router filter docs (x-envoy-max-retries, retry back-off) and cluster retry budgets",
};
