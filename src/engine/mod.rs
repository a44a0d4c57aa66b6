//! The discrete-event engine: integer virtual time, a deterministic event queue, seeded random streams.
//! It knows nothing about clients, servers or retries; models plug in through [`Model`].

mod queue;
mod radix;
mod rng;
mod sim;

pub use queue::EventQueue;
pub use rng::{RunSeeds, SimRng, Stream, Streams, mix64, replicate_seed, sim_rng, stable_hash};
pub use sim::{ABORT_POLL_EVENTS, Model, RunLimit, RunStats, Scheduler, run};

/// Asks the CPU to start loading the cache lines holding `value` (x86-64; elsewhere a no-op). A hint only.
#[inline]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let first = std::ptr::from_ref(value).cast::<i8>();
        // SAFETY: a prefetch is a hint that never faults and writes nothing, whatever the address; SSE, which the
        // intrinsic needs, is part of every x86-64 CPU.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(first);
            if size_of::<T>() > 1 {
                _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(size_of::<T>() - 1));
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
