use super::Preset;
use crate::policy::{BackoffParams, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// The per-item half of client-go's default controller rate limiter (k8s.io/client-go `util/workqueue/
/// default_rate_limiters.go`, DefaultTypedControllerRateLimiter): the n-th requeue of an item waits 5 ms·2^(n−1),
/// capped at 1000 s, forever. The shared token bucket (10 per second, burst 100) it is combined with by MaxOf
/// is not modelled: it only matters above 10 requeues per second across the whole controller.
pub(super) const PRESET: Preset = Preset {
    name: "client-go-workqueue",
    strategy: Strategy::ExponentialFromBase,
    backoff: BackoffParams::new(SimDuration::from_millis(5), SimDuration::from_secs(1000), 2.0),
    max_attempts: None,
    limiter: None,
    throttling_base: None,
    retry_after: RetryAfterPolicy::Ignore,
    retry_on: None,
    deadline: None,
    source: "k8s.io/client-go util/workqueue/default_rate_limiters.go (ItemExponentialFailureRateLimiter 5 ms, 1000 s)",
};
