use super::Preset;
use crate::policy::limiters::LimiterKind;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// Finagle's automatic retries (requeues): no delay between them (the default requeue backoff is
/// `Backoff.constant(Duration.Zero)`), limited by the client's RetryBudget (20% of requests + 10/s over 10 s).
/// Finagle also caps one request's requeues at ⌈0.2 × the budget's balance⌉ when it starts; with the full
/// reserve of 100 that is 20 retries, so 21 attempts here (a fixed cap, where Finagle's varies with the balance).
pub(super) const PRESET: Preset = Preset {
    name: "finagle",
    strategy: Strategy::None,
    backoff: BackoffParams::new(SimDuration::ZERO, SimDuration::ZERO, 2.0),
    max_attempts: Some(21),
    limiter: Some(LimiterKind::Finagle),
    throttling_base: None,
    retry_after: RetryAfterPolicy::Honour,
    pushback: PushbackPolicy::Ignore,
    retry_on: None,
    deadline: None,
    source: "Finagle finagle-core Retries.scala (Budget.default, MaxRequeuesPerReq 0.2), RequeueFilter.scala",
};
