//! The future event list, keyed by (time, insertion sequence): ties in time pop in insertion order (FIFO), which
//! makes every run deterministic.
//!
//! It takes one of two forms. A binary min-heap while few events are pending, the fastest there (a few hundred
//! entries stay in cache); once more than [`SWITCH_AT`] are pending, a radix heap (`radix.rs`), whose push and pop
//! cost the same at ten million entries as at ten thousand, where the heap's log n sifts leave the cache. The
//! switch moves the entries over in (time, sequence) order, so both forms deliver the same events in the same
//! order and no result depends on which one ran (docs/performance.md measures both).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::radix::RadixHeap;
use crate::time::SimTime;

/// Pending events beyond which the queue becomes a radix heap (until it is cleared).
pub(super) const SWITCH_AT: usize = 4096;

#[derive(Clone)]
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

/// The binary heap form: one `u128` key per entry (time in the high 64 bits, sequence in the low), so ordering is
/// a single integer comparison. `pop` leaves the popped entry at the root and marks it consumed; the next `push`
/// overwrites it and sifts down once (the classic "hold" operation), which halves the heap work when a handler
/// schedules one follow-up event, as most do.
#[derive(Clone)]
struct Heap<E> {
    heap: BinaryHeap<Entry<E>>,
    next_sequence: u64,
    root_consumed: bool,
    /// The time of the last entry popped: no push goes before it.
    last_popped: u64,
}

#[derive(Clone)]
enum Form<E> {
    Heap(Heap<E>),
    Radix(RadixHeap<E>),
}

/// Pending events ordered by time, FIFO among equal times. Pushing allocates only when the queue outgrows its
/// capacity, so a queue that is reused across runs stops allocating once it has seen its peak size.
#[derive(Clone)]
pub struct EventQueue<E> {
    form: Form<E>,
    capacity: usize,
}

impl<E: Copy> EventQueue<E> {
    pub fn with_capacity(capacity: usize) -> Self {
        let heap = Heap {
            heap: BinaryHeap::with_capacity(capacity.min(SWITCH_AT)),
            next_sequence: 0,
            root_consumed: false,
            last_popped: 0,
        };
        EventQueue { form: Form::Heap(heap), capacity }
    }

    /// Adds `event` to fire at `at`, after every event already queued for the same instant (never before the last
    /// event popped).
    #[inline]
    pub fn push(&mut self, at: SimTime, event: E) {
        match &mut self.form {
            Form::Radix(radix) => radix.push(at, event),
            Form::Heap(heap) => {
                let key = ((at.as_nanos() as u128) << 64) | heap.next_sequence as u128;
                heap.next_sequence += 1;
                let entry = Entry { key, event };
                if heap.root_consumed {
                    heap.root_consumed = false;
                    if let Some(mut root) = heap.heap.peek_mut() {
                        // Overwriting through `PeekMut` sifts the new entry down when `root` drops.
                        *root = entry;
                        return;
                    }
                }
                heap.heap.push(entry);
                if heap.heap.len() > SWITCH_AT {
                    self.become_radix();
                }
            }
        }
    }

    /// Moves every entry into a radix heap, in (time, sequence) order, so that equal times keep their order.
    #[cold]
    fn become_radix(&mut self) {
        let Form::Heap(heap) = &mut self.form else { return };
        let mut radix = RadixHeap::new();
        // The clock is where the simulation is, which may be before every pending entry.
        radix.start_at(SimTime::from_nanos(heap.last_popped));
        let mut entries = std::mem::take(&mut heap.heap).into_sorted_vec();
        // Sorted ascending by `Ord`, which is reversed: the earliest entry is last.
        entries.reverse();
        for entry in entries {
            radix.push(SimTime::from_nanos((entry.key >> 64) as u64), entry.event);
        }
        self.form = Form::Radix(radix);
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.pop_noting_soon(|_| {})
    }

    /// [`pop`](Self::pop), showing `soon` some events likely to come next (in the radix form; see
    /// `RadixHeap::pop`), so that the caller can prefetch what handling them will touch.
    #[inline]
    pub fn pop_noting_soon(&mut self, soon: impl FnMut(&E)) -> Option<(SimTime, E)> {
        match &mut self.form {
            Form::Radix(radix) => radix.pop(soon),
            Form::Heap(heap) => {
                if heap.root_consumed {
                    heap.heap.pop();
                }
                let root = heap.heap.peek();
                heap.root_consumed = root.is_some();
                let popped = root.map(|entry| (SimTime::from_nanos((entry.key >> 64) as u64), entry.event));
                if let Some((at, _)) = popped {
                    heap.last_popped = at.as_nanos();
                }
                popped
            }
        }
    }

    /// Puts back the event the last `pop` returned, undelivered (for a run cut short by a limit).
    pub fn unpop(&mut self) {
        match &mut self.form {
            Form::Radix(radix) => radix.unpop(),
            Form::Heap(heap) => heap.root_consumed = false,
        }
    }

