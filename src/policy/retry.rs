//! The retry decision: whether to try again after a failure, and after how long.

use rand::Rng;

use super::backoff::{BackoffMemory, BackoffParams, Strategy};
use super::classify::{PushbackPolicy, RetryAfterPolicy};
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
    /// What to do with a gRPC server's pushback.
    pub pushback: PushbackPolicy,
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

/// A gRPC server's pushback (the `grpc-retry-pushback-ms` trailer, gRFC A6), as its client reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pushback {
    /// Retry after exactly this long.
    Wait(SimDuration),
    /// A negative or unreadable value: do not retry.
    Stop,
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
    /// The server's pushback said not to retry.
    PushedBack,
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
        failure: (FailureKind, Option<SimDuration>),
        memory: &mut BackoffMemory,
        rng: &mut R,
    ) -> RetryDecision {
        self.after_failure_since(failed_attempts, failed_attempts, elapsed, failure, memory, rng)
    }

    /// As [`Self::after_failure`], for a client whose backoff restarted after `failed_attempts − since_restart`
    /// failures (an honoured gRPC pushback restarts it, gRFC A6): the backoff formula's `n` is `since_restart`,
    /// while `max_attempts` still counts every attempt.
    #[inline]
    pub fn after_failure_since<R: Rng + ?Sized>(
        &self,
        failed_attempts: u32,
        since_restart: u32,
        elapsed: SimDuration,
        (kind, hint): (FailureKind, Option<SimDuration>),
        memory: &mut BackoffMemory,
        rng: &mut R,
    ) -> RetryDecision {
        if self.max_attempts.is_some_and(|max| failed_attempts >= max) {
            return RetryDecision::GiveUp(GiveUpReason::AttemptsExhausted);
        }
        let computed = self.sleep_before(since_restart, kind, memory, rng);
        self.within_deadline(elapsed, self.retry_after.sleep(computed, hint, self.backoff.cap))
    }

    /// After a failure whose answer carried a gRPC pushback, for a policy that honours it (gRFC A6): retry after
    /// exactly the pushback's wait, within `max_attempts` and the deadline, or give up when it says stop. The
    /// caller restarts the backoff's `n` from there.
    pub fn after_pushback(&self, failed_attempts: u32, elapsed: SimDuration, pushback: Pushback) -> RetryDecision {
        if self.max_attempts.is_some_and(|max| failed_attempts >= max) {
            return RetryDecision::GiveUp(GiveUpReason::AttemptsExhausted);
        }
        match pushback {
            Pushback::Wait(wait) => self.within_deadline(elapsed, wait),
            Pushback::Stop => RetryDecision::GiveUp(GiveUpReason::PushedBack),
        }
    }

    fn within_deadline(&self, elapsed: SimDuration, sleep: SimDuration) -> RetryDecision {
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
        write!(f, ", Retry-After {}", self.retry_after)?;
        if self.pushback == PushbackPolicy::Honour {
            f.write_str(", gRPC pushback honoured")?;
        }
        Ok(())
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
            pushback: PushbackPolicy::Ignore,
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

    #[test]
    fn a_pushback_is_waited_exactly_within_the_attempts_and_the_deadline_and_a_refusal_ends_the_call() {
        let p = RetryPolicy { max_attempts: Some(3), ..policy(None, Some(SimDuration::from_secs(10))) };
        let wait = Pushback::Wait(SimDuration::from_millis(1_234));
        assert_eq!(
            p.after_pushback(1, SimDuration::ZERO, wait),
            RetryDecision::RetryAfter(SimDuration::from_millis(1_234))
        );
        assert_eq!(
            p.after_pushback(2, SimDuration::ZERO, Pushback::Stop),
            RetryDecision::GiveUp(GiveUpReason::PushedBack)
        );
        assert_eq!(
            p.after_pushback(3, SimDuration::ZERO, wait),
            RetryDecision::GiveUp(GiveUpReason::AttemptsExhausted)
        );
        let late = p.after_pushback(1, SimDuration::from_millis(8_766), wait);
        assert_eq!(late, RetryDecision::GiveUp(GiveUpReason::DeadlineExceeded));
    }

    #[test]
    fn a_restarted_backoff_draws_from_its_base_while_the_attempts_keep_counting() {
        let (mut rng, mut memory) = (test_rng(0), BackoffMemory::default());
        let p = policy(Some(5), None);
        let failure = (FailureKind::Transient, None);
        // Exponential from 10 ms doubling: the 4th failure's sleep is 80 ms, but 10 ms one failure after a restart.
        let fourth = p.after_failure_since(4, 4, SimDuration::ZERO, failure, &mut memory, &mut rng);
        assert_eq!(fourth, RetryDecision::RetryAfter(SimDuration::from_millis(80)));
        let restarted = p.after_failure_since(4, 1, SimDuration::ZERO, failure, &mut memory, &mut rng);
        assert_eq!(restarted, RetryDecision::RetryAfter(SimDuration::from_millis(10)));
        let done = p.after_failure_since(5, 1, SimDuration::ZERO, failure, &mut memory, &mut rng);
        assert_eq!(done, RetryDecision::GiveUp(GiveUpReason::AttemptsExhausted));
    }
}
