//! What the server answers an attempt, and how a client's classifier sees each answer.

use crate::policy::Response;

/// What the server answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    /// 200.
    Success,
    /// 503: the queue was full.
    Overloaded,
    /// 429: the rate limiter had no token.
    Throttled,
    /// 502 after service: a transient failure.
    TransientError,
    /// 400 after service, with a body saying an upstream is temporarily unavailable.
    DisguisedTransient,
    /// 422 after service: permanent.
    Permanent,
    /// The connection was reset: no status.
    ConnectionReset,
}

impl Outcome {
    /// A short name for traces.
    pub(super) fn name(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Overloaded => "overloaded",
            Outcome::Throttled => "throttled",
            Outcome::TransientError => "transient-error",
            Outcome::DisguisedTransient => "disguised-transient",
            Outcome::Permanent => "permanent-error",
            Outcome::ConnectionReset => "connection-reset",
        }
    }

    /// The response as a client's classifier sees it.
    pub(super) fn response(self) -> Response {
        let (status, transient_body) = match self {
            Outcome::Success => (200, false),
            Outcome::Overloaded => (503, true),
            Outcome::Throttled => (429, true),
            Outcome::TransientError => (502, true),
            Outcome::DisguisedTransient => (400, true),
            Outcome::Permanent => (422, false),
            Outcome::ConnectionReset => (0, false),
        };
        Response { status, transient_body }
    }
}
