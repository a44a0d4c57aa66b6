//! Spring's `@Retryable` in Java (or Kotlin) source: Spring Retry's (`maxAttempts`, `backoff = @Backoff(…)`) and
//! Spring Framework 7's (`maxRetries`, `delay`, `jitter`, `multiplier`, `maxDelay`). Sources: spring-retry 2.0
//! `Retryable`, `Backoff`, `BackOffPolicyBuilder` and its back-off policies; spring-framework 7.1
//! `resilience.annotation.Retryable` and `util.backoff.ExponentialBackOff`.
//!
//! Spring Retry counts every attempt (3); its waits are fixed (`delay`, 1000 ms), uniform in [delay, maxDelay)
//! without a multiplier, or exponential from `delay` with a multiplier, capped by `maxDelay` only when it exceeds
//! `delay`, else at 30 s. Spring 7 counts retries (3) and waits delay · multiplier^(n−1) up to `maxDelay`, spread by
//! `jitter` but never below `delay`.

use std::time::Duration;

use super::code::without_comments;
use super::{Ask, Format, Imported, Input, Problem, choose, lab_duration};
use crate::error::LineCol;

pub(super) const FORMAT: Format = Format {
    name: "spring",
    about: "Spring Retry @Retryable/@Backoff and Spring Framework 7 @Retryable annotations in Java or Kotlin source",
    entry: "method",
    detect,
    near_miss: None,
    translate,
    consumers: &[],
    readings: &[],
};

/// Spring Retry caps exponential waits here when `maxDelay` does not exceed `delay` (ExponentialBackOffPolicy).
const DEFAULT_MAX_INTERVAL: Duration = Duration::from_secs(30);
const SPRING7_KEYS: &[&str] = &["maxRetries", "maxRetriesString", "delay", "delayString", "jitter", "jitterString", "multiplier", "multiplierString", "maxDelay", "maxDelayString", "timeout", "timeoutString", "timeUnit", "includes", "excludes", "value", "predicate"];
const RETRY_KEYS: &[&str] = &["maxAttempts", "maxAttemptsExpression", "backoff", "value", "include", "exclude", "retryFor", "noRetryFor", "notRecoverable", "label", "stateful", "recover", "listeners", "interceptor", "exceptionExpression"];
const BACKOFF_KEYS: &[&str] = &["delay", "value", "maxDelay", "multiplier", "random", "delayExpression", "maxDelayExpression", "multiplierExpression", "randomExpression"];

/// One annotation: its attributes as written (name, value text, where), and where it is.
struct Annotation {
    attributes: Vec<(String, String, LineCol)>,
    at: LineCol,
}

