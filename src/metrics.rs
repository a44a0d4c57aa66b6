//! Per-run measurement helpers shared by the models.

use crate::time::{SimDuration, SimTime};

/// The most buckets a timeline keeps (16 MiB of counters a series); later times are not recorded, so a run that
/// lasts far longer than its bucket width cannot exhaust memory.
pub(crate) const MAX_BUCKETS: usize = 1 << 22;

/// Counts occurrences per fixed-width time bucket (bucket `k` covers `[k·w, (k+1)·w)`).
/// Grows by whole buckets as time advances, so the per-event cost is an index and an increment.
#[derive(Clone, Debug)]
pub(crate) struct BucketCounter {
    width_nanos: u64,
    counts: Vec<u32>,
}

impl BucketCounter {
    /// `width` must be positive (scenario validation guarantees it).
    pub(crate) fn new(width: SimDuration) -> Self {
        BucketCounter { width_nanos: width.as_nanos().max(1), counts: Vec::with_capacity(1024) }
    }

    #[inline]
    pub(crate) fn record(&mut self, at: SimTime) {
        let index = (at.as_nanos() / self.width_nanos) as usize;
        if index >= MAX_BUCKETS {
            return;
        }
        if index >= self.counts.len() {
            self.counts.resize(index + 1, 0);
        }
        self.counts[index] += 1;
    }

    pub(crate) fn counts(&self) -> &[u32] {
        &self.counts
    }

    pub(crate) fn width(&self) -> SimDuration {
        SimDuration::from_nanos(self.width_nanos)
    }

    /// The largest count in any bucket (0 when nothing was recorded).
    pub(crate) fn peak(&self) -> u32 {
        self.counts.iter().copied().max().unwrap_or(0)
    }

    /// The peak over the mean of the non-empty buckets: 1 for a perfectly flat load, large for sharp waves.
    /// 0 when nothing was recorded.
    pub(crate) fn peak_to_mean(&self) -> f64 {
        let (sum, busy) =
            self.counts.iter().filter(|&&c| c > 0).fold((0_u64, 0_u64), |(s, b), &c| (s + u64::from(c), b + 1));
        if busy == 0 { 0.0 } else { f64::from(self.peak()) / (sum as f64 / busy as f64) }
    }
}

/// The largest value seen per fixed-width time bucket (for levels such as a queue's length).
#[derive(Clone, Debug)]
pub(crate) struct BucketMax {
    width_nanos: u64,
    maxima: Vec<u32>,
}

impl BucketMax {
    pub(crate) fn new(width: SimDuration) -> Self {
        BucketMax { width_nanos: width.as_nanos().max(1), maxima: Vec::with_capacity(1024) }
    }

    #[inline]
    pub(crate) fn record(&mut self, at: SimTime, value: u32) {
        let index = (at.as_nanos() / self.width_nanos) as usize;
        if index >= MAX_BUCKETS {
            return;
        }
        if index >= self.maxima.len() {
            self.maxima.resize(index + 1, 0);
        }
        self.maxima[index] = self.maxima[index].max(value);
    }

    pub(crate) fn maxima(&self) -> &[u32] {
        &self.maxima
    }
}

/// A log-linear histogram of durations (HDR-style): exact below 128 ns, then 64 sub-buckets per power of two, so
/// every recorded value is known to within 1/64 (1.6%) of itself. Fixed size (3,776 counters), so recording
/// never allocates; quantiles walk the counters instead of sorting samples.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LatencyHistogram {
    counts: Vec<u64>,
    total: u64,
    sum_nanos: u128,
}

/// Values below `1 << SUB_BITS` get a bucket each.
const SUB_BITS: u32 = 7;
const HALF: u64 = 1 << (SUB_BITS - 1);
const BUCKETS: usize = (64 - SUB_BITS as usize + 1) * HALF as usize + HALF as usize;

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram { counts: vec![0; BUCKETS], total: 0, sum_nanos: 0 }
    }
}

impl LatencyHistogram {
    fn index(nanos: u64) -> usize {
        if nanos < (1 << SUB_BITS) {
            return nanos as usize;
        }
        let exponent = 63 - nanos.leading_zeros() - (SUB_BITS - 1);
        let mantissa = nanos >> exponent;
        (u64::from(exponent) * HALF + mantissa) as usize
    }

    /// The smallest value and the width of bucket `index`.
    fn bucket(index: usize) -> (u64, u64) {
        let index = index as u64;
        if index < (1 << SUB_BITS) {
            return (index, 1);
        }
        let exponent = index / HALF - 1;
        let mantissa = index % HALF + HALF;
        (mantissa << exponent, 1 << exponent)
    }

    #[inline]
    pub(crate) fn record(&mut self, value: SimDuration) {
        let nanos = value.as_nanos();
        self.counts[Self::index(nanos)] += 1;
        self.total += 1;
        self.sum_nanos += u128::from(nanos);
    }

    pub(crate) fn count(&self) -> u64 {
        self.total
    }

    /// The non-empty buckets only: what a finished run keeps (a few hundred entries instead of 3,776).
    pub(crate) fn sparse(&self) -> SparseHistogram {
        let entries = self
            .counts
            .iter()
            .enumerate()
            .filter(|(_, count)| **count > 0)
            .map(|(index, &count)| (index as u32, count))
            .collect();
        SparseHistogram { entries, total: self.total, sum_nanos: self.sum_nanos }
    }

