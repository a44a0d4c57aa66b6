use super::{BackoffFormula, BackoffMemory, BackoffParams};
use crate::time::SimDuration;
use rand::Rng;

/// No backoff: retry immediately. `sleep(n) = 0`. The AWS 2015 study's baseline.
pub struct NoBackoff;

impl BackoffFormula for NoBackoff {
    const NAME: &'static str = "none";
    const FORMULA: &'static str = "0";
    const ABOUT: &'static str = "retry at once; the baseline of the AWS 2015 study";

    fn delay<R: Rng + ?Sized>(_: &BackoffParams, _: u32, _: &mut BackoffMemory, _: &mut R) -> SimDuration {
        SimDuration::ZERO
    }
}
