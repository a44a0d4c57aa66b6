use super::{BackoffFormula, BackoffMemory, BackoffParams, uniform};
use crate::time::SimDuration;
use rand::Rng;

/// Envoy's router retry backoff: retry `n` waits a uniform draw from `[0, (2^n − 1)·b)`, capped at `c`
/// (defaults b = 25 ms, c = 10·b = 250 ms): `sleep(n) = min(c, U(0, b·(2^j − 1)))`. The window stops growing
/// once it exceeds `c` (`j = n` until then, then fixed), so capped draws keep their spread below `c` and pile up
/// at `c` with a fixed probability. `m` is not used (always 2). Source: Envoy router docs
/// (x-envoy-max-retries) and `JitteredBackOffStrategy` (2018–2020 versions; later versions draw from a doubling
/// window `b·2^(n−1)` capped at `c`, which is `full-jitter-from-base`).
pub struct EnvoyJitter;

impl EnvoyJitter {
    /// `b·(2^j − 1)` for `j = n`, or for the first `j` whose window exceeds `c` if that comes sooner.
    pub(crate) fn window_nanos(params: &BackoffParams, n: u32) -> f64 {
        let (base, cap) = (params.base_nanos(), params.cap_nanos());
        let mut window = base;
        for j in 1..=n.min(64) {
            window = base * ((j as f64).exp2() - 1.0);
            if window > cap {
                break;
            }
        }
        window
    }
}

impl BackoffFormula for EnvoyJitter {
    const NAME: &'static str = "envoy-jitter";
    const FORMULA: &'static str = "min(c, U(0, b·(2^j − 1))), j = n until the window first exceeds c, then fixed";
    const ABOUT: &'static str = "Envoy's router retry backoff: [0, (2^n − 1)·b), capped at c = 10·b by default";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, _: &mut BackoffMemory, rng: &mut R) -> SimDuration {
        let draw = uniform(rng, 0.0, Self::window_nanos(params, n.max(1)));
        SimDuration::from_nanos_f64(draw.min(params.cap_nanos()))
    }
}
