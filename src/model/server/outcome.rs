//! What the server answers an attempt, and how a client's classifier sees each answer.

use rand::RngExt;

use crate::engine::SimRng;
use crate::policy::Response;

/// What the server answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
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
    pub(crate) fn name(self) -> &'static str {
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
    pub(crate) fn response(self) -> Response {
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

    /// The answer after a service: 502, a disguised 400 or 422 with the scenario's `probabilities` (in that
    /// order), else 200; one uniform draw from `faults` unless every probability is 0.
    pub(crate) fn after_service(probabilities: [f64; 3], faults: &mut SimRng) -> Outcome {
        let [transient, disguised, permanent] = probabilities;
        if transient + disguised + permanent == 0.0 {
            return Outcome::Success;
        }
        let draw = faults.random::<f64>();
        if draw < transient {
            Outcome::TransientError
        } else if draw < transient + disguised {
            Outcome::DisguisedTransient
        } else if draw < transient + disguised + permanent {
            Outcome::Permanent
        } else {
            Outcome::Success
        }
    }
}
