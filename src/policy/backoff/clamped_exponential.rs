use super::{BackoffFormula, BackoffMemory, BackoffParams};
use crate::time::SimDuration;
use rand::Rng;

/// Capped exponential from the base with a floor: `sleep(n) = max(f, min(c, b·m^(n−1)))`. tenacity's
/// `wait_exponential(multiplier = b, min = f, max = c, exp_base = m)` (tenacity 9.2.1, `tenacity/wait.py`), whose
/// `attempt_number` is our n.
pub struct ClampedExponential;

impl BackoffFormula for ClampedExponential {
    const NAME: &'static str = "clamped-exponential";
    const FORMULA: &'static str = "max(f, min(c, b·m^(n−1)))";
    const ABOUT: &'static str = "capped exponential from the base, never below the floor f (tenacity wait_exponential)";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, _: &mut BackoffMemory, _: &mut R) -> SimDuration {
        let exponential = params.capped_exponential_nanos(n.saturating_sub(1));
        SimDuration::from_nanos_f64(exponential.max(params.floor.as_nanos_f64()))
    }
}
