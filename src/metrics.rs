//! Per-run measurement helpers shared by the models.

use crate::time::{SimDuration, SimTime};

/// The most buckets a timeline keeps (16 MiB of counters a series); later times are not recorded, so a run that
/// lasts far longer than its bucket width cannot exhaust memory.
pub(crate) const MAX_BUCKETS: usize = 1 << 22;

/// Counts occurrences per fixed-width time bucket (bucket `k` covers `[k·w, (k+1)·w)`).
/// Grows by whole buckets as time advances, so the per-event cost is an index and an increment.
#[derive(Clone, Debug)]
pub(crate) struct BucketCounter {
    buckets: BucketIndex,
    counts: Vec<u32>,
}

/// The bucket `⌊t / w⌋` of an instant `t`, for buckets of width `w`. It remembers the span of the last bucket it
/// computed: a run's instants mostly fall in the bucket of the one before, and then skip the 64-bit division
/// (tens of cycles, several times per event).
#[derive(Clone, Debug)]
struct BucketIndex {
    width_nanos: u64,
    /// The last bucket computed and where it starts.
    last_index: u64,
    last_start_nanos: u64,
}

impl BucketIndex {
    fn new(width: SimDuration) -> Self {
        BucketIndex { width_nanos: width.as_nanos().max(1), last_index: 0, last_start_nanos: 0 }
    }

    #[inline]
    fn of(&mut self, at: SimTime) -> usize {
        let nanos = at.as_nanos();
        if nanos < self.last_start_nanos || nanos - self.last_start_nanos >= self.width_nanos {
            self.last_index = nanos / self.width_nanos;
            self.last_start_nanos = self.last_index * self.width_nanos;
        }
        self.last_index as usize
    }

    fn width(&self) -> SimDuration {
        SimDuration::from_nanos(self.width_nanos)
    }
}

impl BucketCounter {
    /// `width` must be positive (scenario validation guarantees it).
    pub(crate) fn new(width: SimDuration) -> Self {
        BucketCounter { buckets: BucketIndex::new(width), counts: Vec::with_capacity(1024) }
    }

    #[inline]
    pub(crate) fn record(&mut self, at: SimTime) {
        let index = self.buckets.of(at);
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
        self.buckets.width()
    }

    /// The largest count in any bucket (0 when nothing was recorded).
    pub(crate) fn peak(&self) -> u32 {
        self.counts.iter().copied().max().unwrap_or(0)
    }

    /// How bunched the recorded events are in time, over their span: from the first non-empty bucket to the last,
    /// empty buckets included (a wave's quiet gaps are part of its shape). `None` when nothing was recorded.
    pub(crate) fn synchrony(&self) -> Option<Synchrony> {
        let first = self.counts.iter().position(|&c| c > 0)?;
        let last = self.counts.iter().rposition(|&c| c > 0)?;
        let span = &self.counts[first..=last];
        let buckets = span.len() as f64;
        let mean = span.iter().map(|&c| f64::from(c)).sum::<f64>() / buckets;
        let peak = span.iter().copied().max().unwrap_or(0);
        // Sample variance (n − 1), so that a Poisson stream's dispersion is 1 in expectation.
        let variance = if span.len() < 2 {
            0.0
        } else {
            span.iter().map(|&c| (f64::from(c) - mean).powi(2)).sum::<f64>() / (buckets - 1.0)
        };
        Some(Synchrony { peak, peak_to_mean: f64::from(peak) / mean, dispersion: variance / mean })
    }
}

/// How bunched a stream of events is, per timeline bucket over the stream's span ([`BucketCounter::synchrony`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Synchrony {
    /// The most events in one bucket.
    pub(crate) peak: u32,
    /// The peak over the mean per bucket: 1 for a perfectly even stream, large when the events come in waves.
    pub(crate) peak_to_mean: f64,
    /// The index of dispersion, variance over mean per bucket: about 1 for events that arrive independently (a
    /// Poisson stream), far above 1 for waves, below 1 for a stream more even than chance.
    pub(crate) dispersion: f64,
}

/// The largest value seen per fixed-width time bucket (for levels such as a queue's length).
#[derive(Clone, Debug)]
pub(crate) struct BucketMax {
    buckets: BucketIndex,
    maxima: Vec<u32>,
}

impl BucketMax {
    pub(crate) fn new(width: SimDuration) -> Self {
        BucketMax { buckets: BucketIndex::new(width), maxima: Vec::with_capacity(1024) }
    }

