//! A token bucket: `rate` tokens per second refill it up to `capacity`; each admitted request takes one.
//!
//! A refused request is told when to come back, and no two refused requests are told the same time: each hint
//! is one token interval (1/rate) after the previous one, starting when the next token is due. Clients that
//! honour their hints therefore return spread out at the rate the bucket can admit, instead of all at once.

use crate::time::{SimDuration, SimTime};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TokenBucket {
    rate_per_nano: f64,
    capacity: f64,
    tokens: f64,
    updated: SimTime,
    /// The time promised to the last refused request.
    last_promise: SimTime,
}

impl TokenBucket {
    /// A full bucket. `rate_per_second` must be positive and `capacity` at least 1 (validated by callers).
    pub fn new(rate_per_second: f64, capacity: f64) -> Self {
        TokenBucket {
            rate_per_nano: rate_per_second / 1e9,
            capacity,
            tokens: capacity,
            updated: SimTime::ZERO,
            last_promise: SimTime::ZERO,
        }
    }

    fn refill(&mut self, now: SimTime) {
        let elapsed = (now - self.updated).as_nanos_f64();
        self.tokens = (self.tokens + elapsed * self.rate_per_nano).min(self.capacity);
        self.updated = now;
    }

    /// Takes a token if there is one; otherwise returns when to come back (a Retry-After hint): the later of
    /// the next token's arrival and one token interval after the previous hint.
    pub fn try_take(&mut self, now: SimTime) -> Result<(), SimDuration> {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Ok(());
        }
        let next_token = now + SimDuration::from_nanos_f64(((1.0 - self.tokens) / self.rate_per_nano).ceil());
        let interval = SimDuration::from_nanos_f64((1.0 / self.rate_per_nano).ceil());
        let promise = if self.last_promise < now { next_token } else { next_token.max(self.last_promise + interval) };
        self.last_promise = promise;
        Err(promise - now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_the_burst_then_the_rate() {
        let mut bucket = TokenBucket::new(10.0, 3.0);
        let t0 = SimTime::ZERO;
        assert!((0..3).all(|_| bucket.try_take(t0).is_ok()));
        let wait = bucket.try_take(t0).unwrap_err();
        assert_eq!(wait, SimDuration::from_millis(100), "one token every 100 ms");
        // Later refusals are promised later times, one token interval apart.
        assert_eq!(bucket.try_take(t0).unwrap_err(), SimDuration::from_millis(200));
        assert_eq!(bucket.try_take(t0).unwrap_err(), SimDuration::from_millis(300));
        assert!(bucket.try_take(t0 + SimDuration::from_millis(99)).is_err());
        assert!(bucket.try_take(t0 + SimDuration::from_millis(200)).is_ok());
        // A long pause refills only up to the capacity.
        let later = t0 + SimDuration::from_secs(60);
        assert_eq!((0..10).filter(|_| bucket.try_take(later).is_ok()).count(), 3);
    }
}
