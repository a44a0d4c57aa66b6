//! Kubernetes client-go backoffs in Go source: `wait.Backoff{Duration: …, Factor: …, Jitter: …, Steps: …,
//! Cap: …}` literals, and client-go's own `retry.DefaultRetry` and `retry.DefaultBackoff`. Sources:
//! kubernetes/apimachinery `pkg/util/wait/backoff.go` (Backoff.Step, ExponentialBackoff) and client-go
//! `util/retry/util.go` (the two defaults).
//!
//! Step k sleeps min(Cap, Duration · Factor^(k−1)) · (1 + U(0, Jitter)): the jitter comes after the cap, which is
//! the lab's `proportional-jitter` exactly. `wait.ExponentialBackoff` tries the condition at most `Steps` times.

use std::time::Duration;

use super::code::without_comments;
use super::{Ask, Format, Imported, Input, Problem, choose, lab_duration};
use crate::error::LineCol;

pub(super) const FORMAT: Format = Format {
    name: "client-go",
    about: "Kubernetes wait.Backoff literals in Go source, and client-go's retry.DefaultRetry / DefaultBackoff",
    entry: "instance",
    detect,
    near_miss: None,
    translate,
    consumers: &[],
    readings: &[],
};

/// client-go's two defaults: (name, Duration ms, Factor, Jitter, Steps).
const DEFAULTS: &[(&str, u64, f64, f64, i64)] =
    &[("retry.DefaultRetry", 10, 1.0, 0.1, 5), ("retry.DefaultBackoff", 10, 5.0, 0.1, 4)];

/// One backoff found in the source: its fields as written, each with where.
#[derive(Default)]
struct Literal {
    fields: Vec<(String, String, LineCol)>,
    at: Option<LineCol>,
}