    #[inline]
    pub(crate) fn record(&mut self, at: SimTime, value: u32) {
        let index = self.buckets.of(at);
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

/// Lays a run's per-bucket columns out as `RunOutput::timeline` holds them: bucket after bucket, `series` values
/// each, column `(index, values)` in series `index`. As long as the longest column; elsewhere 0.
pub(crate) fn lay_out_timeline(series: usize, columns: &[(usize, &[u32])]) -> Vec<f64> {
    let buckets = columns.iter().map(|(_, values)| values.len()).max().unwrap_or(0);
    let mut timeline = vec![0.0; buckets * series];
    for &(index, values) in columns {
        for (bucket, &value) in values.iter().enumerate() {
            timeline[bucket * series + index] = f64::from(value);
        }
    }
    timeline
}

/// A run's trigger (an outage, a fault window, a spike) as the span `[start, end)` of time: windowed metrics look
/// at the requests first sent during it and after it, beside the whole run's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Trigger {
    pub(crate) start: SimTime,
    pub(crate) end: SimTime,
}

/// When a request was first sent, relative to the trigger.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Before the trigger, or in a run without one.
    #[default]
    Before,
    During,
    After,
}

impl Trigger {
    pub(crate) fn phase(self, sent: SimTime) -> Phase {
        if sent < self.start {
            Phase::Before
        } else if sent < self.end {
            Phase::During
        } else {
            Phase::After
        }
    }
}

/// Tallies of the requests first sent during a trigger and after it: how many, how many ended and succeeded,
/// the attempts they made and their latencies.
#[derive(Clone, Debug, Default)]
pub(crate) struct PhaseTally {
    requests: [u64; 2],
    ended: [u64; 2],
    succeeded: [u64; 2],
    attempts: [u64; 2],
    latency: [LatencyHistogram; 2],
}

/// The windowed metrics of one phase.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PhaseMetrics {
    /// Successes over the requests of the phase that ended.
    pub(crate) success_rate: f64,
    /// Attempts per request of the phase.
    pub(crate) amplification: f64,
    pub(crate) latency_p99_ms: f64,
}

impl PhaseTally {
    fn slot(phase: Phase) -> Option<usize> {
        match phase {
            Phase::Before => None,
            Phase::During => Some(0),
            Phase::After => Some(1),
        }
    }

    #[inline]
    pub(crate) fn request(&mut self, phase: Phase) {
        if let Some(slot) = Self::slot(phase) {
            self.requests[slot] += 1;
        }
    }

    #[inline]
    pub(crate) fn attempt(&mut self, phase: Phase) {
        if let Some(slot) = Self::slot(phase) {
            self.attempts[slot] += 1;
        }
    }

    /// A request of `phase` ended: with success after `latency`, or with `None` for a failure.
    #[inline]
    pub(crate) fn ended(&mut self, phase: Phase, latency: Option<SimDuration>) {
        if let Some(slot) = Self::slot(phase) {
            self.ended[slot] += 1;
            if let Some(latency) = latency {
                self.succeeded[slot] += 1;
                self.latency[slot].record(latency);
            }
        }
    }

    /// `count` per request first sent in `phase` (NaN before the trigger, and for a phase with no request).
    pub(crate) fn per_request(&self, phase: Phase, count: u64) -> f64 {
        match Self::slot(phase) {
            Some(slot) if self.requests[slot] > 0 => count as f64 / self.requests[slot] as f64,
            _ => f64::NAN,
        }
    }

