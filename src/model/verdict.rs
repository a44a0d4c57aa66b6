//! Stuck-state verdicts: did a run tip into a bad state after its trigger, did it come back, and when.
//!
//! Both the server and the layers model count, per timeline bucket, the requests first sent in it (`offered`)
//! and those of them that later succeeded in good time (`in_time`: within `good_within`, by default the
//! client's timeout), and write what [`Verdict::judge`] makes of them with [`Verdict::write`]. Judged bucket by
//! bucket from the first bucket that starts at or after the trigger's end to the last that ends before new
//! requests stop:
//!
//! - a bucket is **healthy** when `in_time ≥ 0.9 × offered`, and **bad** when `in_time < stuck_below × offered`;
//! - **recovery** is the start of the first bucket from which every later bucket is healthy (`recovery_ms` from
//!   the trigger's end, `recovered_at_ms` on the run's clock);
//! - the run **tipped** when `stuck_hold` worth of consecutive buckets were bad;
//! - it is **stuck** when it tipped and never recovered. Over replicates, the mean of `stuck` is the stuck
//!   fraction, with a Wilson interval.

use crate::metrics::BucketCounter;
use crate::params::{ParamDefault, ParamKind, ParamSpec, Section, Value};
use crate::time::{SimDuration, SimTime};

/// The share of offered work done in good time from which a bucket counts as healthy (for recovery).
const HEALTHY: f64 = 0.9;

/// `[workload]` keys of the verdict, hashed into no seed unless set.
pub(crate) const PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        Section::Workload,
        "stuck_below",
        ParamKind::Real { min: 0.0, max: 1.0 },
        ParamDefault::Implied(Value::Real(0.5)),
        "for tipped and stuck: a bucket is bad when less than this share of the work offered in it succeeds in good time",
    ).measurement(),
    ParamSpec::new(
        Section::Workload,
        "stuck_hold",
        ParamKind::Duration,
        ParamDefault::Implied(Value::Duration(SimDuration::from_secs(10))),
        "for tipped and stuck: how long bad buckets must follow one another after the trigger for the run to have tipped",
    ).measurement(),
];

/// How a run is judged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct VerdictRule {
    pub(crate) stuck_below: f64,
    pub(crate) stuck_hold: SimDuration,
}

impl VerdictRule {
    pub(crate) fn of(point: &crate::params::Point) -> Result<VerdictRule, crate::params::ParamError> {
        Ok(VerdictRule { stuck_below: point.real("stuck_below")?, stuck_hold: point.duration("stuck_hold")? })
    }
}

/// A run's verdict; every field NaN when there is nothing to judge (no trigger, or no arrivals after it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Verdict {
    pub(crate) recovery_ms: f64,
    pub(crate) recovered: f64,
    pub(crate) recovered_at_ms: f64,
    /// NaN also when less than `stuck_hold` is left after the trigger.
    pub(crate) tipped: f64,
    pub(crate) stuck: f64,
}

/// Where a model's metrics hold the verdict's values: the indices of its `recovery_ms`, `recovered`,
/// `recovered_at_ms`, `tipped` and `stuck` columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct VerdictColumns {
    pub(crate) recovery_ms: usize,
    pub(crate) recovered: usize,
    pub(crate) recovered_at_ms: usize,
    pub(crate) tipped: usize,
    pub(crate) stuck: usize,
}

impl Verdict {
    const NONE: Verdict = Verdict {
        recovery_ms: f64::NAN,
        recovered: f64::NAN,
        recovered_at_ms: f64::NAN,
        tipped: f64::NAN,
        stuck: f64::NAN,
    };

    /// Judges the buckets between `trigger_end` and `arrivals_end` (see the module docs).
    pub(crate) fn judge(
        offered: &BucketCounter,
        in_time: &BucketCounter,
        trigger_end: Option<SimTime>,
        arrivals_end: SimTime,
        rule: VerdictRule,
    ) -> Verdict {
        let count =
            |counter: &BucketCounter, bucket: usize| f64::from(counter.counts().get(bucket).copied().unwrap_or(0));
        Verdict::judge_series(
            offered.width(),
            |bucket| (count(offered, bucket), count(in_time, bucket)),
            trigger_end,
            arrivals_end,
            rule,
        )
    }

