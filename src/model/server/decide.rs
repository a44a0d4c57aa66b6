//! What a client of the server model does after a failed attempt: the one copy of that protocol, which the
//! simulation (run.rs) follows and which nothing in it ties to the event queue. In the limiter module's order: a
//! timeout left out of `retry_on` ends the request; otherwise the retry policy decides, the client's clock may
//! move the retry, the limiter grants a permit or refuses one, and the permit may lengthen the sleep.

use super::config::ServerConfig;
use crate::engine::SimRng;
use crate::policy::limiters::{Failed, Limiter, Permit, RetryLimiter};
use crate::policy::{BackoffMemory, FailureKind, GiveUpReason, Pushback, PushbackPolicy, Response, RetryDecision};
use crate::time::{SimDuration, SimTime};

/// The client's next step after a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Next {
    /// Send the next attempt after `sleep`, holding the limiter's `permit` if it keeps books; `restarted` when an
    /// honoured pushback set the sleep, so the backoff starts again from its base.
    Retry { sleep: SimDuration, permit: Option<Permit>, restarted: bool },
    /// Stop: the request has failed; `refused` when the limiter, not the policy, ended it.
    GiveUp { refused: bool },
}

/// A request's state after `failed_attempts` failures (the last included), `elapsed` since it began at `now`.
pub(crate) struct Failure {
    pub(crate) failed_attempts: u32,
    pub(crate) now: SimTime,
    pub(crate) elapsed: SimDuration,
    /// The last failure's kind and the server's Retry-After hint, if any.
    pub(crate) kind: (FailureKind, Option<SimDuration>),
    /// The server's gRPC pushback, if it sent one.
    pub(crate) pushback: Option<Pushback>,
    /// Failures since the backoff last started from its base (all of them, unless a pushback restarted it).
    pub(crate) since_restart: u32,
    pub(crate) timed_out: bool,
}

/// Decides the next step. `align` is the client's clock (identity without a clock policy); `memory` and `jitter`
/// are the request's backoff memory and the policy's jitter stream, drawn from exactly as before this was split out.
#[inline]
pub(crate) fn after_failure(
    config: &ServerConfig,
    failure: &Failure,
    memory: &mut BackoffMemory,
    jitter: &mut SimRng,
    align: impl FnOnce(RetryDecision) -> RetryDecision,
    limiter: Option<&mut Limiter>,
) -> Next {
    let retry = &config.retry;
    let pushback = failure.pushback.filter(|_| retry.pushback == PushbackPolicy::Honour);
    let decision = if failure.timed_out && !config.retry_on.timeout {
        RetryDecision::GiveUp(GiveUpReason::NotRetried)
    } else if let Some(pushback) = pushback {
        align(retry.after_pushback(failure.failed_attempts, failure.elapsed, pushback))
    } else {
        let (failed, since_restart) = (failure.failed_attempts, failure.since_restart);
        align(retry.after_failure_since(failed, since_restart, failure.elapsed, failure.kind, memory, jitter))
    };
    let RetryDecision::RetryAfter(sleep) = decision else { return Next::GiveUp { refused: false } };
    let restarted = pushback.is_some();
    let Some(limiter) = limiter else { return Next::Retry { sleep, permit: None, restarted } };
    match limiter.acquire_retry(failure.now, Failed::of(failure.timed_out, failure.kind.0 == FailureKind::Throttling)) {
        Some(permit) => Next::Retry { sleep: permit.sleep(failure.now, sleep), permit: Some(permit), restarted },
        None => Next::GiveUp { refused: true },
    }
}

/// Whether the clients retry a failed answer: a 503 (a full queue's, a fail-fast window's) is `rejected` as well
/// as a 503.
#[inline]
pub(crate) fn retried(config: &ServerConfig, response: Response) -> bool {
    (response.status == 503 && config.retry_on.rejected) || config.retry_on.retries(response)
}

/// The limiter of `client`'s instance (its client, or an open request's arrival number, modulo the instances);
/// `None` when the clients keep no limiter.
pub(crate) fn instance_limiter(limiters: &mut [Limiter], client: u32) -> Option<&mut Limiter> {
    let instance = (client as usize).checked_rem(limiters.len())?;
    limiters.get_mut(instance)
}

#[cfg(test)]
mod tests {
    use super::super::outcome::Outcome;
    use super::super::tests::config;
    use super::*;
    use crate::params::Value;

    fn failure(failed_attempts: u32, since_restart: u32, pushback: Option<Pushback>) -> Failure {
        let retry_after = Some(SimDuration::from_millis(700));
        Failure {
            failed_attempts,
            now: SimTime::ZERO,
            elapsed: SimDuration::ZERO,
            kind: (FailureKind::Transient, retry_after),
            pushback,
            since_restart,
            timed_out: false,
        }
    }

    #[test]
    fn an_honoured_pushback_sets_the_sleep_and_restarts_the_backoff_and_is_ignored_otherwise() {
        let ms = |n| SimDuration::from_millis(n);
        let decide = |pushback: &'static str, failure: &Failure| {
            let config = config(&[
                ("strategy", Value::Choice("exponential")),
                ("base", Value::Duration(ms(10))),
                ("retry_after", Value::Choice("ignore")),
                ("pushback", Value::Choice(pushback)),
                ("max_attempts", Value::Count(5)),
            ]);
            let mut jitter = crate::engine::sim_rng(1);
            after_failure(&config, failure, &mut BackoffMemory::default(), &mut jitter, |decision| decision, None)
        };
        let pushed = failure(3, 3, Some(Pushback::Wait(ms(250))));
        assert_eq!(decide("honour", &pushed), Next::Retry { sleep: ms(250), permit: None, restarted: true });
        // Ignored: the backoff of the third failure (10 ms · 2³), and the Retry-After is ignored too.
        assert_eq!(decide("ignore", &pushed), Next::Retry { sleep: ms(80), permit: None, restarted: false });
        // One failure after a restart draws the first retry's backoff, while the attempts keep counting.
        assert_eq!(decide("honour", &failure(4, 1, None)), Next::Retry { sleep: ms(20), permit: None, restarted: false });
        assert_eq!(decide("honour", &failure(5, 2, None)), Next::GiveUp { refused: false });
        assert_eq!(decide("honour", &failure(2, 2, Some(Pushback::Stop))), Next::GiveUp { refused: false });
        assert!(matches!(decide("ignore", &failure(2, 2, Some(Pushback::Stop))), Next::Retry { .. }));
    }

    #[test]
    fn a_full_queue_is_retried_as_rejected_or_as_the_503_it_answers() {
        for (retry_on, full_queue_retried, failed_service_retried) in
            [("rejected", true, false), ("503", true, false), ("timeout, 502", false, true)]
        {
            let config = config(&[("retry_on", Value::Text(retry_on.into()))]);
            assert_eq!(retried(&config, Outcome::Overloaded.response()), full_queue_retried, "{retry_on}");
            assert_eq!(retried(&config, Outcome::TransientError.response()), failed_service_retried, "{retry_on}");
        }
    }
}
