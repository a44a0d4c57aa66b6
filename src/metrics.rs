//! Per-run measurement helpers shared by the models.

use crate::engine::{SimDuration, SimTime};

/// Counts occurrences per fixed-width time bucket (bucket `k` covers `[k·w, (k+1)·w)`).
/// Grows by whole buckets as time advances, so the per-event cost is an index and an increment.
#[derive(Clone, Debug)]
pub struct BucketCounter {
    width_nanos: u64,
    counts: Vec<u32>,
}

impl BucketCounter {
    /// `width` must be positive (scenario validation guarantees it).
    pub fn new(width: SimDuration) -> Self {
        BucketCounter { width_nanos: width.as_nanos().max(1), counts: Vec::with_capacity(1024) }
    }

    #[inline]
    pub fn record(&mut self, at: SimTime) {
        let index = (at.as_nanos() / self.width_nanos) as usize;
        if index >= self.counts.len() {
            self.counts.resize(index + 1, 0);
        }
        self.counts[index] += 1;
    }

    pub fn counts(&self) -> &[u32] {
        &self.counts
    }

    /// The largest count in any bucket (0 when nothing was recorded).
    pub fn peak(&self) -> u32 {
        self.counts.iter().copied().max().unwrap_or(0)
    }

    /// The peak over the mean of the non-empty buckets: 1 for a perfectly flat load, large for sharp waves.
    /// 0 when nothing was recorded.
    pub fn peak_to_mean(&self) -> f64 {
        let (sum, busy) =
            self.counts.iter().filter(|&&c| c > 0).fold((0_u64, 0_u64), |(s, b), &c| (s + u64::from(c), b + 1));
        if busy == 0 { 0.0 } else { f64::from(self.peak()) / (sum as f64 / busy as f64) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_split_time_at_their_edges() {
        let mut counter = BucketCounter::new(SimDuration::from_millis(10));
        for ms in [0, 9, 10, 10, 10, 35] {
            counter.record(SimTime::from_nanos(ms * 1_000_000));
        }
        assert_eq!(counter.counts(), &[2, 3, 0, 1]);
        assert_eq!(counter.peak(), 3);
        // Non-empty buckets hold 2, 3 and 1: mean 2, peak 3.
        assert_eq!(counter.peak_to_mean(), 1.5);
    }

    #[test]
    fn empty_counter_reports_zeros() {
        let counter = BucketCounter::new(SimDuration::from_millis(1));
        assert_eq!((counter.peak(), counter.peak_to_mean()), (0, 0.0));
    }
}
