use super::{BackoffFormula, BackoffMemory, BackoffParams, uniform};
use crate::time::SimDuration;
use rand::Rng;

/// Exponential from the base plus an additive jitter, then capped and floored:
/// `sleep(n) = max(f, min(c, b·m^(n−1) + U(0, j)))`. tenacity's `wait_exponential_jitter(multiplier = b,
/// max = c, exp_base = m, jitter = j, min = f)` (tenacity 9.2.1, `tenacity/wait.py`): the jitter goes in before
/// the cap, so once the exponential passes `c` every sleep is exactly `c`.
pub struct ExponentialPlusJitter;

impl BackoffFormula for ExponentialPlusJitter {
    const NAME: &'static str = "exponential-plus-jitter";
    const FORMULA: &'static str = "max(f, min(c, b·m^(n−1) + U(0, j)))";
    const ABOUT: &'static str = "exponential from the base plus U(0, j), then capped (tenacity wait_exponential_jitter)";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, _: &mut BackoffMemory, rng: &mut R) -> SimDuration {
        let raw = params.exponential_nanos(n.saturating_sub(1)) + uniform(rng, 0.0, params.jitter.as_nanos_f64());
        SimDuration::from_nanos_f64(raw.min(params.cap_nanos()).max(params.floor.as_nanos_f64()))
    }
}
