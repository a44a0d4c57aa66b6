//! Two counters over a sliding window of whole seconds, for limiters that keep "the last N seconds" of history.

use crate::time::{SimDuration, SimTime};

/// Counts two kinds of events per second of simulated time and sums them over the last `window` seconds (the
/// current, partial second included). Seconds older than the window are forgotten as time moves on.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SecondWindow {
    /// Ring indexed by second: (first counter, second counter).
    seconds: Vec<(f64, f64)>,
    current_second: u64,
}

impl SecondWindow {
    /// Bytes it holds on the heap: its ring of seconds (for the plan's memory estimate).
    pub(super) fn heap_bytes(&self) -> usize {
        self.seconds.capacity() * size_of::<(f64, f64)>()
    }

    pub(crate) fn new(window: SimDuration) -> Self {
        let seconds = (window.as_secs_f64().ceil() as usize).max(1);
        SecondWindow { seconds: vec![(0.0, 0.0); seconds], current_second: 0 }
    }

    /// Moves the window to `now`, clearing the seconds that fell out of it.
    fn advance(&mut self, now: SimTime) {
        let second = now.as_nanos() / 1_000_000_000;
        let len = self.seconds.len() as u64;
        let stale = second.saturating_sub(self.current_second).min(len);
        for offset in 1..=stale {
            let index = ((self.current_second + offset) % len) as usize;
            self.seconds[index] = (0.0, 0.0);
        }
        self.current_second = self.current_second.max(second);
    }

    /// Adds to the counters of the second `now` falls in.
    pub(crate) fn add(&mut self, now: SimTime, first: f64, second: f64) {
        self.advance(now);
        let index = (self.current_second % self.seconds.len() as u64) as usize;
        self.seconds[index].0 += first;
        self.seconds[index].1 += second;
    }

    /// Both sums over the window ending at `now`.
    pub(crate) fn totals(&mut self, now: SimTime) -> (f64, f64) {
        self.advance(now);
        self.seconds.iter().fold((0.0, 0.0), |(a, b), s| (a + s.0, b + s.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_the_last_window_seconds_and_forgets_older_ones() {
        let mut w = SecondWindow::new(SimDuration::from_secs(3));
        let at = |s: u64| SimTime::ZERO + SimDuration::from_millis(s);
        w.add(at(0), 1.0, 0.0);
        w.add(at(1_500), 2.0, 1.0);
        w.add(at(2_999), 4.0, 0.0);
        assert_eq!(w.totals(at(2_999)), (7.0, 1.0));
        assert_eq!(w.totals(at(3_000)), (6.0, 1.0), "second 0 left the window");
        assert_eq!(w.totals(at(5_000)), (0.0, 0.0));
    }
}
