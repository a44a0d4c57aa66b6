use super::{BackoffFormula, BackoffMemory, BackoffParams, uniform};
use crate::time::SimDuration;
use rand::Rng;

/// Exponential from the base stretched by up to a fraction of itself, then capped: `sleep(n) = min(c, b·m^(n−1)·
/// (1 + U(0, q)))`. The stretch comes before the cap, so once `b·m^(n−1)` passes `c` every sleep is exactly `c`
/// (the jitter is lost at the cap). Resilience4j's `IntervalFunction.ofExponentialRandomBackoff` with a maximum
/// (resilience4j-core 2.3.0: the randomized interval, then `min` with the maximum), Linkerd's HTTP retry backoff
/// (linkerd2-proxy: base + U(0, ratio·base), capped at max) and Spring Retry's `ExponentialRandomBackOffPolicy`.
pub struct ProportionalJitterCapped;

impl BackoffFormula for ProportionalJitterCapped {
    const NAME: &'static str = "proportional-jitter-capped";
    const FORMULA: &'static str = "min(c, b·m^(n−1)·(1 + U(0, q)))";
    const ABOUT: &'static str =
        "exponential from the base stretched by up to q of itself, then capped (Resilience4j, Linkerd, Spring Retry)";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, _: &mut BackoffMemory, rng: &mut R) -> SimDuration {
        let stretched = params.exponential_nanos(n.saturating_sub(1)) * (1.0 + uniform(rng, 0.0, params.jitter_fraction));
        SimDuration::from_nanos_f64(stretched.min(params.cap_nanos()))
    }
}
