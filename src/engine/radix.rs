//! A radix heap keyed by time, FIFO among equal times: the event queue's form for large pending sets.
//!
//! Simulated time never goes back, so the queue is monotone: every key pushed is at least the last key popped.
//! A radix heap (Ahuja, Mehlhorn, Orlin & Tarjan 1990) uses that. Here its buckets follow base-64 digits of the
//! key, as in the paper's multi-level variant and in hierarchical timing wheels (Varghese & Lauck 1987).
//! Relative to a reference key `last`, bucket (level ℓ, digit d) holds the keys whose highest base-64 digit
//! differing from `last` is digit ℓ (bits 6ℓ to 6ℓ + 5), with value d there; at level 0 a bucket holds a single
//! key, and the lowest non-empty one is handed out in place. A push is one XOR, a leading-zeros count and a
//! shift. When level 0 is used up, the lowest non-empty bucket above is spread over the levels below it around
//! its smallest key, the new `last`; each entry moves at most once per level (11 levels), about three times in
//! our herds, where bit by bit (65 buckets) it moved eight times (docs/performance.md).
//!
//! Buckets are chains of fixed-size blocks from one arena, and emptied blocks are reused: waves of events pass
//! from bucket to bucket, and growing a buffer per bucket would copy them and fault in fresh pages each time.
//!
//! Ties in time pop in insertion order, which makes every run deterministic: a bucket only ever receives
//! entries newer than the ones it holds (a push appends the newest; a bucket is refilled only while empty, in
//! the order of the bucket it is spread from), so each bucket stays in insertion order, and equal keys always
//! share a bucket.

use crate::time::SimTime;

/// Bits per digit: 64 buckets per level.
const DIGIT_BITS: u32 = 6;
const DIGITS: usize = 1 << DIGIT_BITS;
/// Levels of digits in a `u64` key (the top one has 4 bits).
const LEVELS: usize = u64::BITS.div_ceil(DIGIT_BITS) as usize;

/// Entries a spread brings from a level at or above this one into a level below it are due within
/// 2^(6 × SOON_LEVEL) ns (about 4 µs): shown to `pop`'s `soon`, once each.
const SOON_LEVEL: usize = 2;

/// Entries per block (12 KiB of 24-byte entries).
const BLOCK: usize = 512;

/// A bucket: its blocks in order, all full but the last, which holds `tail` entries from arena position
/// `tail_start`. An empty bucket has no block and `tail == BLOCK`, so that a push needs one test for "no room".
#[derive(Clone)]
struct Bucket {
    blocks: Vec<u32>,
    tail: usize,
    tail_start: usize,
}

impl Bucket {
    const EMPTY: Bucket = Bucket { blocks: Vec::new(), tail: BLOCK, tail_start: 0 };

    #[inline]
    fn len(&self) -> usize {
        self.blocks.len() * BLOCK + self.tail - BLOCK
    }
}

/// Pending events ordered by time, FIFO among equal times, for a monotone clock.
#[derive(Clone)]
pub(super) struct RadixHeap<E> {
    /// Bucket `level × 64 + digit`.
    buckets: Vec<Bucket>,
    /// Block `b` is `arena[b × BLOCK .. (b + 1) × BLOCK]`.
    arena: Vec<(u64, E)>,
    /// Blocks no bucket holds, the most recently emptied last.
    free_blocks: Vec<u32>,
    /// Bit `b % 64` of word `b / 64` is set when bucket `b` is non-empty.
    occupied: [u64; LEVELS],
    /// The reference key of the buckets: the smallest key of the last bucket spread.
    last: u64,
    /// The level-0 bucket being handed out (its digit), the position of its next entry, and how many of its
    /// blocks, all handed out, are back on the free list (a wave of a million equal times frees its blocks as it
    /// goes, for the events it schedules).
    popping: usize,
    head: usize,
    popping_freed: usize,
    /// The entry at `head` has been handed out by `pop` and is waiting to be consumed (or put back by `unpop`).
    head_taken: bool,
    len: usize,
}

impl<E: Copy> RadixHeap<E> {
    pub(super) fn new() -> Self {
        RadixHeap {
            buckets: (0..LEVELS * DIGITS).map(|_| Bucket::EMPTY).collect(),
            arena: Vec::new(),
            free_blocks: Vec::new(),
            occupied: [0; LEVELS],
            last: 0,
            popping: 0,
            head: 0,
            popping_freed: 0,
            head_taken: false,
            len: 0,
        }
    }

    /// Starts the clock at `at`: keys before it may no longer be pushed (a queue built mid-run).
    pub(super) fn start_at(&mut self, at: SimTime) {
        self.last = at.as_nanos();
        self.popping = self.last as usize % DIGITS;
    }

