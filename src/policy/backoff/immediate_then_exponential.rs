use super::{BackoffFormula, BackoffMemory, BackoffParams};
use crate::time::SimDuration;
use rand::Rng;

/// The first retry at once, then a capped exponential from the base: `sleep(1) = 0`,
/// `sleep(n) = min(c, b·m^(n−2))` for `n ≥ 2`. The kubelet's CrashLoopBackOff (kubernetes `pkg/kubelet`,
/// `flowcontrol.Backoff`): a container's first crash restarts it at once, the next ones wait 10 s, 20 s, … 300 s,
/// counted from the exit.
pub struct ImmediateThenExponential;

impl BackoffFormula for ImmediateThenExponential {
    const NAME: &'static str = "immediate-then-exponential";
    const FORMULA: &'static str = "0 for n = 1, then min(c, b·m^(n−2))";
    const ABOUT: &'static str = "first retry at once, then a capped exponential from b (Kubernetes CrashLoopBackOff)";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, _: &mut BackoffMemory, _: &mut R) -> SimDuration {
        if n <= 1 {
            return SimDuration::ZERO;
        }
        SimDuration::from_nanos_f64(params.capped_exponential_nanos(n - 2))
    }
}
