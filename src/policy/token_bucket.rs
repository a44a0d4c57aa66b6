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
    /// The time promised to the last refused request, if any request has been refused.
    last_promise: Option<SimTime>,
}

impl TokenBucket {
    /// A full bucket. `rate_per_second` must be positive and `capacity` at least 1 (validated by callers).
    pub fn new(rate_per_second: f64, capacity: f64) -> Self {
        TokenBucket {
            rate_per_nano: rate_per_second / 1e9,
            capacity,
            tokens: capacity,
            updated: SimTime::ZERO,
            last_promise: None,
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
        // A promise falling due at this very instant is still owed, so only one strictly in the past is free.
        let promise = match self.last_promise {
            Some(promised) if promised >= now => next_token.max(promised + interval),
            _ => next_token,
        };
        self.last_promise = Some(promise);
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

    /// Asserts a hint to the nanosecond, allowing one for the ceiling of a float that lands a hair above.
    fn assert_hint(hint: Result<(), SimDuration>, millis: u64, what: &str) {
        let nanos = hint.expect_err(what).as_nanos();
        let expected = SimDuration::from_millis(millis).as_nanos();
        assert!(nanos.abs_diff(expected) <= 1, "{what}: hinted {nanos} ns, expected {expected} ns");
    }

    fn ms(millis: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(millis)
    }

    #[test]
    fn a_partial_token_shortens_the_first_hint() {
        let mut bucket = TokenBucket::new(10.0, 1.0);
        assert!(bucket.try_take(ms(0)).is_ok());
        // 30 ms later 0.3 of a token has come back: the next whole one is 70 ms away, not a full interval.
        assert_hint(bucket.try_take(ms(30)), 70, "refused with 0.3 tokens");
        // The next refusal at the same instant is promised one interval after that (t = 200 ms).
        assert_hint(bucket.try_take(ms(30)), 170, "second refusal");
        // Time passes before the promises fall due: the token is 40 ms away (t = 100 ms), but the slots at 100 ms
        // and 200 ms are promised, so this caller gets 300 ms.
        assert_hint(bucket.try_take(ms(60)), 240, "refused while promises are pending");
    }

    #[test]
    fn a_promise_that_has_fallen_due_no_longer_spaces_the_hints() {
        let mut bucket = TokenBucket::new(10.0, 1.0);
        assert!(bucket.try_take(ms(0)).is_ok());
        assert_hint(bucket.try_take(ms(0)), 100, "first refusal");
        assert_hint(bucket.try_take(ms(0)), 200, "second refusal");
        // Nobody came back; at 150 ms the bucket is full again (1.5 tokens capped at 1) and admits one.
        assert!(bucket.try_take(ms(150)).is_ok());
        // At 200 ms the last promise falls due this very instant: it is still owed, so the hint goes past it.
        assert_hint(bucket.try_take(ms(200)), 100, "refused at the instant of the last promise");
    }

    #[test]
    fn once_every_promise_is_past_the_hint_is_the_next_token() {
        let mut bucket = TokenBucket::new(10.0, 1.0);
        assert!(bucket.try_take(ms(0)).is_ok());
        assert_hint(bucket.try_take(ms(0)), 100, "first refusal");
        assert_hint(bucket.try_take(ms(0)), 200, "second refusal");
        assert!(bucket.try_take(ms(150)).is_ok());
        // The last promise (200 ms) is 5 ms past: 0.55 of a token has come back since 150 ms, so the next is 45 ms
        // away, sooner than one interval after that promise (300 ms).
        assert_hint(bucket.try_take(ms(205)), 45, "refused after the promises");
    }

    #[test]
    fn an_admitted_request_takes_exactly_one_token() {
        let mut bucket = TokenBucket::new(1.0, 2.5);
        assert!(bucket.try_take(ms(0)).is_ok());
        assert!(bucket.try_take(ms(0)).is_ok());
        // Half a token is left and nobody has been promised a time yet (a fresh bucket owes no promise at t = 0):
        // the next whole token is 500 ms away at one token per second.
        assert_hint(bucket.try_take(ms(0)), 500, "refused with half a token");
    }
}
