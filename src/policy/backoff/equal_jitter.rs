use super::{BackoffFormula, BackoffMemory, BackoffParams, uniform};
use crate::time::SimDuration;
use rand::Rng;

/// Equal jitter. With `v = min(c, b·m^n)`: `sleep(n) = v/2 + U(0, v/2)`, never less than half the window.
/// AWS 2015 ("Equal Jitter").
pub struct EqualJitter;

impl BackoffFormula for EqualJitter {
    const NAME: &'static str = "equal-jitter";
    const FORMULA: &'static str = "v/2 + U(0, v/2), v = min(c, b·m^n)";
    const ABOUT: &'static str = "keeps half the exponential sleep, jitters the other half (AWS 2015)";

    fn delay<R: Rng + ?Sized>(
        params: &BackoffParams,
        n: u32,
        _: &mut BackoffMemory,
        rng: &mut R,
    ) -> SimDuration {
        let half = params.capped_exponential_nanos(n) / 2.0;
        SimDuration::from_nanos_f64(half + uniform(rng, 0.0, half))
    }
}
