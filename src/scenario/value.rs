//! Converting one TOML value into a typed parameter [`Value`], with located errors.

use std::ops::Range;

use toml::Spanned;
use toml::de::DeValue;

use super::locator::Locator;
use crate::error::InputError;
use crate::params::{ParamKind, ParamSpec, Value};
use crate::time::parse_duration;

/// The TOML type of a value, for "expected X, found Y" messages.
pub(super) fn type_name(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// Reads a TOML integer (any radix) as `i64`.
pub(super) fn integer(value: &DeValue<'_>) -> Option<i64> {
    match value {
        DeValue::Integer(int) => i64::from_str_radix(&int.as_str().replace('_', ""), int.radix()).ok(),
        _ => None,
    }
}

/// Reads a TOML integer or float as `f64` (an integer beyond `i64` too, so that its range is what is refused).
pub(super) fn number(value: &DeValue<'_>) -> Option<f64> {
    match value {
        DeValue::Float(float) => float.as_str().replace('_', "").parse().ok(),
        DeValue::Integer(int) => integer(value).map(|n| n as f64).or_else(|| match int.radix() {
            10 => int.as_str().replace('_', "").parse().ok(),
            _ => Some(f64::INFINITY),
        }),
        _ => None,
    }
}

/// Converts `raw` (at `span`) into a value of `spec`'s kind, or explains what would be valid.
pub(super) fn convert(
    spec: &'static ParamSpec,
    key: &str,
    raw: &DeValue<'_>,
    span: Range<usize>,
    at: Locator<'_>,
) -> Result<Value, InputError> {
    let expected = spec.kind.describe();
    let wrong_type = || at.error(span.clone(), key, format!("expected {expected}, found {}", type_name(raw)));
    match spec.kind {
        ParamKind::Count { min, max } => {
            let n = match raw {
                DeValue::Integer(int) => integer(raw).ok_or_else(|| {
                    at.error(span.clone(), key, format!("{} is out of range; expected {expected}", int.as_str()))
                })?,
                _ => return Err(wrong_type()),
            };
            if n < min || n > max {
                return Err(at.error(span, key, format!("{n} is out of range; expected {expected}")));
            }
            Ok(Value::Count(n))
        }
        ParamKind::Real { min, max } => {
            let x = number(raw).ok_or_else(wrong_type)?;
            if !x.is_finite() || x < min || x > max {
                return Err(at.error(span, key, format!("{x} is out of range; expected {expected}")));
            }
            Ok(Value::Real(x))
        }
        ParamKind::Duration => match raw {
            DeValue::String(text) => parse_duration(text).map(Value::Duration).map_err(|why| at.error(span, key, why)),
            DeValue::Integer(_) | DeValue::Float(_) => Err(at.error(
                span,
                key,
                format!("a duration needs its unit: write it as a string, like \"{}ms\"", number(raw).unwrap_or(0.0)),
            )),
            _ => Err(wrong_type()),
        },
        ParamKind::Text { .. } => match raw {
            DeValue::String(text) => Ok(Value::Text(text.as_ref().into())),
            _ => Err(wrong_type()),
        },
        ParamKind::List { .. } => {
            let items: Vec<String> = match raw {
                DeValue::String(text) => text.split(',').map(|item| item.trim().to_owned()).collect(),
                DeValue::Array(items) => string_items(items, key, &expected, at)?
                    .into_iter()
                    .map(|(text, _)| text.trim().to_owned())
                    .collect(),
                _ => return Err(wrong_type()),
            };
            if matches!(raw, DeValue::Array(list) if list.is_empty()) {
                return Err(at.error(span, key, format!("an empty list names nothing; expected {expected}")));
            }
            if items.iter().any(String::is_empty) {
                return Err(at.error(span, key, format!("an empty item; expected {expected}")));
            }
            Ok(Value::Text(items.join(", ").into()))
        }
        ParamKind::Choice(names) => {
            let DeValue::String(text) = raw else {
                return Err(wrong_type());
            };
            choose(spec, names, key, text, span, at).map(Value::Choice)
        }
        ParamKind::ChoiceList(names) => {
            let chosen: Vec<&'static str> = match raw {
                DeValue::String(text) => vec![choose(spec, names, key, text, span, at)?],
                DeValue::Array(items) if !items.is_empty() => string_items(items, key, &expected, at)?
                    .into_iter()
                    .map(|(text, span)| choose(spec, names, key, text, span, at))
                    .collect::<Result<_, _>>()?,
                DeValue::Array(_) => {
                    return Err(at.error(
                        span,
                        key,
                        format!("an empty list chooses nothing; give one or more of: {}", names.join(", ")),
                    ));
                }
                _ => return Err(wrong_type()),
            };
            Ok(match chosen[..] {
                [one] => Value::Choice(one),
                _ => Value::Text(chosen.join(", ").into()),
            })
        }
    }
}

/// The name out of `names` that `text` is, or an error that says why this model refuses it or what is valid.
fn choose(
    spec: &'static ParamSpec,
    names: &'static [&'static str],
    key: &str,
    text: &str,
    span: Range<usize>,
    at: Locator<'_>,
) -> Result<&'static str, InputError> {
    names.iter().copied().find(|name| *name == text).ok_or_else(|| {
        let message = match crate::model::client::refusal_hint(spec.key, text) {
            Some(why) => format!("{why}; valid here: {}", names.join(", ")),
            None => format!("unknown {} \"{text}\"; valid: {}", spec.key, names.join(", ")),
        };
        at.error(span, key, message)
    })
}

/// The strings of a TOML array with their spans, or an error at the first item that is not a string.
fn string_items<'v>(
    items: &'v [Spanned<DeValue<'_>>],
    key: &str,
    expected: &str,
    at: Locator<'_>,
) -> Result<Vec<(&'v str, Range<usize>)>, InputError> {
    items
        .iter()
        .map(|item| match item.get_ref() {
            DeValue::String(text) => Ok((text.as_ref(), item.span())),
            other => {
                Err(at.error(item.span(), key, format!("expected {expected}, found {} in the list", type_name(other))))
            }
        })
        .collect()
}
