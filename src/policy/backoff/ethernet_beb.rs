use super::{BackoffFormula, BackoffMemory, BackoffParams};
use crate::time::SimDuration;
use rand::{Rng, RngExt};

/// Truncated binary exponential backoff of IEEE 802.3: after the n-th collision wait `r` slots, `r` uniform in
/// `{0, …, 2^min(n, 10) − 1}`, the slot being `b` (51.2 µs at 10 Mb/s), then capped at `c` like every strategy
/// (leave `c` at 1023 slots or more and the standard's truncation decides). 802.3 drops the frame after 16
/// attempts (`max_attempts = 16`).
pub struct EthernetBeb;

impl BackoffFormula for EthernetBeb {
    const NAME: &'static str = "ethernet-beb";
    const FORMULA: &'static str = "min(c, b·r), r uniform in {0, …, 2^min(n,10) − 1}, b = slot time";
    const ABOUT: &'static str = "IEEE 802.3 truncated binary exponential backoff, in whole slots";

    fn delay<R: Rng + ?Sized>(
        params: &BackoffParams,
        n: u32,
        _: &mut BackoffMemory,
        rng: &mut R,
    ) -> SimDuration {
        let slots = rng.random_range(0..1_u64 << n.min(10));
        SimDuration::from_nanos(params.base.as_nanos().saturating_mul(slots)).min(params.cap)
    }
}
