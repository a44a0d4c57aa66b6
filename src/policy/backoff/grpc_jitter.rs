use super::{BackoffFormula, BackoffMemory, BackoffParams, uniform};
use crate::time::SimDuration;
use rand::Rng;

/// gRPC's retry backoff since the 2024 revision of gRFC A6 (grpc/proposal#452): the n-th retry waits
/// `min(initialBackoff·backoffMultiplier^(n−1), maxBackoff)·U(0.8, 1.2)`, i.e. `sleep(n) = min(c, b·m^(n−1))·U(0.8,
/// 1.2)`. The jitter is applied after the cap, so a sleep may exceed `c` by up to 20% (the one strategy here that
/// does). Before 2024 A6 specified full jitter, `U(0, min(c, b·m^(n−1)))` (strategy `full-jitter-from-base`).
pub struct GrpcJitter;

impl BackoffFormula for GrpcJitter {
    const NAME: &'static str = "grpc-jitter";
    const FORMULA: &'static str = "min(c, b·m^(n−1))·U(0.8, 1.2)";
    const ABOUT: &'static str = "±20% around the capped exponential, jitter after the cap (gRFC A6 since 2024)";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, _: &mut BackoffMemory, rng: &mut R) -> SimDuration {
        let capped = params.capped_exponential_nanos(n.saturating_sub(1));
        SimDuration::from_nanos_f64(capped * uniform(rng, 0.8, 1.2))
    }
}
