//! The future event list: a binary min-heap keyed by (time, insertion sequence).
//!
//! Both parts of the key are packed into one `u128` (time in the high 64 bits), so ordering is a single integer
//! comparison and ties in time pop in insertion order (FIFO), which makes every run deterministic.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::SimTime;

struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the smallest key first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// Pending events ordered by time, FIFO among equal times. Pushing allocates only when the heap outgrows its
/// capacity, so a queue that is reused across runs stops allocating once it has seen its peak size.
///
/// `pop` leaves the popped entry at the root and marks it consumed; the next `push` overwrites it and sifts
/// down once (the classic "hold" operation), instead of a sift for the removal and another for the insertion.
/// Most handlers schedule exactly one follow-up event, so this halves the heap work on the hot path.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_sequence: u64,
    /// The root has been handed out by `pop` and is waiting to be replaced or removed.
    root_consumed: bool,
}

impl<E: Copy> EventQueue<E> {
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(capacity), next_sequence: 0, root_consumed: false }
    }

    /// Adds `event` to fire at `at`, after every event already queued for the same instant.
    #[inline]
    pub fn push(&mut self, at: SimTime, event: E) {
        let key = ((at.as_nanos() as u128) << 64) | self.next_sequence as u128;
        self.next_sequence += 1;
        let entry = Entry { key, event };
        if self.root_consumed {
            self.root_consumed = false;
            if let Some(mut root) = self.heap.peek_mut() {
                // Overwriting through `PeekMut` sifts the new entry down when `root` drops.
                *root = entry;
                return;
            }
        }
        self.heap.push(entry);
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if self.root_consumed {
            self.heap.pop();
        }
        let root = self.heap.peek();
        self.root_consumed = root.is_some();
        root.map(|entry| (SimTime::from_nanos((entry.key >> 64) as u64), entry.event))
    }

    /// Puts back the event the last `pop` returned, undelivered (for a run cut short by a limit).
    pub fn unpop(&mut self) {
        self.root_consumed = false;
    }

    pub fn len(&self) -> usize {
        self.heap.len() - usize::from(self.root_consumed)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Empties the queue and restarts the sequence, keeping the allocation.
    pub fn clear(&mut self) {
        self.heap.clear();
        self.next_sequence = 0;
        self.root_consumed = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut queue = EventQueue::with_capacity(8);
        let t = SimTime::from_nanos(10);
        for label in ["a", "b", "c", "d"] {
            queue.push(t, label);
        }
        queue.push(SimTime::from_nanos(5), "early");
        let order: Vec<_> = std::iter::from_fn(|| queue.pop()).map(|(_, label)| label).collect();
        assert_eq!(order, ["early", "a", "b", "c", "d"]);
    }

    #[test]
    fn interleaved_pushes_and_pops_match_a_sorted_reference() {
        // A pseudo-random mix of pops and pushes (some at the popped time, some later) against a sorted Vec.
        let mut queue = EventQueue::with_capacity(2);
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut state = 12345_u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state >> 33
        };
        let (mut now, mut sequence) = (0_u64, 0_u64);
        for _ in 0..20_000 {
            if next() % 3 == 0 {
                let popped = queue.pop().map(|(t, id): (SimTime, u64)| (t.as_nanos(), id));
                let expected = (!reference.is_empty()).then(|| reference.remove(0));
                assert_eq!(popped, expected);
                if let Some((t, _)) = popped {
                    now = t;
                }
            } else {
                let at = now + next() % 4;
                queue.push(SimTime::from_nanos(at), sequence);
                let position = reference.partition_point(|&(t, _)| t <= at);
                reference.insert(position, (at, sequence));
                sequence += 1;
            }
            assert_eq!(queue.len(), reference.len());
        }
    }

    #[test]
    fn pops_in_time_order_whatever_the_push_order() {
        let mut queue = EventQueue::with_capacity(4);
        let times = [7_u64, 3, 9, 1, 3, 8, 0, u64::MAX, 2];
        for (i, &t) in times.iter().enumerate() {
            queue.push(SimTime::from_nanos(t), i);
        }
        let mut popped = Vec::new();
        while let Some((t, i)) = queue.pop() {
            assert_eq!(t.as_nanos(), times[i], "an event must come back with its own time");
            popped.push(t.as_nanos());
        }
        let mut sorted = times.to_vec();
        sorted.sort_unstable();
        assert_eq!(popped, sorted);
    }
}
