//! A radix heap keyed by time, FIFO among equal times: the event queue's form for large pending sets.
//!
//! Simulated time never goes back, so the queue is monotone: every key pushed is at least the last key popped.
//! A radix heap (Ahuja, Mehlhorn, Orlin & Tarjan 1990) uses that: bucket 0 holds the keys equal to the last one
//! popped, and bucket i ≥ 1 the keys whose highest bit differing from it is bit i − 1. A push is one XOR and a
//! leading-zeros count; when bucket 0 runs out, the lowest non-empty bucket is spread over the buckets below it
//! around its smallest key, so each entry moves at most 64 times over its life. It stays as fast with ten million
//! pending events as with a thousand, where a binary heap's sift grows with log n and leaves the cache; with a
//! few hundred, the binary heap is faster (docs/performance.md measures both).
//!
//! Ties in time pop in insertion order, which makes every run deterministic: a bucket only ever receives
//! entries newer than the ones it holds (a push appends the newest; a bucket is refilled only while empty, in
//! the order of the bucket it is spread from), so each bucket stays in insertion order, and equal keys always
//! share a bucket.

use crate::time::SimTime;

/// Buckets: one for "equal to the last key", one per bit position of a `u64`.
const BUCKETS: usize = 65;

/// Entries a refill places in buckets up to this one are due within 2^SOON_BUCKETS ns (about 4 µs): shown to
/// `pop`'s `soon`.
const SOON_BUCKETS: usize = 12;

/// Pending events ordered by time, FIFO among equal times, for a monotone clock.
pub(super) struct RadixHeap<E> {
    buckets: Vec<Vec<(u64, E)>>,
    /// The next entry of bucket 0 to hand out.
    head: usize,
    /// The key of the last entry handed out: the reference of the buckets.
    last: u64,
    /// The entry at `head` has been handed out by `pop` and is waiting to be consumed (or put back by `unpop`).
    head_taken: bool,
    len: usize,
}

impl<E: Copy> RadixHeap<E> {
    pub(super) fn with_capacity(capacity: usize) -> Self {
        let mut buckets: Vec<Vec<(u64, E)>> = (0..BUCKETS).map(|_| Vec::new()).collect();
        buckets[0].reserve(capacity);
        RadixHeap { buckets, head: 0, last: 0, head_taken: false, len: 0 }
    }

    /// Starts the clock at `at`: keys before it may no longer be pushed (a queue built mid-run).
    pub(super) fn start_at(&mut self, at: SimTime) {
        self.last = at.as_nanos();
    }

    /// The bucket of `key`: 0 if it equals the last key popped, else one past its highest bit that differs.
    #[inline]
    fn bucket_of(&self, key: u64) -> usize {
        (u64::BITS - (key ^ self.last).leading_zeros()) as usize
    }

    /// Consumes the entry the last `pop` handed out.
    #[inline]
    fn consume_taken(&mut self) {
        if self.head_taken {
            self.head_taken = false;
            self.head += 1;
            self.len -= 1;
        }
    }

    /// Adds `event` to fire at `at` (never before the last event popped), after every event already queued for
    /// the same instant.
    #[inline]
    pub(super) fn push(&mut self, at: SimTime, event: E) {
        self.consume_taken();
        let key = at.as_nanos().max(self.last);
        let bucket = self.bucket_of(key);
        self.buckets[bucket].push((key, event));
        self.len += 1;
    }

    /// Removes and returns the earliest event. `soon` sees each entry a refill brings within
    /// 2^[`SOON_BUCKETS`] ns of the new minimum: the events most likely to come next, for the model to prefetch.
    #[inline]
    pub(super) fn pop(&mut self, soon: impl FnMut(&E)) -> Option<(SimTime, E)> {
        self.consume_taken();
        if self.head == self.buckets[0].len() {
            self.refill(soon)?;
        }
        let (key, event) = self.buckets[0][self.head];
        self.head_taken = true;
        Some((SimTime::from_nanos(key), event))
    }

    /// Bucket 0 is used up: spread the lowest non-empty bucket around its smallest key. `None` if empty.
    fn refill(&mut self, mut soon: impl FnMut(&E)) -> Option<()> {
        let mut used = std::mem::take(&mut self.buckets[0]);
        used.clear();
        self.buckets[0] = self.reusable(used);
        self.head = 0;
        let lowest = (1..BUCKETS).find(|&b| !self.buckets[b].is_empty())?;
        let mut spreading = std::mem::take(&mut self.buckets[lowest]);
        self.last = spreading.iter().map(|&(key, _)| key).min().unwrap_or(self.last);
        for entry in spreading.drain(..) {
            let bucket = self.bucket_of(entry.0);
            if bucket <= SOON_BUCKETS {
                soon(&entry.1);
            }
            self.buckets[bucket].push(entry);
        }
        self.buckets[lowest] = self.reusable(spreading);
        Some(())
    }

    /// An emptied bucket's buffer, kept for reuse unless it is much larger than what is pending: waves of events
    /// pass through many buckets, and each would otherwise keep the capacity of the largest wave it held.
    fn reusable(&self, mut buffer: Vec<(u64, E)>) -> Vec<(u64, E)> {
        if buffer.capacity() > self.len / 4 + 4096 {
            buffer = Vec::new();
        }
        buffer
    }

    /// Puts back the event the last `pop` returned, undelivered (for a run cut short by a limit).
    pub(super) fn unpop(&mut self) {
        self.head_taken = false;
    }

    pub(super) fn len(&self) -> usize {
        self.len - usize::from(self.head_taken)
    }
}
