//! Is a queued population's backlog bounded? Over the second half of a run's slots, the least-squares slope of
//! the frames waiting (`backlog_slope`, frames per slot) and the verdict `growing`: 1 when the fitted line rose by
//! more than [`GROWTH_SHARE`] of the frames that arrived in that half. A stable system's backlog wanders around its
//! mean and its slope tends to 0 as the run grows; an unstable one's grows at the arrival rate minus the rate the
//! channel carries. The sums are kept in integers, so the slope is exact whatever the run's length.

/// The share of the half's arrivals the backlog must gain for `growing`.
pub(crate) const GROWTH_SHARE: f64 = 0.02;

/// The running sums of one run's second half. The backlog is recorded once per slot, in order, from `from` on.
#[derive(Clone, Debug, Default)]
pub(super) struct BacklogTrend {
    from: u64,
    /// Slots recorded: x runs 0, 1, …, count − 1.
    count: u64,
    sum_y: u128,
    sum_xy: u128,
    arrivals: u64,
}

impl BacklogTrend {
    /// Judges the slots from `slots / 2` on.
    pub(super) fn new(slots: u64) -> BacklogTrend {
        BacklogTrend { from: slots / 2, ..BacklogTrend::default() }
    }

    /// The frames waiting at the end of `slot`, and the frames that arrived in it.
    #[inline]
    pub(super) fn record(&mut self, slot: u64, backlog: u64, arrived: usize) {
        if slot < self.from {
            return;
        }
        debug_assert_eq!(slot - self.from, self.count, "one record per slot");
        self.sum_y += u128::from(backlog);
        self.sum_xy += u128::from(self.count) * u128::from(backlog);
        self.count += 1;
        self.arrivals += arrived as u64;
    }

    /// Frames per slot; NaN with fewer than two slots. With x = 0 … m−1, Σ(x − x̄)² = m(m² − 1)/12 and
    /// Σ(x − x̄)·y = (2Σxy − (m − 1)Σy)/2.
    pub(super) fn slope(&self) -> f64 {
        if self.count < 2 {
            return f64::NAN;
        }
        let m = self.count as f64;
        let twice_covariance = 2 * self.sum_xy as i128 - i128::from(self.count - 1) * self.sum_y as i128;
        6.0 * twice_covariance as f64 / (m * (m * m - 1.0))
    }

    /// 1 when the fitted rise over the half, slope × m, exceeds [`GROWTH_SHARE`] of its arrivals; else 0 (NaN
    /// with fewer than two slots).
    pub(super) fn growing(&self) -> f64 {
        let slope = self.slope();
        if slope.is_nan() {
            return f64::NAN;
        }
        let rise = slope * self.count as f64;
        if rise > GROWTH_SHARE * self.arrivals as f64 { 1.0 } else { 0.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trend(slots: u64, backlog: impl Fn(u64) -> u64, arrived: usize) -> BacklogTrend {
        let mut trend = BacklogTrend::new(slots);
        for slot in 0..slots {
            trend.record(slot, backlog(slot), arrived);
        }
        trend
    }

    #[test]
    fn the_slope_is_the_least_squares_line_of_the_second_half() {
        // A line in the second half (whatever the first half did) is fitted exactly.
        let line = trend(1_000, |slot| if slot < 500 { 7_000 } else { 3 * slot + 11 }, 1);
        assert!((line.slope() - 3.0).abs() < 1e-12, "{}", line.slope());
        assert_eq!(line.growing(), 1.0, "a rise of 1,500 against 500 arrivals");
        // Against a direct fit of a zig-zag.
        let zig = |slot: u64| (slot * 7919) % 13 + slot / 5;
        let fitted = trend(2_001, zig, 0);
        let xs: Vec<f64> = (1_000..2_001).map(|s| s as f64).collect();
        let ys: Vec<f64> = (1_000..2_001).map(|s| zig(s) as f64).collect();
        let (mx, my) = (xs.iter().sum::<f64>() / xs.len() as f64, ys.iter().sum::<f64>() / ys.len() as f64);
        let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
        let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
        assert!((fitted.slope() - sxy / sxx).abs() < 1e-9, "{} against {}", fitted.slope(), sxy / sxx);
        // Falling backlogs have negative slopes and do not grow.
        let falling = trend(100, |slot| 1_000 - slot, 1);
        assert!((falling.slope() + 1.0).abs() < 1e-12);
        assert_eq!(falling.growing(), 0.0);
    }

    #[test]
    fn growing_needs_a_rise_of_more_than_two_percent_of_the_arrivals() {
        // Over the 500 slots judged, 10 arrivals each: 5,000 frames, 2% = 100. A slope of 0.19 rises 95, of 0.21
        // rises 105.
        let rise = |tenths_per_ten_slots: u64| trend(1_000, move |slot| slot * tenths_per_ten_slots / 100, 10);
        assert_eq!(rise(19).growing(), 0.0);
        assert_eq!(rise(21).growing(), 1.0);
        assert!(BacklogTrend::new(2).slope().is_nan());
        assert!(trend(2, |_| 5, 0).slope().is_nan() && trend(2, |_| 5, 0).growing().is_nan(), "one slot judged");
        assert_eq!(trend(4, |_| 5, 0).slope(), 0.0);
    }
}
