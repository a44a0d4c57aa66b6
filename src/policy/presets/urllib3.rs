use super::Preset;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// urllib3's `Retry.DEFAULT` as of 2.8.0 (`src/urllib3/util/retry.py`): `Retry(3)`, so 4 attempts, and
/// `backoff_factor` 0, so every sleep is 0 (set `base` for the factor and `jitter` for `backoff_jitter`: the
/// first retry is immediate, retry n ≥ 2 sleeps `min(120 s, b·2^(n−1) + U(0, j))`); a Retry-After hint replaces
/// the sleep (urllib3 caps it at 6 h).
pub(super) const PRESET: Preset = Preset {
    name: "urllib3",
    strategy: Strategy::ZeroThenExponential,
    backoff: BackoffParams::new(SimDuration::ZERO, SimDuration::from_secs(120), 2.0),
    max_attempts: Some(4),
    limiter: None,
    throttling_base: None,
    retry_after: RetryAfterPolicy::Honour,
    pushback: PushbackPolicy::Ignore,
    retry_on: Some("413, 429, 503, timeout, reset"),
    deadline: None,
    source: "urllib3 2.8.0 src/urllib3/util/retry.py (Retry.DEFAULT, get_backoff_time, DEFAULT_BACKOFF_MAX)",
};
