use super::Preset;
use crate::policy::limiters::LimiterKind;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// Envoy's router retries with their defaults: num_retries 1 (2 attempts), backoff base 25 ms, max 250 ms
/// (10 × base); retry n draws from `[0, min(250 ms, 25 ms·2^(n−1)))` as Envoy's source does since 2020
/// (`source/common/common/backoff_strategy.cc`, JitteredExponentialBackOffStrategy; its docs still describe the
/// older `[0, (2^n − 1)·25 ms)`, strategy `envoy-jitter`); the cluster retry budget (20%, at least 3). Envoy reads
/// Retry-After only where a route's `rate_limited_retry_back_off` names it (`retry_state_impl.cc`), so not here.
pub(super) const PRESET: Preset = Preset {
    name: "envoy",
    strategy: Strategy::FullJitterFromBase,
    backoff: BackoffParams::new(SimDuration::from_millis(25), SimDuration::from_millis(250), 2.0),
    max_attempts: Some(2),
    limiter: Some(LimiterKind::Envoy),
    throttling_base: None,
    retry_after: RetryAfterPolicy::Ignore,
    pushback: PushbackPolicy::Ignore,
    retry_on: None,
    deadline: None,
    source: "Envoy source/common/common/backoff_strategy.cc, router filter docs (x-envoy-max-retries), cluster retry budgets",
};
