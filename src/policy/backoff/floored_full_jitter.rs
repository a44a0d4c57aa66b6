use super::{BackoffFormula, BackoffMemory, BackoffParams, uniform};
use crate::time::SimDuration;
use rand::Rng;

/// Full jitter above a floor: `sleep(n) = U(f, max(f, min(c, b·m^(n−1))))`. tenacity's
/// `wait_random_exponential(multiplier = b, min = f, max = c, exp_base = m)` (tenacity 9.2.1, `tenacity/wait.py`),
/// which draws between its floor and what `wait_exponential` would wait.
pub struct FlooredFullJitter;

impl BackoffFormula for FlooredFullJitter {
    const NAME: &'static str = "floored-full-jitter";
    const FORMULA: &'static str = "U(f, max(f, min(c, b·m^(n−1))))";
    const ABOUT: &'static str = "full jitter between the floor f and the capped exponential (tenacity wait_random_exponential)";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, _: &mut BackoffMemory, rng: &mut R) -> SimDuration {
        let floor = params.floor.as_nanos_f64();
        let high = params.capped_exponential_nanos(n.saturating_sub(1)).max(floor);
        SimDuration::from_nanos_f64(uniform(rng, floor, high))
    }
}
