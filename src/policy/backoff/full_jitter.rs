use super::{BackoffFormula, BackoffMemory, BackoffParams, uniform};
use crate::time::SimDuration;
use rand::Rng;

/// Full jitter. `sleep(n) = U(0, min(c, b·m^n))`, mean half the capped exponential. AWS 2015 ("Full Jitter").
pub struct FullJitter;

impl BackoffFormula for FullJitter {
    const NAME: &'static str = "full-jitter";
    const FORMULA: &'static str = "U(0, min(c, b·m^n))";
    const ABOUT: &'static str = "uniform over the whole capped exponential window (AWS 2015)";

    fn delay<R: Rng + ?Sized>(
        params: &BackoffParams,
        n: u32,
        _: &mut BackoffMemory,
        rng: &mut R,
    ) -> SimDuration {
        SimDuration::from_nanos_f64(uniform(rng, 0.0, params.capped_exponential_nanos(n)))
    }
}
