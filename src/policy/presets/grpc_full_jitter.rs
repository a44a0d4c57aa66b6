use super::Preset;
use crate::policy::limiters::LimiterKind;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// gRPC retry policy as gRFC A6 specified it until 2024: retry n at `random(0, min(initialBackoff·
/// backoffMultiplier^(n−1), maxBackoff))`, full jitter. In August 2024 (grpc/proposal#452) A6 changed this to
/// `min(initialBackoff·backoffMultiplier^(n−1), maxBackoff)·random(0.8, 1.2)` (preset `grpc`); grpc-go and
/// grpc-java followed in late 2024 and early 2025. Same example values, throttling and pushback as `grpc`.
pub(super) const PRESET: Preset = Preset {
    name: "grpc-full-jitter",
    strategy: Strategy::FullJitterFromBase,
    backoff: BackoffParams::new(SimDuration::from_millis(100), SimDuration::from_secs(1), 2.0),
    max_attempts: Some(4),
    limiter: Some(LimiterKind::Grpc),
    throttling_base: None,
    retry_after: RetryAfterPolicy::Ignore,
    pushback: PushbackPolicy::Honour,
    retry_on: None,
    deadline: None,
    source: "gRFC A6 client retries as published 2017-2024 (full jitter)",
};