/// The text between `(` at `open` and its matching `)`.
fn enclosed(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    let mut quoted = false;
    for (i, c) in text[open..].char_indices() {
        match c {
            '"' => quoted = !quoted,
            '(' | '{' if !quoted => depth += 1,
            ')' | '}' if !quoted => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `name = value` pairs at the top level of an attribute list (a bare value is `value`).
fn attributes(text: &str, start: usize, whole: &str) -> Vec<(String, String, LineCol)> {
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut from) = (0, false, 0);
    let body = &whole[start..start + text.len()];
    for (i, c) in body.char_indices().chain(std::iter::once((body.len(), ','))) {
        match c {
            '"' => quoted = !quoted,
            '(' | '{' if !quoted => depth += 1,
            ')' | '}' if !quoted => depth -= 1,
            ',' if depth == 0 && !quoted => {
                let item = &body[from..i];
                let lead = item.len() - item.trim_start().len();
                let at = LineCol::of_offset(whole, start + from + lead);
                match item.split_once('=') {
                    Some((name, value)) if !item.trim_start().starts_with('"') => out.push((name.trim().to_owned(), value.trim().to_owned(), at)),
                    _ if !item.trim().is_empty() => out.push(("value".to_owned(), item.trim().to_owned(), at)),
                    _ => {}
                }
                from = i + 1;
            }
            _ => {}
        }
    }
    out
}

fn annotations(text: &str) -> Vec<(String, Annotation)> {
    let mut found = Vec::new();
    let mut rest = 0;
    while let Some(found_at) = text[rest..].find("Retryable").map(|i| i + rest) {
        let after = found_at + "Retryable".len();
        // `@Retryable`, or a qualified `@org.springframework.….Retryable`; not an import line.
        let name_start = text[..found_at].rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')).map_or(0, |i| i);
        let is_annotation = text[name_start..].starts_with('@')
            && (found_at == name_start + 1 || text[..found_at].ends_with('.'))
            && !text[after..].starts_with(|c: char| c.is_alphanumeric() || c == '_');
        if !is_annotation {
            rest = after;
            continue;
        }
        let offset = name_start;
        let (attributes, end) = match text[after..].trim_start().starts_with('(') {
            true => {
                let open = after + text[after..].find('(').unwrap_or(0);
                let close = enclosed(text, open).unwrap_or(text.len() - 1);
                (attributes(&text[open + 1..close], open + 1, text), close + 1)
            }
            false => (Vec::new(), after),
        };
        // The method it annotates: the identifier before the next `(` after the annotation.
        let name = text[end..]
            .find('(')
            .map(|paren| text[end..end + paren].trim_end())
            .and_then(|head| head.rsplit(|c: char| !(c.is_alphanumeric() || c == '_')).next())
            .filter(|word| !word.is_empty())
            .map_or_else(|| format!("line {}", LineCol::of_offset(text, offset).line), str::to_owned);
        found.push((name, Annotation { attributes, at: LineCol::of_offset(text, offset) }));
        rest = end;
    }
    found
}

fn detect(input: &Input<'_>) -> bool {
    !annotations(&without_comments(input.text)).is_empty()
}

fn translate(input: &Input<'_>, ask: &Ask<'_>) -> Result<Imported, Problem> {
    let code = without_comments(input.text);
    let found = annotations(&code);
    let (method, annotation) = choose(&found, ask.choice, "method")?;
    let mut imported = Imported { entry: Some(method.clone()), ..Imported::default() };
    let has = |key: &str| annotation.attributes.iter().any(|(name, _, _)| name == key);
    let spring7 = SPRING7_KEYS.iter().any(|key| *key != "value" && has(key))
        || (!has("maxAttempts") && !has("backoff") && code.contains("org.springframework.resilience.annotation.Retryable"));
    if spring7 {
        framework7(annotation, &mut imported)?;
    } else {
        spring_retry(annotation, &mut imported)?;
    }
    if code.contains("Mono<") || code.contains("Flux<") {
        imported.warn(Some(annotation.at), "@Retryable", "on a method returning Mono or Flux, Spring 7 retries with Reactor's Retry.backoff, a different formula");
    }
    Ok(imported)
}

/// A number of milliseconds as a duration, refused past the lab's longest sleep.
fn millis_duration(ms: f64, at: Option<LineCol>, field: &str) -> Result<Duration, Problem> {
    super::duration_from_secs(ms / 1000.0).ok_or_else(|| super::too_long(at, field, &format!("{ms:e} ms")))
}

fn number(value: &str, at: LineCol, field: &str) -> Result<f64, Problem> {
    value
        .trim_end_matches(['L', 'l', 'D', 'd', 'F', 'f'])
        .replace('_', "")
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| Problem::new(Some(at), field, format!("expected a number ≥ 0, found {value:?} (expressions and placeholders are not read)")))
}

fn spring_retry(annotation: &Annotation, imported: &mut Imported) -> Result<(), Problem> {
    let get = |list: &[(String, String, LineCol)], key: &str| list.iter().find(|(name, _, _)| name == key).cloned();
    for (name, _, at) in &annotation.attributes {
        if !RETRY_KEYS.contains(&name.as_str()) {
            return Err(Problem::new(Some(*at), &format!("@Retryable.{name}"), format!("unknown attribute `{name}`; Spring Retry's @Retryable has {}", RETRY_KEYS.join(", "))));
        }
    }
    let attempts = match get(&annotation.attributes, "maxAttempts") {
        None => 3,
        Some((_, value, at)) => number(&value, at, "@Retryable.maxAttempts")? as i64,
    };
    imported.set("max_attempts", attempts.max(1), format!("@Retryable.maxAttempts {attempts}: every attempt, the first included"));
    let backoff = match get(&annotation.attributes, "backoff") {
        None => Vec::new(),
        Some((_, value, at)) => {
            let inner = value.trim().strip_prefix("@Backoff").unwrap_or("").trim();
            let inner = inner.strip_prefix('(').and_then(|v| v.strip_suffix(')')).unwrap_or("");
            let list: Vec<(String, String, LineCol)> = attributes(inner, 0, inner).into_iter().map(|(n, v, _)| (n, v, at)).collect();
            for (name, _, at) in &list {
                if !BACKOFF_KEYS.contains(&name.as_str()) {
                    return Err(Problem::new(Some(*at), &format!("@Backoff.{name}"), format!("unknown attribute `{name}`; @Backoff has {}", BACKOFF_KEYS.join(", "))));
                }
            }
            list
        }
    };
    let millis = |key: &str| -> Result<Option<f64>, Problem> { get(&backoff, key).map(|(_, v, at)| number(&v, at, &format!("@Backoff.{key}"))).transpose() };
    let delay_ms = match (millis("delay")?, millis("value")?) {
        (Some(delay), _) if delay > 0.0 => delay,
        (_, Some(value)) if value > 0.0 => value,
        _ => 1000.0,
    };
    let max_ms = millis("maxDelay")?.unwrap_or(0.0);
    let multiplier = millis("multiplier")?.unwrap_or(0.0);
    let random = get(&backoff, "random").is_some_and(|(_, v, _)| v == "true");
    let delay = millis_duration(delay_ms, get(&backoff, "delay").or_else(|| get(&backoff, "value")).map(|(_, _, at)| at), "@Backoff.delay")?;
    let from = format!("@Backoff delay {delay_ms} ms");
    if multiplier > 0.0 {
        let m = multiplier.max(1.0);
        if multiplier <= 1.0 {
            imported.warn(None, "@Backoff.multiplier", format!("{multiplier} is raised to 1: the waits stay fixed"));
        }
        let cap = if max_ms > delay_ms { millis_duration(max_ms, get(&backoff, "maxDelay").map(|(_, _, at)| at), "@Backoff.maxDelay")? } else { DEFAULT_MAX_INTERVAL };
        if max_ms <= delay_ms {
            imported.warn(None, "@Backoff.maxDelay", "not above delay, so Spring Retry caps the exponential waits at 30s");
        }
        if random {
            imported.set("strategy", "proportional-jitter-capped", "@Backoff random with a multiplier: each wait stretched by U(1, multiplier), then capped");
            imported.set("jitter_fraction", m - 1.0, format!("multiplier − 1 = {}", m - 1.0));
        } else {
            imported.set("strategy", "exponential-from-base", "@Backoff multiplier: delay · multiplier^(n−1), capped");
        }
        imported.set("base", lab_duration(delay), from);
        imported.set("multiplier", m, format!("@Backoff multiplier {multiplier}"));
        imported.set("cap", lab_duration(cap.max(delay)), if max_ms > delay_ms { format!("@Backoff maxDelay {max_ms} ms") } else { "Spring Retry's 30s".to_owned() });
    } else if max_ms > delay_ms {
        imported.set("strategy", "proportional-jitter", "@Backoff delay and maxDelay: uniform in [delay, maxDelay)");
        imported.set("base", lab_duration(delay), from);
        imported.set("cap", lab_duration(delay), "the waits do not grow");
        imported.set("multiplier", 1.0, "no multiplier");
        imported.set("jitter_fraction", (max_ms - delay_ms) / delay_ms, format!("(maxDelay − delay) / delay with maxDelay {max_ms} ms"));
    } else {
        imported.set("strategy", "constant", "@Backoff delay: fixed waits");
        imported.set("base", lab_duration(delay), from);
        imported.set("cap", lab_duration(delay), "the waits do not grow");
    }
    imported.warn(None, "@Retryable", "which exceptions are retried (retryFor, noRetryFor) is not something the lab can see: the server model's retry_on defaults apply");
    Ok(())
}

fn framework7(annotation: &Annotation, imported: &mut Imported) -> Result<(), Problem> {
    for (name, _, at) in &annotation.attributes {
        if !SPRING7_KEYS.contains(&name.as_str()) {
            return Err(Problem::new(Some(*at), &format!("@Retryable.{name}"), format!("unknown attribute `{name}`; Spring 7's @Retryable has {}", SPRING7_KEYS.join(", "))));
        }
        if name.ends_with("String") {
            imported.warn(Some(*at), &format!("@Retryable.{name}"), "a string form (placeholders, \"500ms\") is not read; its default is used");
        }
    }
    let get = |key: &str| annotation.attributes.iter().find(|(name, _, _)| name == key);
    let unit_ms = match get("timeUnit").map(|(_, v, _)| v.rsplit('.').next().unwrap_or("")) {
        None | Some("MILLISECONDS") => 1.0,
        Some("SECONDS") => 1000.0,
        Some("MINUTES") => 60_000.0,
        Some("MICROSECONDS") => 0.001,
        Some("NANOSECONDS") => 0.000_001,
        Some(other) => return Err(Problem::new(get("timeUnit").map(|(_, _, at)| *at), "@Retryable.timeUnit", format!("unknown TimeUnit {other}"))),
    };
    let read = |key: &str, default: f64| -> Result<f64, Problem> { get(key).map_or(Ok(default), |(_, v, at)| number(v, *at, &format!("@Retryable.{key}"))) };
    let retries = read("maxRetries", 3.0)? as i64;
    imported.set("max_attempts", retries + 1, format!("@Retryable.maxRetries {retries}: retries, so {} attempts", retries + 1));
    super::counts_retries(imported, get("maxRetries").map(|(_, _, at)| *at), "@Retryable.maxRetries", retries);
    let delay_ms = read("delay", 1000.0 / unit_ms)? * unit_ms;
    let multiplier = read("multiplier", 1.0)?;
    if multiplier < 1.0 {
        return Err(Problem::new(get("multiplier").map(|(_, _, at)| *at), "@Retryable.multiplier", "must be at least 1 (Spring refuses smaller)"));
    }
    let jitter_ms = read("jitter", 0.0)? * unit_ms;
    let delay = millis_duration(delay_ms, get("delay").map(|(_, _, at)| *at), "@Retryable.delay")?;
    let longest = super::scaled(delay, multiplier.powi(i32::try_from((retries - 1).clamp(0, 60)).unwrap_or(60)));
    let cap = match get("maxDelay") {
        Some((_, v, at)) => millis_duration(number(v, *at, "@Retryable.maxDelay")? * unit_ms, Some(*at), "@Retryable.maxDelay")?,
        None => {
            super::warn_if_capped_at_longest(imported, longest, "@Retryable.maxDelay");
            longest
        }
    };
    if jitter_ms > 0.0 && delay_ms > 0.0 {
        imported.set("strategy", "proportional-jitter", "delay · multiplier^(n−1) with jitter, never below delay");
        imported.set("jitter_fraction", jitter_ms / delay_ms, format!("jitter {jitter_ms} ms over delay {delay_ms} ms"));
        imported.warn(get("jitter").map(|(_, _, at)| *at), "@Retryable.jitter", "Spring spreads each wait both ways (never below delay); the lab spreads it upward only, by the same proportion");
    } else {
        imported.set("strategy", "exponential-from-base", "delay · multiplier^(n−1), capped at maxDelay");
    }
    imported.set("base", lab_duration(delay.max(Duration::from_millis(1))), format!("@Retryable.delay {delay_ms} ms"));
    imported.set("multiplier", multiplier, format!("@Retryable.multiplier {multiplier}"));
    imported.set("cap", lab_duration(cap.max(delay).max(Duration::from_millis(1))), get("maxDelay").map_or_else(|| "maxDelay unset: the longest wait reached".to_owned(), |(_, v, _)| format!("@Retryable.maxDelay {v}")));
    let timeout_ms = read("timeout", 0.0)? * unit_ms;
    if timeout_ms > 0.0 {
        imported.set("deadline", lab_duration(millis_duration(timeout_ms, get("timeout").map(|(_, _, at)| *at), "@Retryable.timeout")?), "@Retryable.timeout: the whole call, waits included");
    }
    Ok(())
}
