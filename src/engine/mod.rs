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

/// Asks the kernel to back `buffer`'s allocation with 2 MiB pages (Linux; elsewhere a no-op). A hint only.
pub fn advise_huge_pages<T>(buffer: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = buffer.as_ptr() as usize;
        let end = start + buffer.capacity() * size_of::<T>();
        let aligned = start.next_multiple_of(HUGE);
        if end > aligned + HUGE {
            let len = (end - aligned) / HUGE * HUGE;
            // SAFETY: madvise only changes how the kernel backs these pages, which lie inside `buffer`'s
            // allocation; it reads and writes no memory of ours.
            unsafe {
                libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
            }
        }
    }
}
