use super::Preset;
use crate::policy::{BackoffParams, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// Kubernetes CrashLoopBackOff: restarts after 10 s, 20 s, 40 s, … capped at 300 s, forever. (The kubelet resets
/// the backoff after 10 minutes of clean running, which a retry policy has no notion of.)
pub(super) const PRESET: Preset = Preset {
    name: "k8s-crashloop",
    strategy: Strategy::ExponentialFromBase,
    backoff: BackoffParams::new(SimDuration::from_secs(10), SimDuration::from_secs(300), 2.0),
    max_attempts: None,
    limiter: None,
    throttling_base: None,
    retry_after: RetryAfterPolicy::Honour,
    source: "Kubernetes docs, Pod lifecycle: container restart policy (CrashLoopBackOff)",
};
