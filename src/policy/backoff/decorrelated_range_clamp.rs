use super::{BackoffFormula, BackoffMemory, BackoffParams, uniform};
use crate::time::SimDuration;
use rand::Rng;

/// Decorrelated jitter with the cap applied to the range instead of the draw: `s_n = U(b, min(c, 3·s_{n−1}))`,
/// `s_0 = b`. Once `3·s` passes the cap the published form returns exactly `c` for every draw above it;
/// this one keeps drawing in `[b, c)`, so capped sleeps stay spread.
pub struct DecorrelatedRangeClamp;

impl BackoffFormula for DecorrelatedRangeClamp {
    const NAME: &'static str = "decorrelated-range-clamp";
    const FORMULA: &'static str = "U(b, min(c, 3·s)), s = the previous sleep (b before the first retry)";
    const ABOUT: &'static str = "decorrelated jitter that clamps the range, so capped sleeps stay random";

    fn delay<R: Rng + ?Sized>(
        params: &BackoffParams,
        n: u32,
        memory: &mut BackoffMemory,
        rng: &mut R,
    ) -> SimDuration {
        let base = params.base_nanos();
        let previous = if n <= 1 { base } else { memory.0 };
        let sleep = uniform(rng, base, (3.0 * previous).min(params.cap_nanos()));
        memory.0 = sleep;
        SimDuration::from_nanos_f64(sleep)
    }
}