    /// Adds a finished run's counts to this histogram.
    pub(crate) fn merge(&mut self, other: &SparseHistogram) {
        for &(index, count) in &other.entries {
            self.counts[index as usize] += count;
        }
        self.total += other.total;
        self.sum_nanos += other.sum_nanos;
    }

    /// The empirical CDF as `(upper edge of bucket in ns, fraction ≤ it)` for every non-empty bucket.
    pub(crate) fn cdf(&self) -> Vec<(f64, f64)> {
        let mut seen = 0;
        let mut points = Vec::new();
        for (index, &count) in self.counts.iter().enumerate() {
            if count > 0 {
                seen += count;
                let (low, width) = Self::bucket(index);
                points.push(((low + width - 1) as f64, seen as f64 / self.total as f64));
            }
        }
        points
    }

    /// The exact mean of the recorded values in nanoseconds (NaN when empty).
    pub(crate) fn mean_nanos(&self) -> f64 {
        if self.total == 0 { f64::NAN } else { self.sum_nanos as f64 / self.total as f64 }
    }

    /// The `q`-quantile (0 < q ≤ 1) as the midpoint of the bucket holding the ⌈q·n⌉-th smallest value, in
    /// nanoseconds; NaN when empty.
    pub(crate) fn quantile_nanos(&self, q: f64) -> f64 {
        if self.total == 0 {
            return f64::NAN;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (index, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                let (low, width) = Self::bucket(index);
                return low as f64 + (width as f64 - 1.0) / 2.0;
            }
        }
        f64::NAN
    }
}

/// A [`LatencyHistogram`]'s non-empty buckets, as `(bucket index, count)`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SparseHistogram {
    entries: Vec<(u32, u64)>,
    total: u64,
    sum_nanos: u128,
}

impl SparseHistogram {
    /// Rebuilds a histogram from [`SparseHistogram::parts`] (a shard's stored run); `None` unless every bucket
    /// index exists and the counts add up to `total`.
    pub fn from_parts(entries: Vec<(u32, u64)>, total: u64, sum_nanos: u128) -> Option<Self> {
        let in_range = entries.iter().all(|&(index, _)| (index as usize) < BUCKETS);
        let counted = entries.iter().try_fold(0u64, |sum, &(_, count)| sum.checked_add(count));
        (in_range && counted == Some(total)).then_some(SparseHistogram { entries, total, sum_nanos })
    }

    /// The non-empty buckets as `(bucket index, count)`, the number of values and their exact sum in ns.
    pub fn parts(&self) -> (&[(u32, u64)], u64, u128) {
        (&self.entries, self.total, self.sum_nanos)
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
    fn histogram_buckets_tile_the_number_line() {
        let mut expected_low = 0;
        for index in 0..BUCKETS {
            let (low, width) = LatencyHistogram::bucket(index);
            assert_eq!(low, expected_low, "bucket {index}");
            assert_eq!(LatencyHistogram::index(low), index);
            assert_eq!(LatencyHistogram::index(low + (width - 1)), index);
            assert!(width == 1 || (width as f64) / (low as f64) <= 1.0 / 64.0, "bucket {index} is too wide");
            expected_low = low.wrapping_add(width);
        }
        assert_eq!(expected_low, 0, "the last bucket ends at 2^64");
    }

    #[test]
    fn histogram_quantiles_are_within_their_bucket_precision() {
        let mut histogram = LatencyHistogram::default();
        for micros in 1..=10_000_u64 {
            histogram.record(SimDuration::from_micros(micros));
        }
        assert_eq!(histogram.count(), 10_000);
        assert_eq!(histogram.mean_nanos(), 5_000.5e3);
        for (q, exact) in [(0.5, 5_000e3), (0.9, 9_000e3), (0.99, 9_900e3), (0.999, 9_990e3), (1.0, 10_000e3)] {
            let estimate = histogram.quantile_nanos(q);
            assert!((estimate - exact).abs() <= exact / 64.0, "q={q}: {estimate} vs {exact}");
        }
        assert!(LatencyHistogram::default().quantile_nanos(0.5).is_nan());

        let mut merged = LatencyHistogram::default();
        merged.merge(&histogram.sparse());
        merged.merge(&histogram.sparse());
        assert_eq!(merged.count(), 20_000);
        assert_eq!(merged.quantile_nanos(0.5), histogram.quantile_nanos(0.5));
        let cdf = merged.cdf();
        assert_eq!(cdf.last().unwrap().1, 1.0);
        assert!(cdf.windows(2).all(|pair| pair[0].0 < pair[1].0 && pair[0].1 < pair[1].1));
    }

    #[test]
    fn bucket_max_keeps_the_largest_value_per_bucket() {
        let mut levels = BucketMax::new(SimDuration::from_millis(10));
        for (ms, value) in [(0, 3), (5, 7), (9, 2), (25, 1)] {
            levels.record(SimTime::from_nanos(ms * 1_000_000), value);
        }
        assert_eq!(levels.maxima(), &[7, 0, 1]);
    }

    #[test]
    fn empty_counter_reports_zeros() {
        let counter = BucketCounter::new(SimDuration::from_millis(1));
        assert_eq!((counter.peak(), counter.peak_to_mean()), (0, 0.0));
    }
}
