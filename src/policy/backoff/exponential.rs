use super::{BackoffFormula, BackoffMemory, BackoffParams};
use crate::time::SimDuration;
use rand::Rng;

/// Capped exponential backoff without jitter. `sleep(n) = min(c, b·m^n)`: with the AWS 2015 numbering the first
/// retry (`n = 1`) sleeps `b·m` (10 ms for b = 5 ms, m = 2). Brooker, "Exponential Backoff And Jitter", AWS 2015.
pub struct Exponential;

impl BackoffFormula for Exponential {
    const NAME: &'static str = "exponential";
    const FORMULA: &'static str = "min(c, b·m^n)";
    const ABOUT: &'static str = "capped exponential, no jitter (AWS 2015): identical clients stay in lock-step";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, _: &mut BackoffMemory, _: &mut R) -> SimDuration {
        SimDuration::from_nanos_f64(params.capped_exponential_nanos(n))
    }
}
