use super::{Outcome, Permit, RetryLimiter};
use crate::engine::{SimDuration, SimTime};

/// A breaker's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerState {
    /// Retries allowed.
    Closed,
    /// Retries refused until the given time.
    Open { until: SimTime },
    /// One probe retry allowed; its result closes or reopens the breaker.
    HalfOpen { probing: bool },
}

/// A retry circuit breaker: over the last `window` calls, if more than `threshold` of them failed, stop
/// retrying (open) for `open_for`; then let one retry through (half-open) and close on its success or reopen on
/// its failure. Brooker (2022) uses a 10% threshold.
#[derive(Clone, Debug, PartialEq)]
pub struct CircuitBreaker {
    threshold: f64,
    open_for: SimDuration,
    outcomes: Vec<bool>,
    next: usize,
    filled: usize,
    failures: usize,
    state: BreakerState,
}

impl CircuitBreaker {
    pub fn new(threshold: f64, window: usize, open_for: SimDuration) -> Self {
        CircuitBreaker {
            threshold,
            open_for,
            outcomes: vec![false; window.max(1)],
            next: 0,
            filled: 0,
            failures: 0,
            state: BreakerState::Closed,
        }
    }

    pub fn state(&self) -> BreakerState {
        self.state
    }

    fn failure_ratio(&self) -> f64 {
        if self.filled == 0 { 0.0 } else { self.failures as f64 / self.filled as f64 }
    }

    fn remember(&mut self, failed: bool) {
        if self.filled == self.outcomes.len() && self.outcomes[self.next] {
            self.failures -= 1;
        }
        self.outcomes[self.next] = failed;
        self.failures += usize::from(failed);
        self.next = (self.next + 1) % self.outcomes.len();
        self.filled = (self.filled + 1).min(self.outcomes.len());
    }
}

impl RetryLimiter for CircuitBreaker {
    fn acquire_retry(&mut self, now: SimTime, _: bool) -> Option<Permit> {
        if let BreakerState::Open { until } = self.state
            && now >= until
        {
            self.state = BreakerState::HalfOpen { probing: false };
        }
        match self.state {
            BreakerState::Closed => Some(Permit { cost: 0.0 }),
            BreakerState::HalfOpen { probing: false } => {
                self.state = BreakerState::HalfOpen { probing: true };
                Some(Permit { cost: 0.0 })
            }
            _ => None,
        }
    }

    fn record(&mut self, now: SimTime, outcome: Outcome) {
        self.remember(!outcome.succeeded);
        match self.state {
            BreakerState::HalfOpen { probing: true } if outcome.permit.is_some() => {
                self.state = if outcome.succeeded {
                    BreakerState::Closed
                } else {
                    BreakerState::Open { until: now + self.open_for }
                };
            }
            BreakerState::Closed if self.failure_ratio() > self.threshold => {
                self.state = BreakerState::Open { until: now + self.open_for };
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_above_the_threshold_probes_after_the_pause_and_closes_on_success() {
        let mut breaker = CircuitBreaker::new(0.1, 10, SimDuration::from_secs(1));
        let t0 = SimTime::ZERO;
        for _ in 0..9 {
            breaker.record(t0, Outcome::first_try(true));
        }
        breaker.record(t0, Outcome::first_try(false));
        assert_eq!(breaker.state(), BreakerState::Closed, "1 failure in 10 is not more than 10%");
        breaker.record(t0, Outcome::first_try(false));
        assert!(matches!(breaker.state(), BreakerState::Open { .. }), "2 in 10 is");
        assert_eq!(breaker.acquire_retry(t0 + SimDuration::from_millis(999), false), None);
        let later = t0 + SimDuration::from_secs(1);
        let probe = breaker.acquire_retry(later, false);
        assert!(probe.is_some());
        assert_eq!(breaker.acquire_retry(later, false), None, "one probe at a time");
        breaker.record(later, Outcome::success(probe));
        assert_eq!(breaker.state(), BreakerState::Closed);
    }

    #[test]
    fn a_failed_probe_reopens() {
        let mut breaker = CircuitBreaker::new(0.1, 4, SimDuration::from_secs(1));
        for _ in 0..4 {
            breaker.record(SimTime::ZERO, Outcome::first_try(false));
        }
        let later = SimTime::ZERO + SimDuration::from_secs(2);
        let probe = breaker.acquire_retry(later, false);
        breaker.record(later, Outcome::failure(probe));
        assert_eq!(breaker.state(), BreakerState::Open { until: later + SimDuration::from_secs(1) });
    }
}
