//! Polly v8 retry options in JSON (appsettings), as `RetryStrategyOptions` binds them, and the standard
//! resilience handler of Microsoft.Extensions.Http.Resilience (`Retry`, `AttemptTimeout`, `TotalRequestTimeout`).
//! Sources: App-vNext/Polly 8.7 `RetryStrategyOptions`, `RetryHelper` (the delays); dotnet/extensions 10.8
//! `HttpRetryStrategyOptions`, `HttpStandardResilienceOptions`; .NET's `TimeSpan.Parse`.
//!
//! `MaxRetryAttempts` counts retries (3). Retry a = 0, 1, … waits `Delay` (2 s) for Constant, (a + 1) · Delay
//! for Linear, 2^a · Delay for Exponential, capped by `MaxDelay`. `UseJitter` spreads Constant and Linear waits
//! uniformly over ±25%, and makes Exponential Polly's decorrelated jitter (the lab's `polly-v2`). The HTTP
//! options default to Exponential with jitter; the core options to Constant without.

use std::time::Duration;

use super::doc::{Node, Value};
use super::{Ask, Format, expected, Imported, Input, LONGEST_SLEEP, Problem, choose, known_keys, lab_duration, scaled, duration_from_secs, shown, too_long};

pub(super) const FORMAT: Format = Format {
    name: "polly",
    about: "Polly v8 RetryStrategyOptions and the HTTP standard resilience handler, as appsettings JSON binds them",
    entry: "instance",
    detect,
    near_miss: None,
    translate,
    consumers: &[],
    readings: &[],
};

const RETRY_KEYS: &[&str] =
    &["MaxRetryAttempts", "Delay", "MaxDelay", "BackoffType", "UseJitter", "ShouldRetryAfterHeader", "Name"];
/// Keys that mark a retry options object.
const MARKERS: &[&str] = &["MaxRetryAttempts", "BackoffType", "UseJitter"];

/// A retry options object found in the file: its dotted path, the object, and the standard handler around it.
fn find<'n>(node: &'n Node, path: &str, parent: Option<&'n Node>, found: &mut Vec<(String, (&'n Node, Option<&'n Node>))>) {
    let Value::Map(entries) = &node.value else { return };
    if MARKERS.iter().any(|marker| node.get(marker).is_some()) {
        let standard = parent.filter(|p| p.get("AttemptTimeout").is_some() || p.get("TotalRequestTimeout").is_some());
        found.push((if path.is_empty() { "retry".to_owned() } else { path.to_owned() }, (node, standard)));
        return;
    }
    for (key, _, value) in entries {
        let child = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
        find(value, &child, Some(node), found);
    }
}

fn detect(input: &Input<'_>) -> bool {
    input.document().is_ok_and(|document| {
        let mut found = Vec::new();
        find(document, "", None, &mut found);
        !found.is_empty()
    })
}

