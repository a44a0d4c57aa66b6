use super::{BackoffFormula, BackoffMemory, BackoffParams, per_slot_wait};
use crate::time::SimDuration;
use rand::Rng;

/// Polynomial backoff as Håstad, Leighton & Rogoff (1996) analyse it: after the n-th collision of its frame a
/// station sends in each slot with probability 1/(n+1)^α, the exponent α being the `multiplier` m (2 unless set:
/// quadratic; their theorem: stable for any α > 1 below a total rate of 1, unstable for α ≤ 1 and many stations).
/// As in `hlr-exponential`, one Geometric draw of the silent slots, W on {0, 1, …} with mean (n+1)^α − 1, has the
/// law of the per-slot coin; `quadratic` instead draws from a window {0, …, (n+1)² − 1} and keeps its draw.
pub struct HlrPolynomial;

impl BackoffFormula for HlrPolynomial {
    const NAME: &'static str = "hlr-polynomial";
    const FORMULA: &'static str = "min(c, b·W), W ~ Geometric(p = (n+1)^−m) on {0, 1, …}: mean (n+1)^m − 1; m = α";
    const ABOUT: &'static str =
        "Håstad–Leighton–Rogoff polynomial backoff: send in each slot with probability 1/(n+1)^m (m = 2: quadratic)";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, _: &mut BackoffMemory, rng: &mut R) -> SimDuration {
        let p = (f64::from(n) + 1.0).powf(-params.multiplier);
        per_slot_wait(params, p, rng)
    }
}
