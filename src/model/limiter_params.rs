//! The `[client]` parameters that tune the retry limiters with knobs (gRPC throttling, the retry token bucket,
//! the circuit breaker), shared by the models that take a `limiter`. Every one is unset by default, which
//! means the shipped default in the limiter's doc comment, so adding them changed no existing point's seed.

use super::params::{ParamDefault, ParamError, ParamKind, ParamSpec, Point, Section, Value};
use crate::policy::limiters::{CircuitBreaker, DepositRule, GrpcThrottle, Limiter, RetryTokenBucket};
use crate::time::SimDuration;

const fn tuning(key: &'static str, kind: ParamKind, help: &'static str) -> ParamSpec {
    ParamSpec { section: Section::Client, key, kind, default: ParamDefault::Unset, help }
}

pub const LIMITER_TUNING_PARAMS: &[ParamSpec] = &[
    tuning("max_tokens", ParamKind::Real { min: 0.0, max: 1000.0 }, "grpc: maxTokens, > 0 (unset: 10)"),
    tuning(
        "token_ratio",
        ParamKind::Real { min: 0.0, max: 1000.0 },
        "grpc: tokenRatio, tokens back per success, > 0 (unset: 0.1)",
    ),
    tuning(
        "bucket_deposit",
        ParamKind::Real { min: 0.0, max: 1000.0 },
        "token-bucket: tokens deposited per call or success, > 0 (unset: 0.1)",
    ),
    tuning("bucket_capacity", ParamKind::Real { min: 0.0, max: 1e9 }, "token-bucket: capacity, > 0 (unset: 5)"),
    tuning(
        "deposit_rule",
        ParamKind::Choice(&["per-call", "per-success"]),
        "token-bucket: deposit on every call or only on successes (unset: per-call)",
    ),
    tuning(
        "breaker_threshold",
        ParamKind::Real { min: 0.0, max: 1.0 },
        "breaker: open while more than this fraction of recent calls failed (unset: 0.1)",
    ),
    tuning(
        "breaker_window",
        ParamKind::Count { min: 1, max: 10_000_000 },
        "breaker: recent = the last this many calls (unset: 100)",
    ),
    tuning(
        "breaker_window_time",
        ParamKind::Duration,
        "breaker: recent = the calls of this last span of time, whole seconds (instead of breaker_window)",
    ),
    tuning(
        "breaker_cumulative",
        ParamKind::Choice(&["off", "on"]),
        "breaker: on = count every call since the start (instead of a window)",
    ),
    tuning("breaker_open_for", ParamKind::Duration, "breaker: how long it stays open before a probe (unset: 1s)"),
];

/// The keys above, for models that let parts override them.
pub const LIMITER_TUNING_KEYS: &[&str] = &[
    "max_tokens",
    "token_ratio",
    "bucket_deposit",
    "bucket_capacity",
    "deposit_rule",
    "breaker_threshold",
    "breaker_window",
    "breaker_window_time",
    "breaker_cumulative",
    "breaker_open_for",
];

/// A real parameter that must be greater than 0 if set, else `default`.
fn positive(point: &Point, key: &'static str, default: f64, why: &str) -> Result<f64, ParamError> {
    match point.get(key)? {
        None => Ok(default),
        Some(_) => {
            let value = point.real(key)?;
            if value > 0.0 { Ok(value) } else { Err(ParamError::new(key, format!("must be greater than 0: {why}"))) }
        }
    }
}

/// The limiter called `name`, tuned by the point's parameters where it has knobs; `None` for `none`, `budget`
/// (which models implement themselves) and unknown names.
pub fn tuned_limiter(point: &Point, name: &str) -> Result<Option<Limiter>, ParamError> {
    match name {
        "grpc" => {
            let max_tokens = positive(point, "max_tokens", 10.0, "with no tokens the client never retries")?;
            let ratio =
                positive(point, "token_ratio", 0.1, "with no refill one burst of failures ends retrying for good")?;
            Ok(Some(Limiter::Grpc(GrpcThrottle::new(max_tokens, ratio))))
        }
        "token-bucket" => {
            let deposit = positive(point, "bucket_deposit", 0.1, "with no deposits the bucket never refills")?;
            let capacity = positive(point, "bucket_capacity", 5.0, "an empty bucket allows no retry")?;
            let rule = match point.get("deposit_rule")? {
                Some(Value::Choice("per-success")) => DepositRule::PerSuccess,
                _ => DepositRule::PerCall,
            };
            Ok(Some(Limiter::TokenBucket(RetryTokenBucket::new(deposit, capacity, rule))))
        }
        "breaker" => {
            let threshold = match point.get("breaker_threshold")? {
                Some(_) => point.real("breaker_threshold")?,
                None => 0.1,
            };
            let open_for = point.optional_duration("breaker_open_for")?.unwrap_or(SimDuration::from_secs(1));
            let count = point.optional_count("breaker_window")?;
            let time = point.optional_duration("breaker_window_time")?;
            let cumulative = point.get("breaker_cumulative")? == Some(Value::Choice("on"));
            let breaker = match (count, time, cumulative) {
                (Some(_), Some(_), _) | (Some(_), None, true) | (None, Some(_), true) => {
                    return Err(ParamError::new(
                        if cumulative { "breaker_cumulative" } else { "breaker_window_time" },
                        "choose one of breaker_window (calls), breaker_window_time (time) and \
                                  breaker_cumulative = \"on\""
                            .into(),
                    ));
                }
                (None, Some(span), false) if span.is_zero() => {
                    return Err(ParamError::new(
                        "breaker_window_time",
                        "must be longer than 0 (at least one second is kept)".into(),
                    ));
                }
                (None, Some(span), false) => CircuitBreaker::over_time(threshold, span, open_for),
                (None, None, true) => CircuitBreaker::cumulative(threshold, open_for),
                (count, None, false) => CircuitBreaker::new(threshold, count.unwrap_or(100) as usize, open_for),
            };
            Ok(Some(Limiter::Breaker(breaker)))
        }
        other => Ok(Limiter::preset(other)),
    }
}
