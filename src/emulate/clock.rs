//! Scenario time on the wall clock. An emulation starts at `t0`; scenario time t happens at `t0 + scale · t`, so
//! `--time-scale 10` runs everything ten times slower than written. Every wait sleeps until an absolute deadline
//! (errors never add up) and records how late it woke, in scenario time: tokio's timers round deadlines up to the
//! next millisecond and a busy runtime wakes them later still, and that lateness is the emulation's overhead.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::metrics::LatencyHistogram;
use crate::time::{SimDuration, SimTime};

/// The mapping between scenario time and the wall clock.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    t0: Instant,
    scale: f64,
}

impl Clock {
    /// A clock whose scenario time 0 is `t0` and which runs `scale` times slower than the scenario.
    pub(crate) fn new(t0: Instant, scale: f64) -> Clock {
        Clock { t0, scale }
    }

    /// The scenario time now (0 before the start).
    pub(crate) fn now(&self) -> SimTime {
        self.at_wall(Instant::now())
    }

    /// The scenario time of wall instant `instant`.
    pub(crate) fn at_wall(&self, instant: Instant) -> SimTime {
        let wall = instant.saturating_duration_since(self.t0);
        SimTime::from_nanos((wall.as_nanos() as f64 / self.scale) as u64)
    }

    /// Nanoseconds of wall time since the start, as the client stamps its requests.
    pub(crate) fn wall_nanos(&self) -> u64 {
        Instant::now().saturating_duration_since(self.t0).as_nanos() as u64
    }

    /// A scenario duration on the wall clock.
    pub(crate) fn wall(&self, duration: SimDuration) -> Duration {
        Duration::from_secs_f64(duration.as_nanos_f64() * self.scale / 1e9)
    }

    /// A wall duration in scenario time.
    pub(crate) fn scenario(&self, wall: Duration) -> SimDuration {
        SimDuration::from_nanos_f64(wall.as_nanos() as f64 / self.scale)
    }

    /// The wall instant of scenario time `at`.
    pub(crate) fn deadline(&self, at: SimTime) -> Instant {
        self.t0 + self.wall(at - SimTime::ZERO)
    }

    /// Sleeps until scenario time `at` and records the lateness of the wake-up in `lags`; returns the time woken.
    pub(crate) async fn sleep_until(&self, at: SimTime, lags: &Lags) -> SimTime {
        tokio::time::sleep_until(self.deadline(at)).await;
        let woke = self.now();
        lags.record(woke.saturating_since(at));
        woke
    }
}

/// How late timers woke, in scenario time: one histogram (1.6% resolution) shared by the tasks of a runtime.
#[derive(Default)]
pub(crate) struct Lags(Mutex<LatencyHistogram>);

impl Lags {
    pub(crate) fn record(&self, lag: SimDuration) {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).record(lag);
    }

    /// Adds another runtime's lags.
    pub(crate) fn absorb(&self, other: &Lags) {
        let theirs = other.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).sparse();
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).merge(&theirs);
    }

    pub(crate) fn count(&self) -> u64 {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).count()
    }

    /// The mean in ms (0 when nothing was recorded).
    pub(crate) fn mean_ms(&self) -> f64 {
        let histogram = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if histogram.count() == 0 { 0.0 } else { histogram.mean_nanos() / 1e6 }
    }

    /// The `q` quantile in ms (0 when nothing was recorded).
    pub(crate) fn quantile_ms(&self, q: f64) -> f64 {
        let histogram = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if histogram.count() == 0 { 0.0 } else { histogram.quantile_nanos(q) / 1e6 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_time_maps_to_the_wall_scaled() {
        let t0 = Instant::now();
        for scale in [1.0, 10.0, 0.5] {
            let clock = Clock::new(t0, scale);
            let ten_ms = SimDuration::from_millis(10);
            assert_eq!(clock.wall(ten_ms), Duration::from_secs_f64(0.010 * scale));
            assert_eq!(clock.scenario(clock.wall(ten_ms)), ten_ms);
            assert_eq!(clock.deadline(SimTime::ZERO + ten_ms), t0 + clock.wall(ten_ms));
            assert_eq!(clock.at_wall(t0 + Duration::from_millis(20)), SimTime::from_nanos((20e6 / scale) as u64));
            assert_eq!(clock.at_wall(t0 - Duration::from_millis(1).min(t0.elapsed())), SimTime::ZERO, "before t0");
        }
        // Wall nanoseconds since the start, whatever the scale: what the client stamps on its requests.
        let started = Clock::new(Instant::now() - Duration::from_millis(5), 10.0);
        let stamp = started.wall_nanos();
        assert!((5_000_000..1_000_000_000).contains(&stamp), "{stamp}");
        assert!(started.wall_nanos() >= stamp);
    }

    #[test]
    fn a_sleep_wakes_no_earlier_than_its_deadline_and_records_its_lag() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        let lags = Lags::default();
        let clock = Clock::new(Instant::now(), 4.0);
        runtime.block_on(async {
            for ms in [1, 2, 5] {
                let at = SimTime::ZERO + SimDuration::from_millis(ms);
                assert!(clock.sleep_until(at, &lags).await >= at, "{ms}");
            }
        });
        assert_eq!(lags.count(), 3);
        // A timer never wakes exactly at its deadline: every lag recorded is above 0.
        assert!(lags.quantile_ms(0.0) > 0.0 && lags.mean_ms() > 0.0, "{}", lags.mean_ms());
        let other = Lags::default();
        other.record(SimDuration::from_millis(7));
        lags.absorb(&other);
        assert_eq!(lags.count(), 4);
        assert!((lags.quantile_ms(1.0) - 7.0).abs() < 7.0 * 0.02, "{}", lags.quantile_ms(1.0));
        assert!(lags.mean_ms() > 7.0 / 4.0, "{}", lags.mean_ms());
        assert_eq!((Lags::default().mean_ms(), Lags::default().quantile_ms(0.99)), (0.0, 0.0));
        let known = Lags::default();
        known.record(SimDuration::from_millis(2));
        known.record(SimDuration::from_millis(4));
        assert!((known.mean_ms() - 3.0).abs() < 1e-12, "the mean is exact: {}", known.mean_ms());
    }
}