fn literals(text: &str) -> Vec<(String, Literal)> {
    let mut found = Vec::new();
    for (name, millis, factor, jitter, steps) in DEFAULTS {
        if let Some(offset) = text.find(name) {
            let at = LineCol::of_offset(text, offset);
            let fields = vec![
                ("Duration".to_owned(), format!("{millis} * time.Millisecond"), at),
                ("Factor".to_owned(), factor.to_string(), at),
                ("Jitter".to_owned(), jitter.to_string(), at),
                ("Steps".to_owned(), steps.to_string(), at),
            ];
            found.push(((*name).to_owned(), Literal { fields, at: Some(at) }));
        }
    }
    let mut rest = 0;
    while let Some(offset) = text[rest..].find("Backoff{").map(|i| i + rest) {
        let open = offset + "Backoff{".len();
        let Some(close) = text[open..].find('}').map(|i| i + open) else { break };
        // The name the literal is assigned to, if any: `name := wait.Backoff{` or `name = wait.Backoff{`.
        let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let before = text[line_start..offset].trim_end_matches("wait.").trim();
        let name = before
            .trim_end_matches(":=")
            .trim_end_matches('=')
            .trim()
            .rsplit(|c: char| c.is_whitespace() || c == '(' || c == ',')
            .next()
            .filter(|word| !word.is_empty() && word.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.'))
            .map_or_else(|| format!("line {}", LineCol::of_offset(text, offset).line), str::to_owned);
        let mut literal = Literal { at: Some(LineCol::of_offset(text, offset)), ..Literal::default() };
        let mut position = open;
        for item in text[open..close].split(',') {
            let trimmed = item.trim();
            let start = position + (item.len() - item.trim_start().len());
            position += item.len() + 1;
            if trimmed.is_empty() {
                continue;
            }
            if let Some((key, value)) = trimmed.split_once(':') {
                literal.fields.push((key.trim().to_owned(), value.trim().to_owned(), LineCol::of_offset(text, start)));
            } else {
                literal.fields.push((String::new(), trimmed.to_owned(), LineCol::of_offset(text, start)));
            }
        }
        found.push((name, literal));
        rest = close;
    }
    found
}

fn detect(input: &Input<'_>) -> bool {
    !literals(&without_comments(input.text)).is_empty()
}

fn translate(input: &Input<'_>, ask: &Ask<'_>) -> Result<Imported, Problem> {
    let code = without_comments(input.text);
    let found = literals(&code);
    let (name, literal) = choose(&found, ask.choice, "instance")?;
    let mut imported = Imported { entry: Some(name.clone()), ..Imported::default() };
    let field = |key: &str| format!("{name}.{key}");
    let mut duration = Duration::ZERO;
    let (mut factor, mut jitter, mut steps, mut cap) = (0.0, 0.0, 0_i64, Duration::ZERO);
    for (key, value, at) in &literal.fields {
        let bad = |what: &str| Problem::new(Some(*at), &field(key), format!("expected {what}, found {value:?}"));
        match key.as_str() {
            "Duration" => duration = go_expression(value).ok_or_else(|| bad("a duration such as 10 * time.Millisecond"))?,
            "Cap" => cap = go_expression(value).ok_or_else(|| bad("a duration such as time.Second"))?,
            "Factor" => factor = value.parse().ok().filter(|f: &f64| *f >= 0.0).ok_or_else(|| bad("a number ≥ 0"))?,
            "Jitter" => jitter = value.parse().ok().filter(|j: &f64| *j >= 0.0).ok_or_else(|| bad("a number ≥ 0"))?,
            "Steps" => steps = value.parse().map_err(|_| bad("a whole number"))?,
            "" => return Err(Problem::new(Some(*at), name, "positional fields are not read; name each (Duration: …)")),
            other => {
                let message = format!("unknown field `{other}`; wait.Backoff has Duration, Factor, Jitter, Steps, Cap");
                return Err(Problem::new(Some(*at), &field(other), message));
            }
        }
    }
    if duration.is_zero() {
        return Err(Problem::new(literal.at, &field("Duration"), "missing or 0: every step would sleep nothing"));
    }
    let multiplier = if factor == 0.0 { 1.0 } else { factor };
    let attempts = steps.max(1);
    imported.set("strategy", "proportional-jitter", "Backoff.Step: min(Cap, Duration · Factor^(k−1)) · (1 + U(0, Jitter))");
    imported.set("base", lab_duration(duration), format!("{} {duration:?}", field("Duration")));
    imported.set("multiplier", multiplier, format!("{} {factor}{}", field("Factor"), if factor == 0.0 { ": 0 means no growth" } else { "" }));
    imported.set("jitter_fraction", jitter, format!("{} {jitter}", field("Jitter")));
    let longest = super::scaled(duration, multiplier.powi(i32::try_from((attempts - 2).clamp(0, 60)).unwrap_or(60)));
    if cap.is_zero() {
        imported.set("cap", lab_duration(longest.max(duration)), "no Cap: the longest sleep the steps reach");
        super::warn_if_capped_at_longest(&mut imported, longest, &field("Cap"));
    } else {
        imported.set("cap", lab_duration(cap.max(duration)), format!("{} {cap:?}", field("Cap")));
        if longest > cap {
            imported.warn(None, &field("Cap"), "the step that reaches Cap sets Steps to 0, so wait.ExponentialBackoff stops after that sleep, with fewer attempts than Steps");
        }
    }
    if steps < 1 {
        imported.warn(None, &field("Steps"), "below 1: Step keeps returning Duration (jittered) and ExponentialBackoff tries once");
    }
    imported.set("max_attempts", attempts, format!("{} {steps}: wait.ExponentialBackoff tries at most Steps times", field("Steps")));
    Ok(imported)
}

/// A Go duration expression: `10 * time.Millisecond`, `time.Second * 2`, `time.Second`, or plain nanoseconds.
fn go_expression(text: &str) -> Option<Duration> {
    let unit = |name: &str| -> Option<Duration> {
        Some(match name.trim().trim_start_matches("time.") {
            "Nanosecond" => Duration::from_nanos(1),
            "Microsecond" => Duration::from_micros(1),
            "Millisecond" => Duration::from_millis(1),
            "Second" => Duration::from_secs(1),
            "Minute" => Duration::from_secs(60),
            "Hour" => Duration::from_secs(3600),
            _ => return None,
        })
    };
    let factors: Vec<&str> = text.split('*').map(str::trim).collect();
    let mut product = Duration::from_nanos(1);
    let mut units = 0;
    let mut scale = 1.0;
    for factor in factors {
        if let Some(unit) = unit(factor) {
            product = unit;
            units += 1;
        } else {
            scale *= factor.trim_start_matches("time.Duration(").trim_end_matches(')').parse::<f64>().ok()?;
        }
    }
    (units <= 1).then(|| super::duration_from_secs(product.as_secs_f64() * scale)).flatten()
}
