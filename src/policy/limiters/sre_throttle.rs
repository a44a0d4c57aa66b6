use super::window::SecondWindow;
use super::{Failed, Admission, Outcome, Permit, RetryLimiter, ShippedLimiter};
use crate::params::{ParamError, Point};
use crate::time::{SimDuration, SimTime};

/// Client-side adaptive throttling from Google's SRE book ("Handling Overload"): over the last 2 minutes the
/// client counts `requests` (attempts it wanted to send) and `accepts` (attempts the backend accepted), and
/// rejects each new attempt locally with probability `max(0, (requests − K·accepts) / (requests + 1))`, K = 2.
///
/// Conventions: every attempt, first try or retry, passes through [`RetryLimiter::admit`], which computes the
/// probability from the counts so far, then counts the attempt as a request (rejected ones too, as the book
/// says). An attempt is accepted when its recorded outcome is neither throttled (429) nor a timeout; an answered
/// error counts as accepted because the backend took the request in. Retries themselves are not limited here.
#[derive(Clone, Debug, PartialEq)]
pub struct SreAdaptiveThrottle {
    k: f64,
    /// (requests, accepts) per second.
    window: SecondWindow,
}

impl SreAdaptiveThrottle {
    /// The book's K = 2 over 2 minutes.
    pub fn sre_book() -> Self {
        Self::new(2.0, SimDuration::from_secs(120))
    }

    pub fn new(k: f64, window: SimDuration) -> Self {
        SreAdaptiveThrottle { k, window: SecondWindow::new(window) }
    }

    /// The chance that an attempt made at `now` is rejected locally.
    pub fn reject_probability(&mut self, now: SimTime) -> f64 {
        let (requests, accepts) = self.window.totals(now);
        ((requests - self.k * accepts) / (requests + 1.0)).max(0.0)
    }
}

impl RetryLimiter for SreAdaptiveThrottle {
    fn acquire_retry(&mut self, _: SimTime, _: Failed) -> Option<Permit> {
        Some(Permit::costing(0.0))
    }

    fn record(&mut self, now: SimTime, outcome: Outcome) {
        if !outcome.throttled && !outcome.timed_out {
            self.window.add(now, 0.0, 1.0);
        }
    }

    fn admit(&mut self, now: SimTime, draw: f64) -> Admission {
        let reject = draw < self.reject_probability(now);
        self.window.add(now, 1.0, 0.0);
        if reject { Admission::Reject } else { Admission::Send }
    }
}

/// `limiter = "sre-throttle"`.
pub struct SreThrottle;

impl ShippedLimiter for SreThrottle {
    type State = SreAdaptiveThrottle;
    const NAME: &'static str = "sre-throttle";
    const ABOUT: &'static str = "Google SRE client-side adaptive throttling: rejects an attempt locally with probability \
                                 max(0, (requests − 2·accepts)/(requests + 1)) over 2 min";
    const SOURCE: &'static str = "Beyer et al., Site Reliability Engineering (2016), \"Handling Overload\" (K = 2)";

    fn build(_: &Point) -> Result<SreAdaptiveThrottle, ParamError> {
        Ok(SreAdaptiveThrottle::sre_book())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::test_rng;
    use rand::RngExt;

    #[test]
    fn the_reject_probability_follows_the_formula_at_known_counts() {
        let mut throttle = SreAdaptiveThrottle::sre_book();
        let t = SimTime::ZERO;
        assert_eq!(throttle.reject_probability(t), 0.0);
        // 100 requests, 30 accepted: (100 − 60) / 101.
        for i in 0..100 {
            assert_eq!(throttle.admit(t, 0.999_999), Admission::Send);
            if i < 30 {
                throttle.record(t, Outcome::first_try(i % 2 == 0));
            } else {
                throttle.record(t, Outcome::throttled(None));
            }
        }
        assert_eq!(throttle.reject_probability(t), 40.0 / 101.0);
        // 50 accepted of 100: requests ≤ 2·accepts, nothing is rejected.
        for _ in 0..20 {
            throttle.record(t, Outcome::success(None));
        }
        assert_eq!(throttle.reject_probability(t), 0.0);
        // Timeouts are not accepts either.
        throttle.record(t, Outcome::timeout(None));
        assert_eq!(throttle.reject_probability(t), 0.0);
        // Two minutes later the history is gone.
        assert_eq!(throttle.reject_probability(t + SimDuration::from_secs(120)), 0.0);
    }

    #[test]
    fn the_empirical_reject_rate_matches_the_probability_within_its_confidence_interval() {
        // With the backend accepting nothing, after 1,000 requests p = 1000/1001, and it keeps rising as rejected
        // attempts count as requests. Fix the counts instead: a fresh limiter per draw, primed to 1,000 requests
        // and 300 accepts, p = 400/1001.
        let mut primed = SreAdaptiveThrottle::sre_book();
        let t = SimTime::ZERO;
        for i in 0..1_000 {
            primed.admit(t, 1.0);
            if i < 300 {
                primed.record(t, Outcome::success(None));
            }
        }
        let p = primed.reject_probability(t);
        assert_eq!(p, 400.0 / 1001.0);
        let mut rng = test_rng(42);
        let trials = 20_000;
        let rejected =
            (0..trials).filter(|_| primed.clone().admit(t, rng.random::<f64>()) == Admission::Reject).count();
        let rate = rejected as f64 / trials as f64;
        // 99.9% interval of a binomial proportion: z = 3.29, sd = √(p(1 − p)/n) ≈ 0.0035.
        let half_width = 3.29 * (p * (1.0 - p) / trials as f64).sqrt();
        assert!((rate - p).abs() <= half_width, "rate {rate}, p {p} ± {half_width}");
    }
}
