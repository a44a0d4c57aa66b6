use super::Preset;
use crate::policy::{BackoffParams, Strategy};
use crate::time::SimDuration;

/// Kubernetes CrashLoopBackOff: restarts after 10 s, 20 s, 40 s, … capped at 300 s, forever. (The kubelet resets
/// the backoff after 10 minutes of clean running, which a retry policy has no notion of.)
pub(super) const PRESET: Preset = Preset {
    name: "k8s-crashloop",
    strategy: Strategy::ExponentialFromBase,
    backoff: BackoffParams { base: SimDuration::from_secs(10), cap: SimDuration::from_secs(300), multiplier: 2.0 },
    max_attempts: None,
    limiter: None,
    source: "Kubernetes docs, Pod lifecycle: container restart policy (CrashLoopBackOff)",
};