fn translate(input: &Input<'_>, ask: &Ask<'_>) -> Result<Imported, Problem> {
    let document = input.document()?;
    let mut found = Vec::new();
    find(document, "", None, &mut found);
    let (path, (options, standard)) = choose(&found, ask.choice, "instance")?;
    let mut imported = Imported { entry: Some(path.clone()), ..Imported::default() };
    known_keys(options, RETRY_KEYS, path)?;
    let http = standard.is_some() || path.ends_with("Retry");
    let field = |key: &str| format!("{path}.{key}");
    let retries = match options.get("MaxRetryAttempts") {
        None => 3,
        Some(Node { value: Value::Integer(n), .. }) if *n >= 1 => *n,
        Some(node) => return Err(expected(node, &field("MaxRetryAttempts"), "a whole number of retries ≥ 1")),
    };
    if retries == i64::from(i32::MAX) {
        imported.warn(None, &field("MaxRetryAttempts"), "int.MaxValue: Polly retries for ever");
    } else {
        imported.set("max_attempts", retries + 1, format!("{} = {retries}: retries, so {} attempts", field("MaxRetryAttempts"), retries + 1));
        super::counts_retries(&mut imported, options.get("MaxRetryAttempts").map(|n| n.at), &field("MaxRetryAttempts"), retries);
    }
    let delay = match options.get("Delay") {
        None => Duration::from_secs(2),
        Some(node) => timespan(node, &field("Delay"), &mut imported)?,
    };
    let max_delay = options.get("MaxDelay").map(|node| timespan(node, &field("MaxDelay"), &mut imported)).transpose()?;
    let backoff = match options.get("BackoffType") {
        None => if http { "Exponential" } else { "Constant" },
        Some(Node { value: Value::Text(text), .. }) if ["Constant", "Linear", "Exponential"].contains(&text.as_str()) => text.as_str(),
        Some(node) => return Err(expected(node, &field("BackoffType"), "Constant, Linear or Exponential")),
    };
    let jitter = match options.get("UseJitter") {
        None => http,
        Some(Node { value: Value::Bool(b), .. }) => *b,
        Some(node) => return Err(expected(node, &field("UseJitter"), "true or false")),
    };
    if http && (options.get("BackoffType").is_none() || options.get("UseJitter").is_none()) {
        imported.warn(None, path, "the HTTP resilience options default to Exponential with jitter (Polly's core options: Constant, no jitter); set BackoffType and UseJitter to be sure");
    }
    let longest = match backoff {
        "Constant" => delay,
        "Linear" => delay * u32::try_from(retries.min(1000)).unwrap_or(1000),
        _ => scaled(delay, 2f64.powi(i32::try_from((retries - 1).clamp(0, 60)).unwrap_or(60))),
    };
    // Past 2^64 ns (about 584 years) the lab has no duration; Polly's own sleep overflows there too and then waits
    // TimeSpan.MaxValue, in effect for ever (App-vNext/Polly#1866), so the lab's longest sleep stands in for it.
    if max_delay.is_none() && longest >= LONGEST_SLEEP {
        imported.warn(None, &field("MaxDelay"), "unset, and the waits double without end: past 584 years (the longest the lab can sleep) Polly's delay overflows and it waits for ever (Polly#1866); the cap is 584 years, set MaxDelay to bound the waits");
    }
    let cap = max_delay.unwrap_or(longest).max(delay);
    let cap_from = max_delay.map_or_else(|| "MaxDelay unset: the longest wait the retries reach".to_owned(), |max| format!("{} {max:?}", field("MaxDelay")));
    let delay_from = options.get("Delay").map_or_else(|| "Delay unset: 2s".to_owned(), |_| format!("{} {delay:?}", field("Delay")));
    if delay.is_zero() {
        imported.set("strategy", "none", format!("{delay_from}: Polly waits nothing whatever the backoff"));
    } else {
        match (backoff, jitter) {
            ("Exponential", true) => {
                imported.set("strategy", "polly-v2", "Exponential with jitter: Polly's DecorrelatedJitterBackoffV2");
                imported.set("base", lab_duration(delay), delay_from);
            }
            ("Exponential", false) => {
                imported.set("strategy", "exponential-from-base", "Exponential: 2^a · Delay");
                imported.set("base", lab_duration(delay), delay_from);
                imported.set("multiplier", 2.0, "Polly doubles");
            }
            ("Linear", false) => {
                imported.set("strategy", "linear", "Linear: (a + 1) · Delay");
                imported.set("base", lab_duration(delay), delay_from);
            }
            ("Constant", false) => {
                imported.set("strategy", "constant", "Constant: Delay");
                imported.set("base", lab_duration(delay), delay_from);
            }
            ("Constant", true) => {
                // U[0.75 d, 1.25 d) is proportional jitter from 0.75 d with q = 2/3.
                imported.set("strategy", "proportional-jitter", "Constant with jitter: uniform over ±25% of Delay");
                imported.set("base", lab_duration(scaled(delay, 0.75)), format!("{delay_from} × 0.75"));
                imported.set("jitter_fraction", 2.0 / 3.0, "±25% as a spread of 2/3 above 0.75 · Delay");
                imported.set("multiplier", 1.0, "Constant");
            }
            _ => {
                imported.set("strategy", "linear", "Linear: (a + 1) · Delay; its ±25% jitter is left out");
                imported.set("base", lab_duration(delay), delay_from);
                imported.warn(options.get("UseJitter").map(|n| n.at), &field("UseJitter"), "Linear with jitter spreads each wait over ±25%; the lab has no linear strategy with jitter, so the waits are the unjittered ones");
            }
        }
        imported.set("cap", lab_duration(cap), cap_from);
    }
    match options.get("ShouldRetryAfterHeader").map(|n| &n.value) {
        Some(Value::Bool(false)) => imported.set("retry_after", "ignore", field("ShouldRetryAfterHeader")),
        _ if http => imported.set("retry_after", "honour", "the HTTP retry honours Retry-After, beyond MaxDelay"),
        _ => imported.set("retry_after", "ignore", "Polly's core retry ignores Retry-After"),
    }
    if let Some(standard) = standard {
        for (key, lab_key, what) in [("AttemptTimeout", "timeout", "each attempt"), ("TotalRequestTimeout", "deadline", "the whole call")] {
            let timeout = match standard.get(key).and_then(|t| t.get("Timeout")) {
                Some(node) => timespan(node, &format!("{key}.Timeout"), &mut imported)?,
                None => Duration::from_secs(if key == "AttemptTimeout" { 10 } else { 30 }),
            };
            imported.set(lab_key, lab_duration(timeout), format!("{key}.Timeout {timeout:?}: {what}"));
        }
        imported.set("retry_on", vec![toml::Value::from("5xx"), toml::Value::from("408"), toml::Value::from("429"), toml::Value::from("timeout"), toml::Value::from("reset")], "the HTTP retry's ShouldHandle: 5xx, 408, 429, timeouts and connection failures");
        if standard.get("CircuitBreaker").is_some() {
            imported.warn(None, "CircuitBreaker", "the standard handler's circuit breaker stops every call, not only retries: the lab's limiters limit retries");
        }
    }
    Ok(imported)
}