    /// [`Verdict::judge`] over any series: `buckets(b)` is bucket b's (offered, in time), buckets `width` wide (the
    /// fluid limit's expected counts as well as a run's).
    pub(crate) fn judge_series(
        width: SimDuration,
        buckets: impl Fn(usize) -> (f64, f64),
        trigger_end: Option<SimTime>,
        arrivals_end: SimTime,
        rule: VerdictRule,
    ) -> Verdict {
        let Some(trigger_end) = trigger_end else { return Verdict::NONE };
        let width = width.as_nanos();
        let first = trigger_end.as_nanos().div_ceil(width) as usize;
        let end = (arrivals_end.as_nanos() / width) as usize;
        if first >= end {
            return Verdict::NONE;
        }
        let healthy = |bucket: usize| {
            let (offered, in_time) = buckets(bucket);
            in_time >= HEALTHY * offered
        };
        let bad = |bucket: usize| {
            let (offered, in_time) = buckets(bucket);
            in_time < rule.stuck_below * offered
        };
        let mut since = end;
        while since > first && healthy(since - 1) {
            since -= 1;
        }
        let recovered = since < end;
        let (recovery_ms, recovered_at_ms) = if recovered {
            let at = SimTime::from_nanos(since as u64 * width);
            (at.saturating_since(trigger_end).as_millis_f64(), at.as_millis_f64())
        } else {
            (f64::NAN, f64::NAN)
        };
        let hold_buckets = rule.stuck_hold.as_nanos().div_ceil(width).max(1) as usize;
        let tipped = if end - first < hold_buckets {
            f64::NAN
        } else {
            let mut streak = 0;
            let tipped = (first..end).any(|bucket| {
                streak = if bad(bucket) { streak + 1 } else { 0 };
                streak >= hold_buckets
            });
            f64::from(u8::from(tipped))
        };
        let stuck = if tipped.is_nan() { f64::NAN } else { f64::from(u8::from(tipped == 1.0 && !recovered)) };
        Verdict { recovery_ms, recovered: f64::from(u8::from(recovered)), recovered_at_ms, tipped, stuck }
    }

    /// Writes the verdict into a run's `metrics` at `columns`: the one writer of the verdict's metrics.
    pub(crate) fn write(self, metrics: &mut [f64], columns: VerdictColumns) {
        metrics[columns.recovery_ms] = self.recovery_ms;
        metrics[columns.recovered] = self.recovered;
        metrics[columns.recovered_at_ms] = self.recovered_at_ms;
        metrics[columns.tipped] = self.tipped;
        metrics[columns.stuck] = self.stuck;
    }
}

/// What a model that keeps no timeline of its own by send time tallies for its verdict: the user requests sent
/// per bucket, those of them that succeeded within `good_within`, and when the last one was sent.
pub(crate) struct VerdictTally {
    offered: BucketCounter,
    in_time: BucketCounter,
    good_within: SimDuration,
    last_sent: SimTime,
}

impl VerdictTally {
    pub(crate) fn new(bucket: SimDuration, good_within: SimDuration) -> Self {
        VerdictTally {
            offered: BucketCounter::new(bucket),
            in_time: BucketCounter::new(bucket),
            good_within,
            last_sent: SimTime::ZERO,
        }
    }

    /// A user request is sent at `now`.
    pub(crate) fn offered(&mut self, now: SimTime) {
        self.offered.record(now);
        self.last_sent = now;
    }

    /// The request sent at `sent` succeeded at `now`: it counts if it took at most `good_within`.
    pub(crate) fn succeeded(&mut self, sent: SimTime, now: SimTime) {
        if now - sent <= self.good_within {
            self.in_time.record(sent);
        }
    }

