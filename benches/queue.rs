//! The future event list on its own, as the pending set grows: `hold` operations (pop the earliest event, push
//! one at its time plus a random delay) on a queue kept at 10^3 … 10^7 pending events: the engine's queue (a
//! binary heap up to 4,096 pending events, a radix heap beyond) against the binary heap alone, the queue the
//! engine had before. The delays are exponential with a mean of one microsecond per pending event, so the queue
//! keeps its size.
//!
//! Run: `cargo bench --bench queue`. docs/performance.md quotes these figures.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use retrylab::engine::EventQueue;
use retrylab::time::SimTime;

/// Hold operations per iteration.
const HOLDS: u64 = 1_000_000;

/// The baseline: the engine's queue before the radix heap, a binary min-heap of one `u128` key (time in the high
/// 64 bits, insertion sequence in the low) with the "hold" shortcut: `pop` leaves the root in place and the next
/// `push` overwrites it with one sift down.
struct BinaryHeapQueue {
    heap: BinaryHeap<Reverse<(u128, u32)>>,
    sequence: u64,
    root_consumed: bool,
}

impl BinaryHeapQueue {
    fn push(&mut self, at: u64, event: u32) {
        let entry = Reverse((u128::from(at) << 64 | u128::from(self.sequence), event));
        self.sequence += 1;
        if self.root_consumed {
            self.root_consumed = false;
            if let Some(mut root) = self.heap.peek_mut() {
                *root = entry;
                return;
            }
        }
        self.heap.push(entry);
    }

    fn pop(&mut self) -> Option<(u64, u32)> {
        if self.root_consumed {
            self.heap.pop();
        }
        let root = self.heap.peek();
        self.root_consumed = root.is_some();
        root.map(|Reverse((key, event))| ((key >> 64) as u64, *event))
    }
}

/// 4,096 exponential delays (in ns) with the given mean, from a fixed LCG: the same for both queues.
fn delays(mean_ns: f64) -> Vec<u64> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    (0..4096)
        .map(|_| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let uniform = ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            (-uniform.ln() * mean_ns) as u64
        })
        .collect()
}

fn hold(c: &mut Criterion) {
    let mut group = c.benchmark_group("queue-hold");
    group.sample_size(10);
    group.throughput(Throughput::Elements(HOLDS));
    for pending in [1_000_u64, 10_000, 100_000, 1_000_000, 10_000_000] {
        let delays = delays(pending as f64 * 1_000.0);
        let mut radix = EventQueue::with_capacity(pending as usize);
        let mut binary =
            BinaryHeapQueue { heap: BinaryHeap::with_capacity(pending as usize), sequence: 0, root_consumed: false };
        for i in 0..pending {
            let at = delays[(i % 4096) as usize];
            radix.push(SimTime::from_nanos(at), i as u32);
            binary.push(at, i as u32);
        }
        let mut step = 0_usize;
        group.bench_with_input(BenchmarkId::new("engine-queue", pending), &pending, |b, _| {
            b.iter(|| {
                for _ in 0..HOLDS {
                    let (at, event) = radix.pop().expect("the queue keeps its size");
                    step = (step + 1) & 4095;
                    radix.push(SimTime::from_nanos(at.as_nanos() + delays[step]), black_box(event));
                }
            })
        });
        group.bench_with_input(BenchmarkId::new("binary-heap", pending), &pending, |b, _| {
            b.iter(|| {
                for _ in 0..HOLDS {
                    let (at, event) = binary.pop().expect("the queue keeps its size");
                    step = (step + 1) & 4095;
                    binary.push(at + delays[step], black_box(event));
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, hold);
criterion_main!(benches);
