use super::Preset;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// The kubelet's CrashLoopBackOff with its defaults (kubernetes `pkg/kubelet/kubelet.go` newCrashLoopBackOff over
/// client-go `flowcontrol.Backoff`): the first crash restarts at once, then 10 s, 20 s, 40 s, … capped at 300 s,
/// counted from the exit, forever. KEP-5593's configurable maximum is `cap` (beta, on by default, in 1.35; the
/// kubelet lowers the initial delay to the maximum when it is smaller, which `base` must then be set to). The
/// kubelet also forgets the backoff after a run longer than 10 minutes, which a retry policy cannot know: the
/// preset tests check restart times with that rule.
pub(super) const PRESET: Preset = Preset {
    name: "k8s-crashloop",
    strategy: Strategy::ImmediateThenExponential,
    backoff: BackoffParams::new(SimDuration::from_secs(10), SimDuration::from_secs(300), 2.0),
    max_attempts: None,
    limiter: None,
    throttling_base: None,
    retry_after: RetryAfterPolicy::Honour,
    pushback: PushbackPolicy::Ignore,
    retry_on: None,
    deadline: None,
    source: "Kubernetes pkg/kubelet/kubelet.go (newCrashLoopBackOff, 10 s to 300 s), client-go util/flowcontrol/backoff.go",
};