    /// The key of the bucket being handed out: no key pushed may be smaller.
    #[inline]
    fn now(&self) -> u64 {
        (self.last & !(DIGITS as u64 - 1)) | self.popping as u64
    }

    /// The bucket of `key`: the level of its highest digit differing from `last` (0 if none) × 64 plus its value
    /// there.
    #[inline]
    fn bucket_of(&self, key: u64) -> usize {
        let level = (u64::BITS - 1 - ((key ^ self.last) | 1).leading_zeros()) / DIGIT_BITS;
        let digit = (key >> (level * DIGIT_BITS)) as usize & (DIGITS - 1);
        level as usize * DIGITS + digit
    }

    /// Appends `entry` to its bucket.
    #[inline]
    fn place(&mut self, entry: (u64, E)) -> usize {
        let index = self.bucket_of(entry.0);
        self.occupied[index / DIGITS] |= 1 << (index % DIGITS);
        if self.buckets[index].tail == BLOCK {
            self.add_block(index, entry);
        }
        let bucket = &mut self.buckets[index];
        self.arena[bucket.tail_start + bucket.tail] = entry;
        bucket.tail += 1;
        index
    }

    /// Gives bucket `index` an empty block: a free one, or a new one (filled with copies of `filler`).
    #[cold]
    fn add_block(&mut self, index: usize, filler: (u64, E)) {
        let block = self.free_blocks.pop().unwrap_or_else(|| {
            let block = self.arena.len() / BLOCK;
            self.arena.resize(self.arena.len() + BLOCK, filler);
            block as u32
        });
        let bucket = &mut self.buckets[index];
        bucket.blocks.push(block);
        bucket.tail = 0;
        bucket.tail_start = block as usize * BLOCK;
    }

    /// The `position`-th entry of bucket `index`.
    #[inline]
    fn entry(&self, index: usize, position: usize) -> (u64, E) {
        let block = self.buckets[index].blocks[position / BLOCK] as usize;
        self.arena[block * BLOCK + position % BLOCK]
    }

    /// Returns the blocks of the bucket being handed out that lie wholly before `head` to the free list.
    #[cold]
    fn free_handed_out(&mut self) {
        let done = self.head / BLOCK;
        let blocks = &self.buckets[self.popping].blocks[self.popping_freed..done];
        self.free_blocks.extend(blocks.iter().rev());
        self.popping_freed = done;
    }

    /// Empties the bucket being handed out, returning to the free list the blocks that are not there already.
    fn clear_popping(&mut self) {
        let (index, freed) = (self.popping, std::mem::take(&mut self.popping_freed));
        let bucket = &mut self.buckets[index];
        if let [block] = bucket.blocks[freed..] {
            self.free_blocks.push(block);
        } else {
            self.free_blocks.extend(bucket.blocks[freed..].iter().rev());
        }
        bucket.blocks.clear();
        bucket.tail = BLOCK;
        self.occupied[index / DIGITS] &= !(1 << (index % DIGITS));
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
        // Even after an `unpop`, the entry shown is where the heap stands: an earlier key would pop after it.
        debug_assert!(at.as_nanos() >= self.now(), "pushed at {at}, before the entry last shown");
        self.place((at.as_nanos().max(self.now()), event));
        self.len += 1;
    }

    /// Removes and returns the earliest event. `soon` sees each entry a spread brings within
    /// 2^(6 × [`SOON_LEVEL`]) ns of the new minimum from further away: the events most likely to come next, for
    /// the model to prefetch.
    #[inline]
    pub(super) fn pop(&mut self, soon: impl FnMut(&E)) -> Option<(SimTime, E)> {
        self.consume_taken();
        if self.head == self.buckets[self.popping].len() {
            self.next_bucket(soon)?;
        } else if self.head / BLOCK > self.popping_freed {
            self.free_handed_out();
        }
        let (key, event) = self.entry(self.popping, self.head);
        self.head_taken = true;
        Some((SimTime::from_nanos(key), event))
    }

    /// The level-0 bucket being handed out is used up: empty it and move to the next non-empty one, spreading a
    /// bucket from above if level 0 has none. `None` if the heap is empty.
    #[cold]
    fn next_bucket(&mut self, soon: impl FnMut(&E)) -> Option<()> {
        if self.head > 0 {
            self.clear_popping();
            self.head = 0;
        }
        if self.occupied[0] == 0 {
            self.spread(soon)?;
        }
        self.popping = self.occupied[0].trailing_zeros() as usize;
        Some(())
    }

