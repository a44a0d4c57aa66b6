use super::{BackoffFormula, BackoffMemory, BackoffParams};
use crate::time::SimDuration;
use rand::Rng;

/// Linear backoff: the sleep grows by `b` per failure. `sleep(n) = min(c, b·n)`, so the first retry sleeps `b`.
pub struct Linear;

impl BackoffFormula for Linear {
    const NAME: &'static str = "linear";
    const FORMULA: &'static str = "min(c, b·n)";
    const ABOUT: &'static str = "sleep grows by the base after every failure";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, _: &mut BackoffMemory, _: &mut R) -> SimDuration {
        SimDuration::from_nanos_f64((params.base_nanos() * f64::from(n)).min(params.cap_nanos()))
    }
}