    pub fn len(&self) -> usize {
        match &self.form {
            Form::Radix(radix) => radix.len(),
            Form::Heap(heap) => heap.heap.len() - usize::from(heap.root_consumed),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Empties the queue and restarts the sequence, back in its binary heap form.
    pub fn clear(&mut self) {
        match &mut self.form {
            Form::Heap(heap) => {
                heap.heap.clear();
                heap.next_sequence = 0;
                heap.root_consumed = false;
                heap.last_popped = 0;
            }
            Form::Radix(_) => *self = EventQueue::with_capacity(self.capacity),
        }
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

    /// The same mix of pushes and pops through a queue that switches to its radix form and one that does not:
    /// the same events in the same order, ties included.
    #[test]
    fn the_radix_form_delivers_what_the_heap_form_does() {
        let mut queue = EventQueue::with_capacity(16);
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut state = 99_u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state >> 33
        };
        let (mut now, mut sequence) = (0_u64, 0_u64);
        for step in 0..60_000 {
            // Grow past the switch for the first half, then drain.
            let pop = if step < 30_000 { next() % 4 == 0 } else { next() % 4 != 0 };
            if pop {
                let popped = queue.pop().map(|(t, id): (SimTime, u64)| (t.as_nanos(), id));
                let expected = (!reference.is_empty()).then(|| reference.remove(0));
                assert_eq!(popped, expected, "step {step}");
                if let Some((t, _)) = popped {
                    now = t;
                }
            } else {
                let at = now + next() % 1_000;
                queue.push(SimTime::from_nanos(at), sequence);
                let position = reference.partition_point(|&(t, _)| t <= at);
                reference.insert(position, (at, sequence));
                sequence += 1;
            }
        }
        assert!(matches!(queue.form, Form::Radix(_)), "the test must cross the switch");
        queue.clear();
        assert!(matches!(queue.form, Form::Heap(_)) && queue.is_empty());
    }

    /// The events `pop_noting_soon` notes are pending and due within 2^12 ns of the event it pops, so a
    /// prefetch is spent on events about to come; noting changes nothing popped.
    #[test]
    fn noted_events_are_pending_and_due_soon() {
        let mut noting = EventQueue::with_capacity(16);
        let mut plain = EventQueue::with_capacity(16);
        let mut due: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
        let mut state = 7_u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state >> 33
        };
        let (mut now, mut sequence, mut noted_total) = (0_u64, 0_u64, 0_usize);
        for step in 0..100_000 {
            if step % 3 == 0 {
                let mut noted = Vec::new();
                let popped = noting.pop_noting_soon(|&id: &u64| noted.push(id));
                assert_eq!(popped, plain.pop(), "step {step}");
                let Some((at, id)) = popped else { continue };
                now = at.as_nanos();
                due.remove(&id);
                for id in &noted {
                    let noted_at = due.get(id).copied().or((*id == popped.unwrap().1).then_some(now));
                    let noted_at = noted_at.expect("only pending events are noted");
                    assert!(noted_at - now < 1 << 12, "noted {} ns ahead", noted_at - now);
                }
                noted_total += noted.len();
            } else {
                // Mostly far ahead (1 ms), some near: only the near ones, or far ones come near, may be noted.
                let at = now + if next() % 4 == 0 { next() % 2_000 } else { next() % 1_000_000 };
                noting.push(SimTime::from_nanos(at), sequence);
                plain.push(SimTime::from_nanos(at), sequence);
                due.insert(sequence, at);
                sequence += 1;
            }
        }
        assert!(matches!(noting.form, Form::Radix(_)), "the test must reach the radix form");
        assert!(noted_total > 10_000, "noted {noted_total}: the hint must fire");
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

/// Properties over any interleaving of pushes and pops (proptest shrinks a failure to a small case).
#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::*;

    /// A push `delay` ns after the last popped time (a monotone clock), or a pop.
    #[derive(Clone, Copy, Debug)]
    enum Operation {
        Push { delay: u64 },
        Pop,
    }

    fn operations(spread: u64, count: std::ops::Range<usize>) -> impl Strategy<Value = Vec<Operation>> {
        let operation = prop_oneof![
            3 => (0..spread).prop_map(|delay| Operation::Push { delay }),
            1 => Just(Operation::Pop),
        ];
        prop::collection::vec(operation, count)
    }

    /// Runs `operations` through the queue and a sorted reference; every pop must agree, ties in push order.
    fn check(operations: &[Operation]) -> Result<(), TestCaseError> {
        let mut queue = EventQueue::with_capacity(4);
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let (mut now, mut sequence) = (0_u64, 0_u64);
        for &operation in operations.iter().chain(std::iter::repeat_n(&Operation::Pop, operations.len())) {
            match operation {
                Operation::Push { delay } => {
                    let at = now + delay;
                    queue.push(SimTime::from_nanos(at), sequence);
                    let position = reference.partition_point(|&(t, _)| t <= at);
                    reference.insert(position, (at, sequence));
                    sequence += 1;
                }
                Operation::Pop => {
                    let popped = queue.pop().map(|(t, id)| (t.as_nanos(), id));
                    let expected = (!reference.is_empty()).then(|| reference.remove(0));
                    prop_assert_eq!(popped, expected);
                    if let Some((t, _)) = popped {
                        now = t;
                    }
                }
            }
            prop_assert_eq!(queue.len(), reference.len());
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// Few distinct times: many ties, all in the binary heap form or just past the switch.
        #[test]
        fn pops_in_time_then_push_order_with_many_ties(operations in operations(4, 0..3_000)) {
            check(&operations)?;
        }

        /// Spread times: three pushes to a pop leave about 4,500 pending after 9,000 operations, past
        /// [`SWITCH_AT`], so the radix form is filled and then drained.
        #[test]
        fn pops_in_time_then_push_order_across_the_switch(operations in operations(1 << 40, 9_000..12_000)) {
            check(&operations)?;
        }
    }
}
