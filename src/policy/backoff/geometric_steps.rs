use super::{BackoffFormula, BackoffMemory, BackoffParams, uniform};
use crate::time::SimDuration;
use rand::Rng;

/// systemd's restart delay with `RestartSteps = k`: `b` for `n = 1`, `c` after `k` steps, and in between the
/// geometric interpolation `b·(c/b)^((n−1)/k)`, truncated to whole µs; with `k = 0` or `c ≤ b` always `b`. Plus
/// `U(0, j)` after the cap (v262's `RestartRandomizedDelaySec`). systemd `src/core/service.c`,
/// `service_restart_usec_next` (b = RestartSec, c = RestartMaxDelaySec; the counter it reads is our n).
pub struct GeometricSteps;

impl BackoffFormula for GeometricSteps {
    const NAME: &'static str = "geometric-steps";
    const FORMULA: &'static str = "b·(c/b)^((n−1)/k) for n ≤ k (b if k = 0), c after, + U(0, j)";
    const ABOUT: &'static str = "from b to c in k geometric steps, plus U(0, j) (systemd RestartSteps, RestartMaxDelaySec)";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, _: &mut BackoffMemory, rng: &mut R) -> SimDuration {
        let (base, cap, steps) = (params.base_nanos(), params.cap_nanos(), params.steps);
        let stepped = if n <= 1 || steps == 0 || base == 0.0 || base >= cap {
            base
        } else if n > steps {
            cap
        } else {
            let micros = base / 1e3 * (cap / base).powf(f64::from(n - 1) / f64::from(steps));
            micros.floor() * 1e3
        };
        SimDuration::from_nanos_f64(stepped + uniform(rng, 0.0, params.jitter.as_nanos_f64()))
    }
}
