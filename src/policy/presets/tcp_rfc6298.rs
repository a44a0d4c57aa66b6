use super::Preset;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// TCP's retransmission timer (RFC 6298): initial RTO 1 s, doubled on each timeout (rule 5.5), capped at 60 s
/// or more (rule 2.5; we use 120 s, Linux's TCP_RTO_MAX). With instant failures the retransmissions go out at
/// 1, 3, 7, 15, 31, 63 s. 16 attempts: the original and 15 retransmissions, like Linux's tcp_retries2 = 15.
pub(super) const PRESET: Preset = Preset {
    name: "tcp-rfc6298",
    strategy: Strategy::ExponentialFromBase,
    backoff: BackoffParams::new(SimDuration::from_secs(1), SimDuration::from_secs(120), 2.0),
    max_attempts: Some(16),
    limiter: None,
    throttling_base: None,
    retry_after: RetryAfterPolicy::Honour,
    pushback: PushbackPolicy::Ignore,
    retry_on: None,
    deadline: None,
    source: "RFC 6298 (initial RTO 1 s, back off ×2, max ≥ 60 s); Linux tcp_retries2 = 15",
};
