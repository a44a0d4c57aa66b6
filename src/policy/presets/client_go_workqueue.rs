use super::Preset;
use crate::policy::limiters::LimiterKind;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// client-go's default controller rate limiter (k8s.io/client-go `util/workqueue/default_rate_limiters.go`,
/// DefaultTypedControllerRateLimiter): the n-th requeue of an item waits the longer (MaxOf) of 5 ms·2^(n−1),
/// capped at 1000 s, forever, and its reservation in the queue's shared token bucket (10 per second, burst 100:
/// `client-go-bucket`: the fleet's one limiter is one controller's queue; `limiter_scope = "client"` gives a queue
/// to each controller).
pub(super) const PRESET: Preset = Preset {
    name: "client-go-workqueue",
    strategy: Strategy::ExponentialFromBase,
    backoff: BackoffParams::new(SimDuration::from_millis(5), SimDuration::from_secs(1000), 2.0),
    max_attempts: None,
    limiter: Some(LimiterKind::ClientGoBucket),
    throttling_base: None,
    retry_after: RetryAfterPolicy::Ignore,
    pushback: PushbackPolicy::Ignore,
    retry_on: None,
    deadline: None,
    source: "k8s.io/client-go util/workqueue/default_rate_limiters.go (ItemExponentialFailureRateLimiter 5 ms, 1000 s, MaxOf \
             BucketRateLimiter 10/s, burst 100)",
};
