use super::{BackoffFormula, BackoffMemory, BackoffParams, uniform};
use crate::time::SimDuration;
use rand::Rng;

/// Decorrelated jitter as published. `s_n = min(c, U(b, 3·s_{n−1}))` with `s_0 = b`; each client keeps its own
/// previous sleep (in [`BackoffMemory`]). The multiplier is not used. AWS 2015 ("Decorrelated Jitter").
pub struct DecorrelatedJitter;

impl BackoffFormula for DecorrelatedJitter {
    const NAME: &'static str = "decorrelated-jitter";
    const FORMULA: &'static str = "min(c, U(b, 3·s)), s = the previous sleep (b before the first retry)";
    const ABOUT: &'static str = "next sleep drawn around three times the previous one, then capped (AWS 2015)";

    fn delay<R: Rng + ?Sized>(
        params: &BackoffParams,
        n: u32,
        memory: &mut BackoffMemory,
        rng: &mut R,
    ) -> SimDuration {
        let base = params.base_nanos();
        let previous = if n <= 1 { base } else { memory.0 };
        let sleep = uniform(rng, base, 3.0 * previous).min(params.cap_nanos());
        memory.0 = sleep;
        SimDuration::from_nanos_f64(sleep)
    }
}
