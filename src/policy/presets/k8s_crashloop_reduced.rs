use super::Preset;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// The kubelet's CrashLoopBackOff with KEP-4603's reduced decay (feature gate ReduceDefaultCrashLoopBackOffDecay,
/// alpha and off by default since 1.33): the first crash restarts at once, then 1 s, 2 s, 4 s, … capped at 60 s.
pub(super) const PRESET: Preset = Preset {
    name: "k8s-crashloop-reduced",
    strategy: Strategy::ImmediateThenExponential,
    backoff: BackoffParams::new(SimDuration::from_secs(1), SimDuration::from_secs(60), 2.0),
    max_attempts: None,
    limiter: None,
    throttling_base: None,
    retry_after: RetryAfterPolicy::Honour,
    pushback: PushbackPolicy::Ignore,
    retry_on: None,
    deadline: None,
    source: "Kubernetes KEP-4603 (tune CrashLoopBackOff); pkg/kubelet/kubelet.go reducedInitial/MaxCrashLoopBackOff",
};
