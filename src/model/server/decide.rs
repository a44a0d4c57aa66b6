//! What a client of the server model does after a failed attempt: the one copy of that protocol, which the
//! simulation (run.rs) follows and which nothing in it ties to the event queue. In the limiter module's order: a
//! timeout left out of `retry_on` ends the request; otherwise the retry policy decides, the client's clock may
//! move the retry, the limiter grants a permit or refuses one, and the permit may lengthen the sleep.

use super::config::ServerConfig;
use crate::engine::SimRng;
use crate::policy::limiters::{Failed, Limiter, Permit, RetryLimiter};
use crate::policy::{BackoffMemory, FailureKind, GiveUpReason, Response, RetryDecision};
use crate::time::{SimDuration, SimTime};

/// The client's next step after a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Next {
    /// Send the next attempt after `sleep`, holding the limiter's `permit` if it keeps books.
    Retry { sleep: SimDuration, permit: Option<Permit> },
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
    let decision = if failure.timed_out && !config.retry_on.timeout {
        RetryDecision::GiveUp(GiveUpReason::NotRetried)
    } else {
        align(config.retry.after_failure(failure.failed_attempts, failure.elapsed, failure.kind, memory, jitter))
    };
    let RetryDecision::RetryAfter(sleep) = decision else { return Next::GiveUp { refused: false } };
    let Some(limiter) = limiter else { return Next::Retry { sleep, permit: None } };
    match limiter.acquire_retry(failure.now, Failed::of(failure.timed_out, failure.kind.0 == FailureKind::Throttling)) {
        Some(permit) => Next::Retry { sleep: permit.sleep(failure.now, sleep), permit: Some(permit) },
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
