use super::Preset;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// botocore's legacy retry mode as of 1.44.8 (`botocore/retryhandler.py` with `data/_retry.json`'s defaults): 5
/// attempts; before retry n it sleeps `U(0, 1)·2^(n−1)` s, whatever the error, with no cap (c = 1 day stands for
/// none), no quota and no Retry-After handling. (DynamoDB's fixed 50 ms·2^(n−1) with 10 attempts is not modelled.)
pub(super) const PRESET: Preset = Preset {
    name: "botocore-legacy",
    strategy: Strategy::FullJitterFromBase,
    backoff: BackoffParams::new(SimDuration::from_secs(1), SimDuration::from_secs(86_400), 2.0),
    max_attempts: Some(5),
    limiter: None,
    throttling_base: None,
    retry_after: RetryAfterPolicy::Ignore,
    pushback: PushbackPolicy::Ignore,
    retry_on: Some("429, 500, 502, 503, 504, 509, timeout, reset"),
    deadline: None,
    source: "botocore 1.44.8 botocore/retryhandler.py (delay_exponential), botocore/data/_retry.json (__default__)",
};