    /// The verdict, judged up to the last request sent.
    pub(crate) fn judge(&self, trigger_end: Option<SimTime>, rule: VerdictRule) -> Verdict {
        Verdict::judge(&self.offered, &self.in_time, trigger_end, self.last_sent, rule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counters of 1 s buckets holding `offered[i]` and `in_time[i]` in bucket i.
    fn counters(offered: &[u32], in_time: &[u32]) -> (BucketCounter, BucketCounter) {
        let fill = |counts: &[u32]| {
            let mut counter = BucketCounter::new(SimDuration::from_secs(1));
            for (bucket, &n) in counts.iter().enumerate() {
                for _ in 0..n {
                    counter.record(SimTime::ZERO + SimDuration::from_secs(bucket as u64));
                }
            }
            counter
        };
        (fill(offered), fill(in_time))
    }

    fn secs(n: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_secs(n)
    }

    const RULE: VerdictRule = VerdictRule { stuck_below: 0.5, stuck_hold: SimDuration::from_secs(3) };

    #[test]
    fn a_run_bad_for_the_hold_that_comes_back_tipped_and_recovered() {
        // Trigger ends at 2 s; buckets 2..5 bad, 6 half-way, 7.. healthy.
        let (offered, in_time) = counters(&[10; 10], &[10, 10, 0, 1, 2, 4, 7, 10, 9, 10]);
        let v = Verdict::judge(&offered, &in_time, Some(secs(2)), secs(10), RULE);
        assert_eq!((v.tipped, v.stuck, v.recovered), (1.0, 0.0, 1.0));
        assert_eq!((v.recovery_ms, v.recovered_at_ms), (5_000.0, 7_000.0));
    }

    #[test]
    fn a_run_bad_to_the_end_is_stuck_and_a_short_dip_did_not_tip() {
        let (offered, in_time) = counters(&[10; 10], &[10, 10, 0, 0, 0, 0, 4, 4, 0, 0]);
        let v = Verdict::judge(&offered, &in_time, Some(secs(2)), secs(10), RULE);
        assert_eq!((v.tipped, v.stuck, v.recovered), (1.0, 1.0, 0.0));
        assert!(v.recovery_ms.is_nan() && v.recovered_at_ms.is_nan());
        // Two bad buckets in a row are less than the 3 s hold: not tipped, and recovered from 4 s.
        let (offered, in_time) = counters(&[10; 10], &[10, 10, 0, 0, 10, 10, 10, 10, 10, 10]);
        let v = Verdict::judge(&offered, &in_time, Some(secs(2)), secs(10), RULE);
        assert_eq!((v.tipped, v.stuck, v.recovery_ms), (0.0, 0.0, 2_000.0));
    }

    #[test]
    fn the_writer_puts_each_value_in_its_own_column() {
        let verdict = Verdict { recovery_ms: 1.0, recovered: 2.0, recovered_at_ms: 3.0, tipped: 4.0, stuck: 5.0 };
        let columns = VerdictColumns { recovery_ms: 4, recovered: 0, recovered_at_ms: 2, tipped: 5, stuck: 1 };
        let mut metrics = vec![f64::NAN; 7];
        verdict.write(&mut metrics, columns);
        assert_eq!([metrics[0], metrics[1], metrics[2], metrics[4], metrics[5]], [2.0, 5.0, 3.0, 1.0, 4.0]);
        assert!(metrics[3].is_nan() && metrics[6].is_nan(), "the other columns are left alone");
    }

    #[test]
    fn nothing_to_judge_without_a_trigger_or_with_less_than_the_hold_after_it() {
        let (offered, in_time) = counters(&[10; 10], &[0; 10]);
        assert!(Verdict::judge(&offered, &in_time, None, secs(10), RULE).stuck.is_nan());
        assert!(Verdict::judge(&offered, &in_time, Some(secs(10)), secs(10), RULE).recovered.is_nan());
        let late = Verdict::judge(&offered, &in_time, Some(secs(8)), secs(10), RULE);
        assert_eq!(late.recovered, 0.0, "recovery is still judged");
        assert!(late.tipped.is_nan() && late.stuck.is_nan(), "but 2 s cannot hold 3 s of bad buckets");
    }
}
