use super::{BackoffFormula, BackoffMemory, BackoffParams, uniform};
use crate::time::SimDuration;
use rand::Rng;

/// No sleep before the first retry, then exponential plus jitter, capped: `sleep(1) = 0`,
/// `sleep(n) = min(c, b·m^(n−1) + U(0, j))` for `n ≥ 2`. urllib3's `Retry.get_backoff_time` (urllib3 2.8.0,
/// `src/urllib3/util/retry.py`) with `backoff_factor = b`, `backoff_jitter = j`, `backoff_max = c` (m = 2 there):
/// the first retry is immediate and draws no jitter.
pub struct ZeroThenExponential;

impl BackoffFormula for ZeroThenExponential {
    const NAME: &'static str = "zero-then-exponential";
    const FORMULA: &'static str = "0 for n = 1, then min(c, b·m^(n−1) + U(0, j))";
    const ABOUT: &'static str = "first retry at once, then exponential plus U(0, j), capped (urllib3 Retry)";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, _: &mut BackoffMemory, rng: &mut R) -> SimDuration {
        if n <= 1 {
            return SimDuration::ZERO;
        }
        let raw = params.exponential_nanos(n - 1) + uniform(rng, 0.0, params.jitter.as_nanos_f64());
        SimDuration::from_nanos_f64(raw.min(params.cap_nanos()))
    }
}
