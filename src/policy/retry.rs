//! The retry decision: whether to try again after a failure, and after how long.

use rand::Rng;

use super::backoff::{BackoffMemory, BackoffParams, Strategy};
use super::classify::RetryAfterPolicy;
use crate::time::SimDuration;

/// A client's retry policy: a backoff strategy with its parameters, plus the limits that end the retrying.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    pub strategy: Strategy,
    pub backoff: BackoffParams,
    /// Total attempts allowed, the first try included (`None`: unlimited).
    pub max_attempts: Option<u32>,
    /// Give up rather than sleep past this much time since the operation began (`None`: no deadline).
    pub deadline: Option<SimDuration>,
    /// What to do with a server's Retry-After hint.
    pub retry_after: RetryAfterPolicy,
    /// The base after a throttling failure, for clients that back off longer when throttled (botocore and the AWS
    /// SDK for JavaScript); `None`: the base, whatever the failure.
    pub throttling_base: Option<SimDuration>,
}

/// What kind of failure a client is about to retry, for policies whose sleep depends on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// A timeout, a reset, a 5xx: anything but throttling.
    Transient,
    /// The server said to slow down (429).
    Throttling,
}

/// What a client does after a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryDecision {
    /// Sleep this long, then try again.
    RetryAfter(SimDuration),
    /// Stop; the operation has failed.
    GiveUp(GiveUpReason),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveUpReason {
    /// `max_attempts` attempts have been made.
    AttemptsExhausted,
    /// The sleep would end after the deadline.
    DeadlineExceeded,
    /// The failure is not one the client retries (a timeout left out of `retry_on`).
    NotRetried,
}

impl RetryPolicy {
    /// Decides after `failed_attempts` attempts have failed (`≥ 1`; it is the `n` of the backoff formulas),
    /// `elapsed` after the operation began, given the kind of the last failure and the server's Retry-After `hint`
    /// if it sent one.
    #[inline]
    pub fn after_failure<R: Rng + ?Sized>(
        &self,
        failed_attempts: u32,
        elapsed: SimDuration,
        (kind, hint): (FailureKind, Option<SimDuration>),
        memory: &mut BackoffMemory,
        rng: &mut R,
    ) -> RetryDecision {
        if self.max_attempts.is_some_and(|max| failed_attempts >= max) {
            return RetryDecision::GiveUp(GiveUpReason::AttemptsExhausted);
        }
        let computed = self.sleep_before(failed_attempts, kind, memory, rng);
        let sleep = self.retry_after.sleep(computed, hint, self.backoff.cap);
        match self.deadline {
            Some(deadline) if elapsed + sleep >= deadline => RetryDecision::GiveUp(GiveUpReason::DeadlineExceeded),
            _ => RetryDecision::RetryAfter(sleep),
        }
    }
}

impl std::fmt::Display for RetryPolicy {
    /// `full-jitter-from-base b=50ms (1s after throttling) c=20s m=2, 3 attempts, Retry-After aws-bounded`, with
    /// f, j, q, k, and the deadline only where they are set.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = &self.backoff;
        write!(f, "{} b={}", self.strategy, b.base)?;
        if let Some(base) = self.throttling_base {
            write!(f, " ({base} after throttling)")?;
        }
        write!(f, " c={} m={}", b.cap, b.multiplier)?;
        if !b.floor.is_zero() {
            write!(f, " f={}", b.floor)?;
        }
        if !b.jitter.is_zero() {
            write!(f, " j={}", b.jitter)?;
        }
        if b.jitter_fraction > 0.0 {
            write!(f, " q={}", b.jitter_fraction)?;
        }
        if b.steps > 0 {
            write!(f, " k={}", b.steps)?;
        }
        match self.max_attempts {
            Some(n) => write!(f, ", {n} attempts")?,
            None => f.write_str(", unlimited attempts")?,
        }
        if let Some(deadline) = self.deadline {
            write!(f, ", deadline {deadline}")?;
        }
        write!(f, ", Retry-After {}", self.retry_after)
    }
}

impl RetryPolicy {
    /// The backoff before retry `n` after a failure of `kind`, before any Retry-After hint and limit: the
    /// formula with the throttling base in place of the base after throttling, where the policy has one.
    #[inline]
    pub fn sleep_before<R: Rng + ?Sized>(
        &self,
        n: u32,
        kind: FailureKind,
        memory: &mut BackoffMemory,
        rng: &mut R,
    ) -> SimDuration {
        match (kind, self.throttling_base) {
            (FailureKind::Throttling, Some(base)) => {
                self.strategy.delay(&BackoffParams { base, ..self.backoff }, n, memory, rng)
            }
            _ => self.strategy.delay(&self.backoff, n, memory, rng),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::test_rng;

    fn policy(max_attempts: Option<u32>, deadline: Option<SimDuration>) -> RetryPolicy {
        RetryPolicy {
            strategy: Strategy::Exponential,
            backoff: BackoffParams::AWS_2015,
            max_attempts,
            deadline,
            retry_after: RetryAfterPolicy::Honour,
            throttling_base: None,
        }
    }

    #[test]
    fn max_attempts_counts_the_first_try() {
        let mut rng = test_rng(0);
        let mut memory = BackoffMemory::default();
        let three = policy(Some(3), None);
        let decide = |n, memory: &mut BackoffMemory, rng: &mut _| {
            three.after_failure(n, SimDuration::ZERO, (FailureKind::Transient, None), memory, rng)
        };
        assert_eq!(decide(1, &mut memory, &mut rng), RetryDecision::RetryAfter(SimDuration::from_millis(10)));
        assert_eq!(decide(2, &mut memory, &mut rng), RetryDecision::RetryAfter(SimDuration::from_millis(20)));
        assert_eq!(decide(3, &mut memory, &mut rng), RetryDecision::GiveUp(GiveUpReason::AttemptsExhausted));
    }

    #[test]
    fn deadline_stops_a_sleep_that_would_overrun_it() {
        let mut rng = test_rng(0);
        let mut memory = BackoffMemory::default();
        let p = policy(None, Some(SimDuration::from_millis(100)));
        let at = |ms| SimDuration::from_millis(ms);
        assert_eq!(
            p.after_failure(1, at(89), (FailureKind::Transient, None), &mut memory, &mut rng),
            RetryDecision::RetryAfter(at(10))
        );
        assert_eq!(
            p.after_failure(1, at(90), (FailureKind::Transient, None), &mut memory, &mut rng),
            RetryDecision::GiveUp(GiveUpReason::DeadlineExceeded)
        );
    }

    #[test]
    fn an_honoured_hint_replaces_the_backoff_and_counts_against_the_deadline() {
        let mut rng = test_rng(0);
        let mut memory = BackoffMemory::default();
        let p = policy(None, Some(SimDuration::from_secs(10)));
        let hint = Some(SimDuration::from_secs(3));
        let decision = p.after_failure(1, SimDuration::ZERO, (FailureKind::Transient, hint), &mut memory, &mut rng);
        assert_eq!(decision, RetryDecision::RetryAfter(SimDuration::from_secs(3)));
        let late = p.after_failure(1, SimDuration::from_secs(8), (FailureKind::Transient, hint), &mut memory, &mut rng);
        assert_eq!(late, RetryDecision::GiveUp(GiveUpReason::DeadlineExceeded));
    }
}
