use super::Preset;
use crate::policy::limiters::LimiterKind;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// gRPC retry policy (gRFC A6) with the values of A6's example retryPolicy (maxAttempts 4, initialBackoff 0.1 s,
/// maxBackoff 1 s, backoffMultiplier 2), the ±20% jitter A6 specifies since 2024, and retry throttling
/// (maxTokens 10, tokenRatio 0.1). A gRPC client reads no HTTP Retry-After: it honours the server's pushback
/// (`grpc-retry-pushback-ms`), which restarts the backoff from its base.
pub(super) const PRESET: Preset = Preset {
    name: "grpc",
    strategy: Strategy::GrpcJitter,
    backoff: BackoffParams::new(SimDuration::from_millis(100), SimDuration::from_secs(1), 2.0),
    max_attempts: Some(4),
    limiter: Some(LimiterKind::Grpc),
    throttling_base: None,
    retry_after: RetryAfterPolicy::Ignore,
    pushback: PushbackPolicy::Honour,
    retry_on: None,
    deadline: None,
    source: "gRFC A6 client retries (example retryPolicy; jitter ±20% per grpc/proposal#452, 2024)",
};
