use super::{BackoffFormula, BackoffMemory, BackoffParams};
use crate::time::SimDuration;
use rand::{Rng, RngExt};

/// Quadratic backoff in whole slots: after the n-th failure wait `r` slots, `r` uniform in `{0, …, (n+1)² − 1}`,
/// capped at `c` (the (n+1)² of Håstad, Leighton & Rogoff's polynomial backoff, so even the first retry has a
/// window of 4). It grows more slowly than binary exponential backoff, so backlogged stations come back sooner.
pub struct Quadratic;

impl BackoffFormula for Quadratic {
    const NAME: &'static str = "quadratic";
    const FORMULA: &'static str = "min(c, b·r), r uniform in {0, …, (n+1)² − 1}";
    const ABOUT: &'static str = "polynomial backoff in whole slots: the window grows as n², not 2^n";

    fn delay<R: Rng + ?Sized>(
        params: &BackoffParams,
        n: u32,
        _: &mut BackoffMemory,
        rng: &mut R,
    ) -> SimDuration {
        let side = u64::from(n) + 1;
        let window = side.saturating_mul(side);
        let slots = rng.random_range(0..window);
        SimDuration::from_nanos(params.base.as_nanos().saturating_mul(slots)).min(params.cap)
    }
}
