use super::{BackoffFormula, BackoffMemory, BackoffParams};
use crate::time::SimDuration;
use rand::Rng;

/// Constant backoff: the same sleep before every retry. `sleep(n) = min(c, b)`.
pub struct Constant;

impl BackoffFormula for Constant {
    const NAME: &'static str = "constant";
    const FORMULA: &'static str = "min(c, b)";
    const ABOUT: &'static str = "a fixed pause before every retry";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, _: u32, _: &mut BackoffMemory, _: &mut R) -> SimDuration {
        params.base.min(params.cap)
    }
}