    /// The metrics of the requests sent during the trigger and after it; NaN where a phase had no request.
    pub(crate) fn metrics(&self) -> [PhaseMetrics; 2] {
        std::array::from_fn(|slot| {
            let ratio = |a: u64, b: u64| if b == 0 { f64::NAN } else { a as f64 / b as f64 };
            PhaseMetrics {
                success_rate: ratio(self.succeeded[slot], self.ended[slot]),
                amplification: ratio(self.attempts[slot], self.requests[slot]),
                latency_p99_ms: self.latency[slot].quantile_nanos(0.99) / 1e6,
            }
        })
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
    fn a_timeline_is_laid_out_bucket_by_bucket_as_long_as_its_longest_column() {
        let timeline = lay_out_timeline(3, &[(0, &[1, 2]), (2, &[7, 8, 9])]);
        assert_eq!(timeline, vec![1.0, 0.0, 7.0, 2.0, 0.0, 8.0, 0.0, 0.0, 9.0]);
        assert!(lay_out_timeline(3, &[(1, &[])]).is_empty());
    }

    /// Events at `ms` milliseconds, in 10 ms buckets.
    fn counter_of(ms: &[u64]) -> BucketCounter {
        let mut counter = BucketCounter::new(SimDuration::from_millis(10));
        ms.iter().for_each(|&ms| counter.record(SimTime::from_nanos(ms * 1_000_000)));
        counter
    }

    #[test]
    fn bucket_index_matches_division_forwards_backwards_and_at_edges() {
        // Mostly forward steps, some back, and the bucket edges themselves: the remembered bucket must never
        // answer for an instant outside it.
        let width = 7_u64;
        let mut buckets = BucketIndex::new(SimDuration::from_nanos(width));
        let mut nanos = 0_u64;
        let mut state = 0x9E37_79B9_u64;
        for step in 0..10_000_u64 {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let jump = (state >> 33) % 20;
            nanos = match step % 5 {
                0 => nanos.saturating_sub(jump),
                1 => nanos / width * width + width - 1,
                2 => (nanos / width + 1) * width,
                _ => nanos + jump,
            };
            assert_eq!(buckets.of(SimTime::from_nanos(nanos)), (nanos / width) as usize, "at {nanos} ns");
        }
        assert_eq!(buckets.of(SimTime::from_nanos(u64::MAX)), (u64::MAX / width) as usize);
        assert_eq!(buckets.of(SimTime::ZERO), 0);
    }

    #[test]
    fn synchrony_counts_the_quiet_buckets_between_waves() {
        // Two waves of 10 events, 100 ms apart: buckets 2 and 12, and nine empty buckets between them.
        let waves: Vec<u64> = (0..10).map(|_| 25).chain((0..10).map(|_| 125)).collect();
        let synchrony = counter_of(&waves).synchrony().unwrap();
        assert_eq!(synchrony.peak, 10);
        assert!((synchrony.peak_to_mean - 10.0 / (20.0 / 11.0)).abs() < 1e-12);
        // Mean 20/11; two buckets of 10, nine of 0: variance (2·(10 − μ)² + 9·μ²)/10.
        let mean = 20.0 / 11.0;
        let variance = (2.0 * (10.0 - mean) * (10.0 - mean) + 9.0 * mean * mean) / 10.0;
        assert!((synchrony.dispersion - variance / mean).abs() < 1e-12);
        // The same 20 events spread one per bucket are perfectly even.
        let even: Vec<u64> = (0..20).map(|i| 5 + 10 * i).collect();
        let synchrony = counter_of(&even).synchrony().unwrap();
        assert_eq!((synchrony.peak, synchrony.peak_to_mean, synchrony.dispersion), (1, 1.0, 0.0));
        assert_eq!(counter_of(&[]).synchrony(), None);
    }

    #[test]
    fn phases_split_requests_at_the_trigger_and_tally_each_side() {
        let at = |ms: u64| SimTime::from_nanos(ms * 1_000_000);
        let trigger = Trigger { start: at(100), end: at(200) };
        assert_eq!(
            [at(99), at(100), at(199), at(200)].map(|t| trigger.phase(t)),
            [Phase::Before, Phase::During, Phase::During, Phase::After]
        );
        let mut tally = PhaseTally::default();
        // During: two requests, five attempts, one success after 30 ms, one failure. After: one request, one
        // attempt, a success after 2 ms. Before: nothing counted.
        for (phase, attempts, latency) in [
            (Phase::During, 4, None),
            (Phase::During, 1, Some(30)),
            (Phase::After, 1, Some(2)),
            (Phase::Before, 9, Some(1)),
        ] {
            tally.request(phase);
            (0..attempts).for_each(|_| tally.attempt(phase));
            tally.ended(phase, latency.map(SimDuration::from_millis));
        }
        let [during, after] = tally.metrics();
        assert_eq!((during.success_rate, during.amplification), (0.5, 2.5));
        assert!((during.latency_p99_ms - 30.0).abs() < 30.0 / 64.0, "{}", during.latency_p99_ms);
        assert_eq!((after.success_rate, after.amplification), (1.0, 1.0));
        let empty = PhaseTally::default().metrics();
        assert!(empty.iter().all(|m| m.success_rate.is_nan() && m.amplification.is_nan() && m.latency_p99_ms.is_nan()));
    }

    #[test]
    fn a_poisson_stream_has_a_dispersion_of_one() {
        use rand::RngExt;
        use rand::SeedableRng;
        // 100 streams of ~2,000 events at 1 per ms (10 per bucket); the mean dispersion and its 99% interval.
        let dispersions: Vec<f64> = (0..100)
            .map(|seed| {
                let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
                let mut counter = BucketCounter::new(SimDuration::from_millis(10));
                // Events in [0 s, 2 s) only, so that the span's first and last buckets are whole.
                let mut t = -(1.0 - rng.random::<f64>()).ln() * 1e6;
                while t < 2e9 {
                    counter.record(SimTime::from_nanos(t as u64));
                    t += -(1.0 - rng.random::<f64>()).ln() * 1e6;
                }
                counter.synchrony().unwrap().dispersion
            })
            .collect();
        let estimate = crate::stats::Estimate::of(&dispersions);
        let half_width_99 = estimate.ci95 / crate::stats::t_975(99) * 2.626405;
        assert!(half_width_99 < 0.05, "the interval is tight enough to mean something: {half_width_99}");
        assert!((estimate.mean - 1.0).abs() < half_width_99, "{} ± {half_width_99}", estimate.mean);
    }

    #[test]
    fn buckets_split_time_at_their_edges() {
        let mut counter = BucketCounter::new(SimDuration::from_millis(10));
        for ms in [0, 9, 10, 10, 10, 35] {
            counter.record(SimTime::from_nanos(ms * 1_000_000));
        }
        assert_eq!(counter.counts(), &[2, 3, 0, 1]);
        assert_eq!(counter.peak(), 3);
        // Over the span 2, 3, 0, 1 (the empty bucket counts): mean 1.5, peak 3.
        assert_eq!(counter.synchrony().unwrap().peak_to_mean, 2.0);
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
        assert_eq!((counter.peak(), counter.synchrony()), (0, None));
    }
}
