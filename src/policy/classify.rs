//! Which answers are worth retrying, and how a server's Retry-After hint changes the sleep.

use crate::params::{Choice, choices};
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

/// Which failed outcomes a client retries, listed as real clients list them (gRPC `retryableStatusCodes`,
/// urllib3 `status_forcelist`, Envoy `retry_on`): statuses, and the failures that have none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryOn {
    /// Retried statuses, sorted.
    statuses: Vec<u16>,
    /// No answer before the client's timeout.
    pub timeout: bool,
    /// The connection was reset before any status.
    pub reset: bool,
    /// A full queue refused the attempt unworked (the server model's 503, the layers model's refusal).
    pub rejected: bool,
    /// A 400 whose body says the failure is temporary.
    pub disguised: bool,
}

/// The syntax of `retry_on`, for help and error messages.
pub const RETRY_ON_SYNTAX: &str = "statuses (\"503\", or \"5xx\" for 500-599), timeout, reset, rejected (a full queue), \
                                   disguised (a 400 whose body says transient), or a classifier's name (status-only, \
                                   body-aware) for its list";

impl RetryOn {
    /// What a classifier retries: its statuses ([`RETRYABLE_STATUSES`]), timeouts, resets and full queues, and for
    /// `body-aware` the disguised 400.
    pub fn of_classifier(classifier: Classifier) -> RetryOn {
        RetryOn {
            statuses: RETRYABLE_STATUSES.to_vec(),
            timeout: true,
            reset: true,
            rejected: true,
            disguised: classifier == Classifier::BodyAware,
        }
    }

    /// Reads a comma-separated list; the error names the first item that is none of [`RETRY_ON_SYNTAX`].
    pub fn parse(text: &str) -> Result<RetryOn, String> {
        let mut on = RetryOn { statuses: Vec::new(), timeout: false, reset: false, rejected: false, disguised: false };
        for item in text.split(',').map(str::trim) {
            match item {
                "timeout" => on.timeout = true,
                "reset" => on.reset = true,
                "rejected" => on.rejected = true,
                "disguised" => on.disguised = true,
                "4xx" => on.statuses.extend(400..500),
                "5xx" => on.statuses.extend(500..600),
                other => {
                    if let Some(classifier) = Classifier::from_name(other) {
                        let listed = RetryOn::of_classifier(classifier);
                        on.statuses.extend(&listed.statuses);
                        on.timeout |= listed.timeout;
                        on.reset |= listed.reset;
                        on.rejected |= listed.rejected;
                        on.disguised |= listed.disguised;
                        continue;
                    }
                    match other.parse::<u16>() {
                        Ok(status) if (400..600).contains(&status) => on.statuses.push(status),
                        Ok(status) => {
                            return Err(format!("{status} is not an error status; retried statuses are 400 to 599"));
                        }
                        Err(_) => return Err(format!("unknown outcome \"{other}\"; valid: {RETRY_ON_SYNTAX}")),
                    }
                }
            }
        }
        on.statuses.sort_unstable();
        on.statuses.dedup();
        Ok(on)
    }

    /// Whether an answer with `status` is retried (a status listed, or the disguised 400 when `disguised`).
    pub fn retries(&self, response: Response) -> bool {
        match response.status {
            0 => self.reset,
            400 if response.transient_body && self.disguised => true,
            status => self.statuses.binary_search(&status).is_ok(),
        }
    }
}

impl std::fmt::Display for RetryOn {
    /// The list as `retry_on` reads it, a whole class written `4xx` or `5xx`: `429, 5xx, timeout, reset`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut items: Vec<String> = Vec::new();
        for class in [400_u16, 500] {
            let listed: Vec<u16> = self.statuses.iter().copied().filter(|s| (class..class + 100).contains(s)).collect();
            if listed.len() == 100 {
                items.push(format!("{}xx", class / 100));
            } else {
                items.extend(listed.iter().map(u16::to_string));
            }
        }
        for (on, name) in [
            (self.timeout, "timeout"),
            (self.reset, "reset"),
            (self.rejected, "rejected"),
            (self.disguised, "disguised"),
        ] {
            if on {
                items.push(name.to_owned());
            }
        }
        f.write_str(&items.join(", "))
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

choices! {
    /// What a client does with a gRPC server's pushback (the `grpc-retry-pushback-ms` trailer, gRFC A6): a hint of
    /// its own, which no HTTP client reads, as a gRPC client reads no Retry-After.
    pub enum PushbackPolicy {
        /// The pushback is not read (every HTTP client).
        Ignore = "ignore",
        /// Retry after exactly the pushback and restart the backoff from its base; a negative or unreadable one
        /// ends the call (gRFC A6).
        Honour = "honour",
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
    fn retry_on_lists_statuses_and_statusless_failures_and_expands_classifiers() {
        let on = RetryOn::parse("503, timeout").unwrap();
        assert!(on.retries(response(503, true)) && !on.retries(response(502, true)) && !on.retries(response(0, false)));
        assert!(on.timeout && !on.reset && !on.rejected);
        let grpc_like = RetryOn::parse("5xx,reset").unwrap();
        assert!(grpc_like.retries(response(500, false)) && grpc_like.retries(response(599, false)));
        assert!(grpc_like.retries(response(0, false)) && !grpc_like.retries(response(429, true)));
        for classifier in [Classifier::StatusOnly, Classifier::BodyAware] {
            let listed = RetryOn::parse(classifier.name()).unwrap();
            assert_eq!(listed, RetryOn::of_classifier(classifier));
            for status in [0, 200, 400, 401, 404, 422, 429, 500, 502, 503, 504] {
                for body in [false, true] {
                    let answer = response(status, body);
                    let expected = status != 200 && classifier.is_retryable(answer);
                    assert_eq!(listed.retries(answer), expected, "{classifier} {status} {body}");
                }
            }
        }
        assert_eq!(RetryOn::parse("timeout, 5xx, 429").unwrap().to_string(), "429, 5xx, timeout");
        assert_eq!(
            RetryOn::of_classifier(Classifier::BodyAware).to_string(),
            "429, 502, 503, 504, timeout, reset, rejected, disguised"
        );
        assert!(RetryOn::parse("503, tiemout").unwrap_err().contains("unknown outcome \"tiemout\""));
        assert!(RetryOn::parse("200").unwrap_err().contains("not an error status"));
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
