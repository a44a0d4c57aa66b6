//! Periodic jobs by the clock, as systemd timers and cron run them: every host runs a job at each period boundary
//! of its own clock (`OnCalendar=`), moved by a fresh random delay (`RandomizedDelaySec=`) and then placed inside
//! an accuracy window (`AccuracySec=`) at a position stable per host; with neither, at the boundary itself (cron).
//!
//! The placement follows systemd (src/core/timer.c, src/libsystemd/sd-event/sd-event.c, v255–v258): the
//! randomized delay U[0, R) is added to the boundary v first; the wake-up is then chosen in the window [v, v + A] by
//! trying, in turn, grids of 1 min, 10 s, 1 s and 250 ms shifted by the host's perturbation p (a value in
//! [0, 1 min) derived from its boot id, shared by all its timers; p mod the grid for the finer ones): the latest
//! point of the grid before v + A, if it is not before v; else v + A itself. A window of 1 µs or less wakes at v.
//! With the default A = 1 min every host lands at v + ((p − v) mod 1 min): spread over one minute, no more.

use rand::{Rng, RngExt};

use crate::policy::uniform_below;
use crate::time::{SimDuration, SimTime};

/// The grids sd-event tries, coarsest first.
const GRIDS: [SimDuration; 4] =
    [SimDuration::from_secs(60), SimDuration::from_secs(10), SimDuration::from_secs(1), SimDuration::from_millis(250)];

/// A job every `period` on each host's clock, from `first_at`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PeriodicTimer {
    /// P (> 0).
    pub period: SimDuration,
    /// The first boundary on the hosts' clocks; then every P.
    pub first_at: SimDuration,
    /// A: the accuracy window (0: cron, exactly at the boundary).
    pub accuracy: SimDuration,
    /// R: a fresh U[0, R) delay at every run.
    pub randomized_delay: SimDuration,
}

impl PeriodicTimer {
    /// A host's perturbation p, U[0, 1 min) in whole µs as systemd keeps it.
    pub(crate) fn host_perturbation<R: Rng + ?Sized>(rng: &mut R) -> SimDuration {
        SimDuration::from_micros(rng.random_range(0..60_000_000))
    }

    /// The true time of run `k` (0, 1, …) on a host whose clock is `skew_nanos` ahead, with perturbation
    /// `perturbation`; a run whose time falls before the start runs at the start.
    pub(crate) fn run_at<R: Rng + ?Sized>(
        &self,
        k: u64,
        skew_nanos: i64,
        perturbation: SimDuration,
        rng: &mut R,
    ) -> SimTime {
        let boundary = self.first_at.as_nanos() + self.period.as_nanos().saturating_mul(k);
        let delay =
            if self.randomized_delay.is_zero() { SimDuration::ZERO } else { uniform_below(self.randomized_delay, rng) };
        let local = SimTime::from_nanos(boundary) + delay;
        let local = self.place(local, perturbation);
        SimTime::from_nanos(u64::try_from(i128::from(local.as_nanos()) - i128::from(skew_nanos)).unwrap_or(0))
    }

    /// sd-event's choice within [earliest, earliest + A] on the host's clock: on each grid g in turn, c =
    /// ⌊latest/g⌋·g + (p mod g), one g earlier if c ≥ latest; the first c ≥ earliest wins, else `latest`.
    pub(crate) fn place(&self, earliest: SimTime, perturbation: SimDuration) -> SimTime {
        if self.accuracy <= SimDuration::from_micros(1) {
            return earliest;
        }
        let (a, b) = (earliest.as_nanos(), (earliest + self.accuracy).as_nanos());
        for grid in GRIDS {
            let g = grid.as_nanos();
            let mut c = b / g * g + perturbation.as_nanos() % g;
            if c >= b {
                if c < g {
                    return SimTime::from_nanos(b);
                }
                c -= g;
            }
            if c >= a {
                return SimTime::from_nanos(c);
            }
        }
        SimTime::from_nanos(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::test_rng;

    fn timer(accuracy: SimDuration) -> PeriodicTimer {
        PeriodicTimer {
            period: SimDuration::from_secs(3600),
            first_at: SimDuration::from_secs(3600),
            accuracy,
            randomized_delay: SimDuration::ZERO,
        }
    }

    fn at(seconds: f64) -> SimTime {
        SimTime::from_nanos((seconds * 1e9).round() as u64)
    }

    #[test]
    fn sd_event_places_a_run_on_the_coarsest_grid_that_fits_its_window() {
        let p = SimDuration::from_millis(17_300);
        // AccuracySec=1min at the top of the hour: the minute grid shifted by p, 3617.3 s.
        assert_eq!(timer(SimDuration::from_secs(60)).place(at(3600.0), p), at(3617.3));
        // A window of 10 s misses the minute grid (3557.3 s, 3617.3 s) and takes the 10 s one shifted by p mod 10 s.
        assert_eq!(timer(SimDuration::from_secs(10)).place(at(3600.0), p), at(3607.3));
        // 500 ms: the 1 s grid shifted by 0.3 s.
        assert_eq!(timer(SimDuration::from_millis(500)).place(at(3600.0), p), at(3600.3));
        // 100 ms: the 250 ms grid shifted by p mod 250 ms = 50 ms.
        assert_eq!(timer(SimDuration::from_millis(100)).place(at(3600.0), p), at(3600.05));
        // 10 ms: nothing fits; the window's end.
        assert_eq!(timer(SimDuration::from_millis(10)).place(at(3600.0), p), at(3600.01));
        // 1 µs (and 0, cron): the boundary itself.
        assert_eq!(timer(SimDuration::from_micros(1)).place(at(3600.0), p), at(3600.0));
        assert_eq!(timer(SimDuration::ZERO).place(at(3600.0), p), at(3600.0));
    }

    #[test]
    fn runs_come_every_period_at_the_same_place_on_a_skewed_clock() {
        let minute = timer(SimDuration::from_secs(60));
        let mut rng = test_rng(1);
        let p = SimDuration::from_secs(42);
        // A clock 2 s ahead reaches 3642 s two seconds early.
        assert_eq!(minute.run_at(0, 2_000_000_000, p, &mut rng), at(3640.0));
        assert_eq!(minute.run_at(1, 2_000_000_000, p, &mut rng), at(7240.0));
        // A fresh randomized delay moves each run within [boundary, boundary + R) before the window.
        let delayed = PeriodicTimer { randomized_delay: SimDuration::from_secs(600), ..timer(SimDuration::ZERO) };
        for k in 0..100 {
            let run = delayed.run_at(k, 0, p, &mut rng);
            let boundary = at(3600.0 * (k + 1) as f64);
            assert!(run >= boundary && run < boundary + SimDuration::from_secs(600), "{run}");
        }
    }
}
