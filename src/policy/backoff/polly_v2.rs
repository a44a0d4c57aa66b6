use super::{BackoffFormula, BackoffMemory, BackoffParams, uniform};
use crate::time::SimDuration;
use rand::Rng;

/// Polly's `DecorrelatedJitterBackoffV2` (Polly.Contrib.WaitAndRetry, 2020). It numbers retries from zero:
/// `i = n − 1`. Draw `t_i = i + U(0, 1)`, let `f(t) = 2^t·tanh(√(4t))`; then
/// `sleep = min(c, (f(t_i) − f(t_{i−1}))·b/1.4)` with `f(t_{−1}) = 0`, where `b` is the median first delay.
/// The sleeps telescope: the first `k` of them sum to `f(t_{k−1})·b/1.4` (before the cap).
pub struct PollyV2;

/// Polly's scaling: `1/1.4` brings the median delays near `b, 2b, 4b, …`.
const SCALING: f64 = 1.0 / 1.4;

/// `f(t) = 2^t·tanh(√(4t))`, the smooth exponential Polly V2 samples.
pub(super) fn polly_curve(t: f64) -> f64 {
    t.exp2() * (4.0 * t).sqrt().tanh()
}

impl BackoffFormula for PollyV2 {
    const NAME: &'static str = "polly-v2";
    const FORMULA: &'static str = "min(c, (f(t_i) − f(t_{i−1}))·b/1.4), t_i = i + U(0,1), f(t) = 2^t·tanh(√(4t)), i = n−1";
    const ABOUT: &'static str = "Polly's DecorrelatedJitterBackoffV2: smooth, monotone on average, no spikes";

    fn delay<R: Rng + ?Sized>(
        params: &BackoffParams,
        n: u32,
        memory: &mut BackoffMemory,
        rng: &mut R,
    ) -> SimDuration {
        let retry_index = f64::from(n.saturating_sub(1));
        let previous = if n <= 1 { 0.0 } else { memory.0 };
        let current = polly_curve(retry_index + uniform(rng, 0.0, 1.0));
        memory.0 = current;
        let sleep = (current - previous) * SCALING * params.base_nanos();
        SimDuration::from_nanos_f64(sleep.min(params.cap_nanos()))
    }
}
