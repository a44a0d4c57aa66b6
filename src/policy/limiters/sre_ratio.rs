use super::window::SecondWindow;
use super::{Failed, Outcome, Permit, RetryLimiter, ShippedLimiter};
use crate::params::{ParamError, Point};
use crate::time::{SimDuration, SimTime};

/// The per-client retry budget of Google's SRE book ("Handling Overload"): a request is retried only while
/// `retries / requests < ratio` (10%) over the recent window. The book does not say how long the window is; we
/// use 2 minutes, the window of its adaptive throttling.
///
/// Conventions: `requests` counts every attempt, first tries and retries; a granted retry is counted at once (it
/// will be sent), so a burst of failures cannot all be granted before any of their retries leaves. First tries
/// are counted by [`RetryLimiter::on_send`].
#[derive(Clone, Debug, PartialEq)]
pub struct SreRetryRatio {
    ratio: f64,
    /// (requests, retries) per second.
    window: SecondWindow,
}

impl SreRetryRatio {
    /// The book's 10%, over 2 minutes.
    pub fn sre_book() -> Self {
        Self::new(0.1, SimDuration::from_secs(120))
    }

    pub fn new(ratio: f64, window: SimDuration) -> Self {
        SreRetryRatio { ratio, window: SecondWindow::new(window) }
    }

    /// `(requests, retries)` over the window ending at `now`.
    pub fn counts(&mut self, now: SimTime) -> (f64, f64) {
        self.window.totals(now)
    }
}

impl RetryLimiter for SreRetryRatio {
    fn acquire_retry(&mut self, now: SimTime, _: Failed) -> Option<Permit> {
        let (requests, retries) = self.window.totals(now);
        (retries < self.ratio * requests).then(|| {
            self.window.add(now, 1.0, 1.0);
            Permit::costing(1.0)
        })
    }

    fn release(&mut self, now: SimTime, _: Permit) {
        self.window.add(now, -1.0, -1.0);
    }

    fn record(&mut self, _: SimTime, _: Outcome) {}

    fn on_send(&mut self, now: SimTime, is_retry: bool) {
        if !is_retry {
            self.window.add(now, 1.0, 0.0);
        }
    }
}

/// `limiter = "sre-ratio"`.
pub struct SreRatio;

impl ShippedLimiter for SreRatio {
    type State = SreRetryRatio;
    const NAME: &'static str = "sre-ratio";
    const ABOUT: &'static str = "Google SRE per-client retry budget: a request is retried only while retries < 10% of requests (2 min)";
    const SOURCE: &'static str = "Beyer et al., Site Reliability Engineering (2016), \"Handling Overload\"";

    fn build(_: &Point) -> Result<SreRetryRatio, ParamError> {
        Ok(SreRetryRatio::sre_book())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_stop_once_they_reach_ten_percent_of_requests() {
        let mut limiter = SreRetryRatio::sre_book();
        let t = SimTime::ZERO;
        for _ in 0..100 {
            limiter.on_send(t, false);
        }
        let mut granted = 0;
        while limiter.acquire_retry(t, Failed::Error).is_some() {
            limiter.on_send(t, true);
            granted += 1;
            assert!(granted < 1_000);
        }
        // Granted while r / (100 + r) < 0.1, i.e. for r = 0..=11: 12 retries, and 12/112 = 10.7% stops it.
        assert_eq!(granted, 12);
        let (requests, retries) = limiter.counts(t);
        assert_eq!((requests, retries), (112.0, 12.0));
        // Ten more first tries lower the ratio to 12/122 < 10%: one more retry.
        for _ in 0..10 {
            limiter.on_send(t, false);
        }
        assert!(limiter.acquire_retry(t, Failed::Error).is_some());
        assert!(limiter.acquire_retry(t, Failed::Error).is_none());
    }

    #[test]
    fn the_history_expires_after_two_minutes() {
        let mut limiter = SreRetryRatio::sre_book();
        for _ in 0..10 {
            limiter.on_send(SimTime::ZERO, false);
        }
        // (10, 0): 0 < 1 grants; (11, 1): 1 < 1.1 grants; (12, 2): 2 < 1.2 does not.
        assert!(limiter.acquire_retry(SimTime::ZERO, Failed::Error).is_some());
        assert!(limiter.acquire_retry(SimTime::ZERO, Failed::Error).is_some());
        assert!(limiter.acquire_retry(SimTime::ZERO, Failed::Error).is_none());
        let later = SimTime::ZERO + SimDuration::from_secs(121);
        assert_eq!(limiter.counts(later), (0.0, 0.0));
        assert!(limiter.acquire_retry(later, Failed::Error).is_none(), "no requests, no retries");
    }
}