/// The most days a .NET TimeSpan holds (TimeSpan.MaxValue is 10,675,199 days and a few hours); .NET refuses more.
const TIMESPAN_MAX_DAYS: u64 = 10_675_199;

/// A .NET TimeSpan as `TimeSpan.Parse` reads it: `[d.]hh:mm[:ss[.fff]]`, or a bare number of **days**.
fn timespan(node: &Node, field: &str, imported: &mut Imported) -> Result<Duration, Problem> {
    let bad = || Problem::new(Some(node.at), field, format!("expected a TimeSpan like \"00:00:02\", found {}", shown(node)));
    let text = match &node.value {
        Value::Text(text) => text.trim(),
        _ => return Err(bad()),
    };
    let (days, clock) = match text.split_once(':') {
        None => {
            let days: u64 = text.parse().ok().filter(|days| *days <= TIMESPAN_MAX_DAYS).ok_or_else(bad)?;
            imported.warn(Some(node.at), field, format!("{text:?} is {days} day(s): TimeSpan reads a bare number as days; write \"00:00:{text:0>2}\" for seconds"));
            return duration_from_secs(days as f64 * 86_400.0).ok_or_else(|| too_long(Some(node.at), field, &shown(node)));
        }
        Some(_) => match text.split_once('.') {
            Some((days, rest)) if !days.contains(':') => {
                (days.parse::<u64>().ok().filter(|days| *days <= TIMESPAN_MAX_DAYS).ok_or_else(bad)?, rest)
            }
            _ => (0, text),
        },
    };
    let parts: Vec<&str> = clock.split(':').collect();
    let number = |part: &str| part.parse::<f64>().ok().filter(|x| *x >= 0.0).ok_or_else(bad);
    let (hours, minutes, secs) = match parts.as_slice() {
        [h, m] => (number(h)?, number(m)?, 0.0),
        [h, m, s] => (number(h)?, number(m)?, number(s)?),
        _ => return Err(bad()),
    };
    if hours >= 24.0 || minutes >= 60.0 || secs >= 60.0 {
        return Err(bad());
    }
    duration_from_secs(days as f64 * 86_400.0 + hours * 3600.0 + minutes * 60.0 + secs)
        .ok_or_else(|| too_long(Some(node.at), field, &shown(node)))
}
