//! The `[tune]` table: the search space of `retrylab tune` (lists or ranges of `[client]` values, as in `[sweep]`)
//! and its goal, an objective to minimise under constraints, checked against the model's metrics.
//!
//! ```toml
//! [tune]
//! objective = "calls + 0.01 * latency_p99_ms"
//! constraints = ["success_rate >= 0.999"]
//! budget = 600
//! strategy = ["exponential", "full-jitter", "aws-sdk-standard"]
//! base = ["10ms", "50ms", "200ms"]
//! client.budget = [0.1, 0.2]   # a key named like a goal key (the limiter's ratio), with its table
//! ```

use std::ops::Range;

use toml::Spanned;
use toml::de::DeValue;

use super::SweepAxis;
use super::locator::Locator;
use super::parse::{as_table, axis_values, resolve_param, unknown_key};
use super::value::{integer, type_name};
use crate::error::{InputError, Origin};
use crate::model::ModelKind;
use crate::params::SeedSide;
use crate::tune::expr::{Constraint, ExprError, Objective, parse_constraint, parse_objective};
use crate::tune::reach::metric_range;

/// The keys of `[tune]` that are not `[client]` parameters.
const GOAL_KEYS: &[&str] = &["objective", "constraints", "budget"];
/// Runs at most in one search.
pub const MAX_BUDGET: u64 = 10_000_000;

/// What `retrylab tune` searches and how it judges.
#[derive(Debug, Clone)]
pub struct TuneTable {
    /// The candidates: every combination of these `[client]` values, first axis outermost.
    pub space: Vec<SweepAxis>,
    pub(crate) objective: Option<Objective>,
    /// Where the objective is written.
    pub(crate) objective_origin: Origin,
    /// The constraints, each with where it is written.
    pub(crate) constraints: Vec<(Constraint, Origin)>,
    /// Runs the search may spend.
    pub budget: Option<u64>,
    /// Where `[tune]` starts.
    pub origin: Origin,
}

/// Reads `[tune]`, checking its values as `[sweep]`'s and its expressions against `model`'s metrics.
pub(super) fn read_tune(
    model: ModelKind,
    value: &Spanned<DeValue<'_>>,
    at: Locator<'_>,
) -> Result<TuneTable, InputError> {
    let table = as_table(value, "tune", at)?;
    let metric_names: Vec<&str> = model.metrics().iter().map(|m| m.name).collect();
    let mut tune = TuneTable {
        space: Vec::new(),
        objective: None,
        objective_origin: Origin::Default,
        constraints: Vec::new(),
        budget: None,
        origin: at.origin(value.span()),
    };
    for (key, value) in table.iter() {
        let key_text = key.get_ref().as_ref();
        let dotted = format!("tune.{key_text}");
        match key_text {
            "objective" => {
                let text = string(value, &dotted, at)?;
                let objective =
                    parse_objective(text, &metric_names).map_err(|e| expr_error(at, value.span(), &dotted, &e))?;
                tune.objective = Some(objective);
                tune.objective_origin = at.origin(value.span());
            }
            "constraints" => {
                let items: Vec<&Spanned<DeValue<'_>>> = match value.get_ref() {
                    DeValue::Array(items) => items.iter().collect(),
                    _ => vec![value],
                };
                for item in items {
                    let text = string(item, &dotted, at)?;
                    let constraint =
                        parse_constraint(text, &metric_names).map_err(|e| expr_error(at, item.span(), &dotted, &e))?;
                    if let Some(problem) = out_of_reach(model, &constraint) {
                        return Err(at.error(item.span(), &dotted, problem));
                    }
                    tune.constraints.push((constraint, at.origin(item.span())));
                }
            }
            "budget" => {
                let budget =
                    integer(value.get_ref()).filter(|n| (1..=MAX_BUDGET as i64).contains(n)).ok_or_else(|| {
                        let also = if resolve_param(model, "client.budget").is_some() {
                            "; to search the limiter's `budget` ratio, name its table: client.budget = [0.1, 0.2]"
                        } else {
                            ""
                        };
                        at.error(
                            value.span(),
                            &dotted,
                            format!(
                                "expected a whole number of runs from 1 to {MAX_BUDGET} (the search's budget){also}"
                            ),
                        )
                    })?;
                tune.budget = Some(budget as u64);
            }
            section if SECTIONS.contains(&section) && matches!(value.get_ref(), DeValue::Table(_)) => {
                // `client.budget = […]`: a key named with its table, for keys named like a goal key.
                for (key, value) in as_table(value, &dotted, at)?.iter() {
                    let full = format!("{section}.{}", key.get_ref());
                    search(model, &mut tune, key.span(), &full, value, at)?;
                }
            }
            _ => search(model, &mut tune, key.span(), key_text, value, at)?,
        }
    }
    Ok(tune)
}

