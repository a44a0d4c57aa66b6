use super::{BackoffFormula, BackoffMemory, BackoffParams, per_slot_wait};
use crate::time::SimDuration;
use rand::Rng;

/// Binary exponential backoff as Håstad, Leighton & Rogoff (1996) analyse it: after the n-th collision of its
/// frame a station sends in each slot with probability 2^−n, untruncated (802.3's `ethernet-beb` stops doubling
/// at 2^10 and draws from a window). The coin is memoryless and nothing changes n until the station sends again,
/// so one draw of the number of silent slots W ~ Geometric(2^−n) on {0, 1, …} (mean 2^n − 1) has the law of
/// flipping it slot by slot; the channel sends in slot `collision + 1 + W`.
pub struct HlrExponential;

impl BackoffFormula for HlrExponential {
    const NAME: &'static str = "hlr-exponential";
    const FORMULA: &'static str = "min(c, b·W), W ~ Geometric(p = 2^−n) on {0, 1, …}: mean 2^n − 1, untruncated";
    const ABOUT: &'static str =
        "Håstad–Leighton–Rogoff binary exponential backoff: send in each slot with probability 2^−n (no 2^10 limit)";

    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, _: &mut BackoffMemory, rng: &mut R) -> SimDuration {
        per_slot_wait(params, 0.5_f64.powi(n.min(i32::MAX as u32) as i32), rng)
    }
}
