use super::{BackoffFormula, BackoffMemory, BackoffParams};
use crate::time::SimDuration;
use rand::Rng;

/// Capped exponential whose first retry sleeps the base: `sleep(n) = min(c, b·m^(n−1))`. Doubling timers that
/// start at their base: client-go's workqueue rate limiter (5 ms, 10 ms, … 1000 s) and the TCP retransmission
/// timer of RFC 6298 (1 s, 2 s, 4 s, …). Differs from `exponential` (b·mⁿ) only in the numbering.
pub struct ExponentialFromBase;

impl BackoffFormula for ExponentialFromBase {
    const NAME: &'static str = "exponential-from-base";
    const FORMULA: &'static str = "min(c, b·m^(n−1))";
    const ABOUT: &'static str = "capped exponential whose first retry sleeps b (client-go workqueue, TCP RTO)";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, _: &mut BackoffMemory, _: &mut R) -> SimDuration {
        SimDuration::from_nanos_f64(params.capped_exponential_nanos(n.saturating_sub(1)))
    }
}