    /// Level 0 is empty: spread the lowest non-empty bucket over the levels below it around its smallest key.
    /// `None` if every bucket is empty.
    fn spread(&mut self, mut soon: impl FnMut(&E)) -> Option<()> {
        let level = self.occupied.iter().position(|&word| word != 0)?;
        let lowest = level * DIGITS + self.occupied[level].trailing_zeros() as usize;
        self.occupied[level] &= !(1 << (lowest % DIGITS));
        let spreading = std::mem::replace(&mut self.buckets[lowest], Bucket::EMPTY);
        let blocks = spreading.blocks.len();
        let entries_of = |block: usize| if block + 1 == blocks { spreading.tail } else { BLOCK };
        let keys = (0..blocks).flat_map(|block| {
            let start = spreading.blocks[block] as usize * BLOCK;
            self.arena[start..start + entries_of(block)].iter().map(|&(key, _)| key)
        });
        self.last = keys.min().unwrap_or(self.last);
        let noting = level >= SOON_LEVEL;
        for (block, &id) in spreading.blocks.iter().enumerate() {
            let start = id as usize * BLOCK;
            for position in start..start + entries_of(block) {
                let entry = self.arena[position];
                let index = self.place(entry);
                if noting && index < SOON_LEVEL * DIGITS {
                    soon(&entry.1);
                }
            }
            // Read in full: later entries may reuse it.
            self.free_blocks.push(id);
        }
        let mut emptied = spreading;
        emptied.blocks.clear();
        emptied.tail = BLOCK;
        self.buckets[lowest] = emptied;
        Some(())
    }

    /// Puts back the event the last `pop` returned, undelivered (for a run cut short by a limit).
    pub(super) fn unpop(&mut self) {
        self.head_taken = false;
    }

    pub(super) fn len(&self) -> usize {
        self.len - usize::from(self.head_taken)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The channel model's Ethernet once peeked at the next station this way and then pushed the winner's next turn
    /// before it; the heap cannot order that, and says so in a debug build.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "before the entry last shown")]
    fn a_push_before_an_entry_shown_and_put_back_is_refused() {
        let mut heap = RadixHeap::new();
        heap.push(SimTime::from_nanos(1_000), 1);
        heap.push(SimTime::from_nanos(2_000), 2);
        assert_eq!(heap.pop(|_| {}).map(|(t, e)| (t.as_nanos(), e)), Some((1_000, 1)));
        assert_eq!(heap.pop(|_| {}).map(|(t, e)| (t.as_nanos(), e)), Some((2_000, 2)));
        heap.unpop();
        heap.push(SimTime::from_nanos(1_500), 3);
    }

    /// Runs of equal keys several blocks long, and delays from 0 to 2^50 ns (every level), interleaved with pops,
    /// against a sorted reference: time order, insertion order among equal times, and blocks reused.
    #[test]
    fn long_ties_and_every_level_keep_time_and_insertion_order() {
        let mut heap = RadixHeap::new();
        let mut reference: std::collections::VecDeque<(u64, u32)> = std::collections::VecDeque::new();
        let mut state = 3_u64;
        let mut next = || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            state >> 20
        };
        let (mut now, mut sequence) = (0_u64, 0_u32);
        for step in 0..40_000 {
            if step % 7_000 == 0 {
                // A wave: 3 × BLOCK + 5 events at one instant.
                let at = now + next() % (1 << 30);
                for _ in 0..3 * BLOCK + 5 {
                    heap.push(SimTime::from_nanos(at), sequence);
                    let position = reference.partition_point(|&(t, _)| t <= at);
                    reference.insert(position, (at, sequence));
                    sequence += 1;
                }
            } else if next() % 2 == 0 {
                let popped = heap.pop(|_| {}).map(|(t, id)| (t.as_nanos(), id));
                heap.consume_taken();
                assert_eq!(popped, reference.pop_front(), "step {step}");
                if let Some((t, _)) = popped {
                    now = t;
                }
            } else {
                let at = now + next() % (1 << (next() % 51));
                heap.push(SimTime::from_nanos(at), sequence);
                let position = reference.partition_point(|&(t, _)| t <= at);
                reference.insert(position, (at, sequence));
                sequence += 1;
            }
            assert_eq!(heap.len(), reference.len());
        }
        while let Some(popped) = heap.pop(|_| {}) {
            heap.consume_taken();
            assert_eq!(Some((popped.0.as_nanos(), popped.1)), reference.pop_front());
        }
        assert!(reference.is_empty());
        let blocks = heap.arena.len() / BLOCK;
        assert_eq!(heap.free_blocks.len(), blocks, "every block back on the free list once empty");
        assert!(blocks < 64 * LEVELS, "{blocks} blocks: emptied blocks must be reused");
    }
}
