//! Which answers are worth retrying, and how a server's Retry-After hint changes the sleep.

use crate::params::choices;
use crate::time::SimDuration;

/// An answer as a client sees it: the status code (0 when the connection was reset before any status) and
/// whether the body says the failure is temporary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// The body says something like "upstream temporarily unavailable", whatever the status.
    pub transient_body: bool,
}

/// Statuses retried by every classifier: 429 Too Many Requests, 502 Bad Gateway, 503 Service Unavailable and
/// 504 Gateway Timeout. Other 4xx (400, 401, 403, 404, 409, 422) are permanent.
pub const RETRYABLE_STATUSES: &[u16] = &[429, 502, 503, 504];

choices! {
    /// How a client decides whether a failed answer is retryable. Timeouts and connection resets (status 0) are
    /// always retryable.
    pub enum Classifier {
        /// Looks at the status code only, so a 400 is final even when the body says "try again".
        StatusOnly = "status-only",
        /// Also reads the body: a 400 whose body says the failure is transient is retried.
        BodyAware = "body-aware",
    }
}

impl Classifier {
    pub fn is_retryable(self, response: Response) -> bool {
        response.status == 0
            || RETRYABLE_STATUSES.contains(&response.status)
            || (self == Classifier::BodyAware && response.status == 400 && response.transient_body)
    }
}

choices! {
    /// What a client does with a server's Retry-After hint.
    pub enum RetryAfterPolicy {
        /// Sleep exactly the hint instead of the computed backoff.
        Honour = "honour",
        /// Use the computed backoff; the hint is not read.
        Ignore = "ignore",
        /// Sleep the hint, but never longer than the backoff cap.
        HonourCapped = "honour-capped",
        /// Sleep the longer of the backoff and the hint, but at most 5 s more than the backoff (botocore 1.44's
        /// `x-amz-retry-after`, the AWS SDK for JavaScript v3).
        AwsBounded = "aws-bounded",
    }
}

/// How much longer than its backoff an AWS SDK sleeps for a Retry-After hint.
const AWS_RETRY_AFTER_MAX_EXTRA: SimDuration = SimDuration::from_secs(5);

impl RetryAfterPolicy {
    /// The sleep before the next attempt given the computed backoff, the server's hint and the backoff cap.
    pub fn sleep(self, computed: SimDuration, hint: Option<SimDuration>, cap: SimDuration) -> SimDuration {
        match (self, hint) {
            (RetryAfterPolicy::Honour, Some(hint)) => hint,
            (RetryAfterPolicy::HonourCapped, Some(hint)) => hint.min(cap),
            (RetryAfterPolicy::AwsBounded, Some(hint)) => hint.min(computed + AWS_RETRY_AFTER_MAX_EXTRA).max(computed),
            (RetryAfterPolicy::Ignore, _) | (_, None) => computed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn response(status: u16, transient_body: bool) -> Response {
        Response { status, transient_body }
    }

    #[test]
    fn status_only_never_retries_a_400_and_body_aware_does_when_the_body_says_transient() {
        assert!(!Classifier::StatusOnly.is_retryable(response(400, true)));
        assert!(Classifier::BodyAware.is_retryable(response(400, true)));
        assert!(!Classifier::BodyAware.is_retryable(response(400, false)));
        for permanent in [401, 403, 404, 409, 422] {
            for classifier in [Classifier::StatusOnly, Classifier::BodyAware] {
                assert!(!classifier.is_retryable(response(permanent, true)), "{permanent}");
            }
        }
        for &retryable in RETRYABLE_STATUSES.iter().chain(&[0]) {
            assert!(Classifier::StatusOnly.is_retryable(response(retryable, false)), "{retryable}");
        }
    }

    #[test]
    fn retry_after_takes_precedence_when_honoured() {
        let ms = SimDuration::from_millis;
        let (computed, hint, cap) = (ms(40), Some(ms(5_000)), ms(2_000));
        assert_eq!(RetryAfterPolicy::Honour.sleep(computed, hint, cap), ms(5_000));
        assert_eq!(RetryAfterPolicy::HonourCapped.sleep(computed, hint, cap), ms(2_000));
        assert_eq!(RetryAfterPolicy::Ignore.sleep(computed, hint, cap), ms(40));
        assert_eq!(RetryAfterPolicy::Honour.sleep(computed, None, cap), ms(40));
        // botocore: max(t, min(hint, t + 5 s)).
        assert_eq!(RetryAfterPolicy::AwsBounded.sleep(computed, hint, cap), ms(5_000));
        assert_eq!(RetryAfterPolicy::AwsBounded.sleep(computed, Some(ms(9_000)), cap), ms(5_040));
        assert_eq!(RetryAfterPolicy::AwsBounded.sleep(computed, Some(ms(10)), cap), ms(40));
    }
}
