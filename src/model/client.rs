//! The `[client]` parameters every request-response model shares, and the [`RetryPolicy`] they describe.
//!
//! `strategy` takes a strategy name or a preset name ([`crate::policy::presets`]): a preset's backoff parameters
//! and attempts replace `base`, `cap`, `multiplier` and `max_attempts`, and it brings a retry limiter that models
//! use when their own `limiter` is `"none"`.

use super::params::{ParamDefault, ParamError, ParamKind, ParamSpec, Point, Section, Value};
use crate::policy::limiters::Limiter;
use crate::policy::presets::{self, Preset};
use crate::policy::{BackoffParams, RetryAfterPolicy, RetryPolicy, Strategy};
use crate::time::SimDuration;

/// The client policy parameters, in the order they appear in outputs.
pub const CLIENT_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        section: Section::Client,
        key: "strategy",
        kind: ParamKind::Choice(presets::STRATEGY_CHOICES),
        default: ParamDefault::Value(Value::Choice("full-jitter")),
        help: "backoff strategy, or a preset that also fixes base, cap, multiplier, max_attempts and the limiter \
               (see `retrylab strategies`)",
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

/// Builds the retry policy of a point from its `[client]` parameters (for a preset, its own backoff and attempts).
pub fn retry_policy(point: &Point) -> Result<RetryPolicy, ParamError> {
    client_policy(point).map(|(policy, _)| policy)
}

/// The retry policy of a point and, when `strategy` names a preset, a fresh instance of the preset's limiter
/// (models use it when their own `limiter` is `"none"`).
pub fn client_policy(point: &Point) -> Result<(RetryPolicy, Option<Limiter>), ParamError> {
    let name = point.choice("strategy")?;
    let deadline = point.optional_duration("deadline")?;
    if let Some(preset) = Preset::lookup(name) {
        let policy = RetryPolicy {
            strategy: preset.strategy,
            backoff: preset.backoff,
            max_attempts: preset.max_attempts,
            deadline,
            retry_after: RetryAfterPolicy::Honour,
        };
        return Ok((preset.apply(policy), preset.limiter()));
    }
    let strategy = Strategy::from_name(name).ok_or_else(|| {
        ParamError::new(
            "strategy",
            format!(
                "unknown strategy \"{name}\"; valid: {}, or a preset: {}",
                Strategy::valid_names(),
                presets::NAMES.join(", ")
            ),
        )
    })?;
    let base = point.duration("base")?;
    let cap = point.duration("cap")?;
    if base.is_zero() && strategy != Strategy::None {
        return Err(ParamError::new(
            "base",
            "must be greater than 0 (for no sleep at all use strategy = \"none\")".into(),
        ));
    }
    if cap < base {
        return Err(ParamError::new("cap", format!("cap ({cap}) must be at least base ({base})")));
    }
    let policy = RetryPolicy {
        strategy,
        backoff: BackoffParams { base, cap, multiplier: point.real("multiplier")? },
        max_attempts: point.optional_count("max_attempts")?.map(|n| n as u32),
        deadline,
        retry_after: RetryAfterPolicy::Honour,
    };
    Ok((policy, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelKind;

    #[test]
    fn every_preset_is_accepted_as_a_strategy_and_replaces_the_client_values() {
        for preset in presets::ALL {
            let point = ModelKind::Server.point_with(&[
                ("strategy", Value::Choice(preset.name)),
                ("base", Value::Duration(SimDuration::from_millis(3))),
                ("max_attempts", Value::Count(99)),
                ("deadline", Value::Duration(SimDuration::from_secs(7))),
            ]);
            let (policy, limiter) = client_policy(&point).unwrap_or_else(|e| panic!("{}: {e:?}", preset.name));
            assert_eq!(policy.strategy, preset.strategy);
            assert_eq!(policy.backoff, preset.backoff, "{}: the preset's base wins", preset.name);
            assert_eq!(policy.max_attempts, preset.max_attempts);
            assert_eq!(policy.deadline, Some(SimDuration::from_secs(7)), "the deadline is the client's");
            assert_eq!(limiter, preset.limiter(), "{}", preset.name);
            assert_eq!(retry_policy(&point).unwrap(), policy);
        }
    }

    #[test]
    fn a_plain_strategy_keeps_the_client_values_and_brings_no_limiter() {
        let point = ModelKind::Server.point_with(&[("strategy", Value::Choice("exponential"))]);
        let (policy, limiter) = client_policy(&point).unwrap();
        assert_eq!(policy.strategy, Strategy::Exponential);
        assert_eq!(policy.backoff, BackoffParams::AWS_2015);
        assert_eq!(limiter, None);
    }
}
