use super::{BackoffFormula, BackoffMemory, BackoffParams, uniform};
use crate::time::SimDuration;
use rand::Rng;

/// Capped exponential from the base, stretched by up to a fraction of itself: `sleep(n) = d·(1 + U(0, q))`,
/// `d = min(c, b·m^(n−1))`. client-go's `wait.Backoff.Step` (k8s.io/apimachinery `pkg/util/wait/backoff.go`):
/// `Duration = b`, `Factor = m`, `Cap = c`, `Jitter = q`; the jitter comes after the cap, so a sleep may reach
/// `c·(1 + q)`.
pub struct ProportionalJitter;

impl BackoffFormula for ProportionalJitter {
    const NAME: &'static str = "proportional-jitter";
    const FORMULA: &'static str = "d·(1 + U(0, q)), d = min(c, b·m^(n−1))";
    const ABOUT: &'static str = "capped exponential from the base, stretched by up to q of itself (client-go wait.Backoff)";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, _: &mut BackoffMemory, rng: &mut R) -> SimDuration {
        let duration = params.capped_exponential_nanos(n.saturating_sub(1));
        SimDuration::from_nanos_f64(duration * (1.0 + uniform(rng, 0.0, params.jitter_fraction)))
    }
}
