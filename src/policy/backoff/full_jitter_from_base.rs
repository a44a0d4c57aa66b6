use super::{BackoffFormula, BackoffMemory, BackoffParams, uniform};
use crate::time::SimDuration;
use rand::Rng;

/// Full jitter whose first window is the base: `sleep(n) = U(0, min(c, b·m^(n−1)))`. The AWS SDKs' standard mode
/// ("delay before retry i = U(0,1)·min(b·2^(i−1), 20 s)", AWS SDKs and Tools reference guide) and gRPC's retry
/// backoff before 2024 (gRFC A6: "random(0, min(initialBackoff·backoffMultiplier^(n−1), maxBackoff))").
pub struct FullJitterFromBase;

impl BackoffFormula for FullJitterFromBase {
    const NAME: &'static str = "full-jitter-from-base";
    const FORMULA: &'static str = "U(0, min(c, b·m^(n−1)))";
    const ABOUT: &'static str = "full jitter whose first window is b (AWS SDK standard mode, gRPC before 2024)";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, _: &mut BackoffMemory, rng: &mut R) -> SimDuration {
        SimDuration::from_nanos_f64(uniform(rng, 0.0, params.capped_exponential_nanos(n.saturating_sub(1))))
    }
}