/// The `[table]` names a searched key may be written under (`client.budget`).
const SECTIONS: &[&str] = &["client", "model"];

/// Adds the axis `key` = `value` to the search space: a policy-side parameter, once.
fn search(
    model: ModelKind,
    tune: &mut TuneTable,
    key_span: Range<usize>,
    key_text: &str,
    value: &Spanned<DeValue<'_>>,
    at: Locator<'_>,
) -> Result<(), InputError> {
    let dotted = format!("tune.{key_text}");
    let client_keys = || -> Vec<&str> {
        let mut keys = GOAL_KEYS.to_vec();
        keys.extend(model.params().filter(|spec| spec.side == SeedSide::Policy).map(|spec| spec.key));
        keys
    };
    let (spec, name) = resolve_param(model, key_text)
        .ok_or_else(|| unknown_key(at, key_span.clone(), key_text, "[tune]", &client_keys()))?;
    if spec.side != SeedSide::Policy {
        return Err(at.error(
            key_span,
            &dotted,
            format!(
                "`{}` describes the system, not the clients' policy: tune searches [client] keys ({}); set it in \
                 [{}] or with --set",
                spec.key,
                client_keys()[GOAL_KEYS.len()..].join(", "),
                spec.section.name()
            ),
        ));
    }
    if tune.space.iter().any(|axis| std::ptr::eq(axis.spec, spec)) {
        return Err(at.error(key_span, &dotted, format!("`{}` is already searched above", spec.key)));
    }
    let values = axis_values(spec, &dotted, value, at)?;
    tune.space.push(SweepAxis { spec, name, values, origin: at.origin(key_span) });
    Ok(())
}

/// Why `constraint` can hold in no run (its left side cannot reach the bound), if so.
pub(crate) fn out_of_reach(model: ModelKind, constraint: &Constraint) -> Option<String> {
    let range_of = |metric: &str| metric_range(model, metric);
    if constraint.can_hold(range_of) {
        return None;
    }
    let (least, greatest) = constraint.lhs.range(range_of);
    let ranges: Vec<String> = constraint
        .lhs
        .terms
        .iter()
        .filter_map(|(_, metric)| model.metrics().iter().find(|spec| spec.answers_to(metric)))
        .map(|spec| format!("{} is a {}", spec.name, spec.unit.label()))
        .collect();
    Some(format!(
        "`{constraint}` can never hold: its left side stays within [{least}, {greatest}] ({}); give a bound inside \
         that range",
        ranges.join(", ")
    ))
}

fn string<'v>(value: &'v Spanned<DeValue<'_>>, key: &str, at: Locator<'_>) -> Result<&'v str, InputError> {
    match value.get_ref() {
        DeValue::String(text) => Ok(text),
        other => Err(at.error(value.span(), key, format!("expected a string, found {}", type_name(other)))),
    }
}

/// An expression's error, located at its column in the file when the string is written plainly ("…" with no
/// escapes), else at the string.
fn expr_error(at: Locator<'_>, span: Range<usize>, key: &str, error: &ExprError) -> InputError {
    let raw = at.source.get(span.clone()).unwrap_or_default();
    let plain = raw.starts_with('"') && !raw.starts_with("\"\"\"") && !raw.contains('\\');
    let start = if plain {
        let inner = &raw[1..];
        let byte = inner.char_indices().nth(error.column - 1).map_or(inner.len().saturating_sub(1), |(i, _)| i);
        span.start + 1 + byte
    } else {
        span.start
    };
    let message = if plain { error.message.clone() } else { error.to_string() };
    at.error(start..start, key, message)
}
