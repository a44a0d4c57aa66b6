//! The `[client]` parameters every request-response model shares, and the [`RetryPolicy`] they describe.

use super::params::{ParamDefault, ParamError, ParamKind, ParamSpec, Point, Section, Value};
use crate::engine::SimDuration;
use crate::policy::{BackoffParams, RetryAfterPolicy, RetryPolicy, Strategy};

/// The client policy parameters, in the order they appear in outputs.
pub const CLIENT_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        section: Section::Client,
        key: "strategy",
        kind: ParamKind::Choice(Strategy::NAMES),
        default: ParamDefault::Value(Value::Choice("full-jitter")),
        help: "backoff strategy (see `retrylab strategies`)",
    },
    ParamSpec {
        section: Section::Client,
        key: "base",
        kind: ParamKind::Duration,
        default: ParamDefault::Value(Value::Duration(SimDuration::from_millis(5))),
        help: "b: base sleep of the backoff formula (> 0)",
    },
    ParamSpec {
        section: Section::Client,
        key: "cap",
        kind: ParamKind::Duration,
        default: ParamDefault::Value(Value::Duration(SimDuration::from_secs(2))),
        help: "c: no sleep is longer than this (≥ base)",
    },
    ParamSpec {
        section: Section::Client,
        key: "multiplier",
        kind: ParamKind::Real { min: 1.0, max: 1e6 },
        default: ParamDefault::Value(Value::Real(2.0)),
        help: "m: growth factor of the exponential formulas",
    },
    ParamSpec {
        section: Section::Client,
        key: "max_attempts",
        kind: ParamKind::Count { min: 1, max: u32::MAX as i64 },
        default: ParamDefault::Unset,
        help: "attempts allowed per operation, the first try included (unset: unlimited)",
    },
    ParamSpec {
        section: Section::Client,
        key: "deadline",
        kind: ParamKind::Duration,
        default: ParamDefault::Unset,
        help: "give up instead of sleeping past this time since the operation began (unset: none)",
    },
];

/// Builds the retry policy of a point from its `[client]` parameters.
pub fn retry_policy(point: &Point) -> Result<RetryPolicy, ParamError> {
    let name = point.choice("strategy")?;
    let strategy = Strategy::from_name(name).ok_or_else(|| ParamError {
        key: "strategy",
        message: format!("unknown strategy \"{name}\"; valid: {}", Strategy::valid_names()),
    })?;
    let base = point.duration("base")?;
    let cap = point.duration("cap")?;
    if base.is_zero() && strategy != Strategy::None {
        return Err(ParamError {
            key: "base",
            message: "must be greater than 0 (for no sleep at all use strategy = \"none\")".into(),
        });
    }
    if cap < base {
        return Err(ParamError { key: "cap", message: format!("cap ({cap}) must be at least base ({base})") });
    }
    Ok(RetryPolicy {
        strategy,
        backoff: BackoffParams { base, cap, multiplier: point.real("multiplier")? },
        max_attempts: point.optional_count("max_attempts")?.map(|n| n as u32),
        deadline: point.optional_duration("deadline")?,
        retry_after: RetryAfterPolicy::Honour,
    })
}
