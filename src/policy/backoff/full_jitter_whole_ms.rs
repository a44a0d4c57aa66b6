use super::{BackoffFormula, BackoffMemory, BackoffParams, uniform};
use crate::time::SimDuration;
use rand::Rng;

/// Full jitter from the base, rounded down to whole milliseconds: `sleep(n) = ⌊U(0, min(c, b·m^(n−1)))⌋_ms`. The
/// AWS SDK for JavaScript v3 (`@smithy/util-retry` 4.6.2, `DefaultRetryBackoffStrategy.computeNextBackoffDelay`,
/// which floors `Math.random()` times the window to an integer number of ms).
pub struct FullJitterWholeMs;

impl BackoffFormula for FullJitterWholeMs {
    const NAME: &'static str = "full-jitter-whole-ms";
    const FORMULA: &'static str = "⌊U(0, min(c, b·m^(n−1)))⌋ in whole ms";
    const ABOUT: &'static str = "full jitter from the base, floored to whole milliseconds (AWS SDK for JavaScript v3)";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, _: &mut BackoffMemory, rng: &mut R) -> SimDuration {
        let window = params.capped_exponential_nanos(n.saturating_sub(1));
        SimDuration::from_millis((uniform(rng, 0.0, window) / 1e6).floor() as u64)
    }
}
