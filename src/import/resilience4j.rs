//! Resilience4j retry, as Spring Boot binds it from YAML (`resilience4j.retry.instances.NAME`, with
//! `configs.NAME` templates). Sources: resilience4j 2.4 `CommonRetryConfigurationProperties` (the binding and its
//! merge rules), `RetryConfig` (defaults) and `IntervalFunction` (the waits).
//!
//! `maxAttempts` counts every attempt (default 3). The n-th retry waits `waitDuration` (500 ms), or with
//! `enableExponentialBackoff` waitDuration · m^(n−1) (m = `exponentialBackoffMultiplier`, 1.5 unset), capped by
//! `exponentialMaxWaitDuration`; `enableRandomizedWait` spreads each wait uniformly over ±`randomizedWaitFactor`
//! (0.5 unset) of itself. A uniform wait over [v(1 − f), v(1 + f)) is the lab's `proportional-jitter` from a base
//! of v(1 − f) with q = 2f/(1 − f), exactly; with a cap, which Resilience4j applies after the spread, it is
//! `proportional-jitter-capped`.

use std::time::Duration;

use super::doc::{Node, Value};
use super::{Ask, Format, expected, Imported, Input, Problem, choose, known_keys, lab_duration, shown};

pub(super) const FORMAT: Format = Format {
    name: "resilience4j",
    about: "Resilience4j retry instances as Spring Boot binds them (resilience4j.retry.instances)",
    entry: "instance",
    detect,
    near_miss: Some(near_miss),
    translate,
    consumers: &[],
    readings: &[],
};

const KEYS: &[&str] = &[
    "baseConfig",
    "maxAttempts",
    "waitDuration",
    "enableExponentialBackoff",
    "exponentialBackoffMultiplier",
    "exponentialMaxWaitDuration",
    "enableRandomizedWait",
    "randomizedWaitFactor",
    "retryExceptions",
    "ignoreExceptions",
    "retryExceptionPredicate",
    "resultPredicate",
    "intervalBiFunction",
    "failAfterMaxAttempts",
    "consumeResultBeforeRetryAttempt",
    "eventConsumerBufferSize",
    "writableStackTraceEnabled",
];

/// `max-attempts` → `maxAttempts`: Spring Boot's relaxed binding.
fn camel(key: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in key.chars() {
        match c {
            '-' | '_' => upper = true,
            c if upper => {
                out.extend(c.to_uppercase());
                upper = false;
            }
            c => out.push(c),
        }
    }
    out
}

fn retry_section(document: &Node) -> Option<&Node> {
    document.get("resilience4j").and_then(|r| r.get("retry"))
}

fn detect(input: &Input<'_>) -> bool {
    input.document().is_ok_and(|document| unflattened(document).is_ok_and(|document| retry_section(&document).is_some()))
}

/// A file with Resilience4j settings that is not read: two splits of one property, or no retry section.
fn near_miss(input: &Input<'_>) -> Option<Problem> {
    let document = input.document().ok()?;
    let Value::Map(entries) = &document.value else { return None };
    if !entries.iter().any(|(key, _, _)| key == "resilience4j" || key.starts_with("resilience4j.")) {
        return None;
    }
    match unflattened(document) {
        Err(problem) => Some(problem),
        Ok(document) => {
            let modules: Vec<String> = match document.get("resilience4j").map(|r| &r.value) {
                Some(Value::Map(modules)) => modules.iter().map(|(key, _, _)| key.clone()).collect(),
                _ => Vec::new(),
            };
            let message = format!(
                "it holds Resilience4j settings ({}) but no `resilience4j.retry` section, the only one that retries",
                modules.join(", ")
            );
            Some(Problem::new(None, "resilience4j", message))
        }
    }
}

/// The document as Spring Boot binds it: a YAML key holding dots is that many nested keys (`resilience4j.retry:`
/// is `resilience4j:` then `retry:`), any split of a path being the same property; a property given twice is
/// refused, since which one Spring keeps depends on the order it reads them in.
fn unflattened(document: &Node) -> Result<Node, Problem> {
    let Value::Map(entries) = &document.value else { return Ok(document.clone()) };
    let mut merged = Node { value: Value::Map(Vec::new()), at: document.at };
    for (key, at, value) in entries {
        let value = unflattened(value)?;
        let path: Vec<&str> = key.split('.').collect();
        insert(&mut merged, "", &path, *at, value)?;
    }
    Ok(merged)
}

/// Puts `value` at `path` under `node` (itself at the dotted path `trail`), merging mappings met on the way.
fn insert(node: &mut Node, trail: &str, path: &[&str], at: crate::error::LineCol, value: Node) -> Result<(), Problem> {
    let Value::Map(entries) = &mut node.value else { unreachable!("only mappings are descended into") };
    let (first, rest) = path.split_first().expect("a key has at least one part");
    let here = if trail.is_empty() { (*first).to_owned() } else { format!("{trail}.{first}") };
    let Some(index) = entries.iter().position(|(key, _, _)| key == first) else {
        let mut child = value;
        for part in rest.iter().rev() {
            child = Node { value: Value::Map(vec![((*part).to_owned(), at, child)]), at };
        }
        entries.push(((*first).to_owned(), at, child));
        return Ok(());
    };
    let existing = &mut entries[index].2;
    match (&existing.value, rest.is_empty(), value.value) {
        (Value::Map(_), true, Value::Map(more)) => {
            for (key, key_at, child) in more {
                insert(existing, &here, &[key.as_str()], key_at, child)?;
            }
            Ok(())
        }
        (Value::Map(_), false, value_kind) => insert(existing, &here, rest, at, Node { value: value_kind, at: value.at }),
        _ => {
            let full = if rest.is_empty() { here } else { format!("{here}.{}", rest.join(".")) };
            let message = format!(
                "`{full}` is given twice, under two splits of its dotted path; Spring Boot keeps one of them by the \
                 order it reads them: keep one"
            );
            Err(Problem::new(Some(at), &full, message))
        }
    }
}

/// A configuration's keys, by their camelCase names.
fn fields<'n>(node: &'n Node, field: &str) -> Result<Vec<(String, &'n Node)>, Problem> {
    let Value::Map(entries) = &node.value else {
        return Err(Problem::new(Some(node.at), field, format!("expected a mapping, found {}", node.kind())));
    };
    let mut out = Vec::new();
    for (key, at, value) in entries {
        let name = camel(key);
        if !KEYS.contains(&name.as_str()) {
            let message = format!("unknown field `{key}`; valid here: {}", KEYS.join(", "));
            return Err(Problem::new(Some(*at), &format!("{field}.{key}"), message));
        }
        if out.iter().any(|(seen, _)| *seen == name) {
            let message = format!(
                "`{key}` is `{name}` again under Spring Boot's relaxed binding (kebab-case, camelCase and underscores \
                 name one property); keep one"
            );
            return Err(Problem::new(Some(*at), &format!("{field}.{key}"), message));
        }
        out.push((name, value));
    }
    Ok(out)
}

fn translate(input: &Input<'_>, ask: &Ask<'_>) -> Result<Imported, Problem> {
    let document = &unflattened(input.document()?)?;
    let section = retry_section(document).ok_or_else(|| Problem::new(None, "resilience4j.retry", "missing"))?;
    known_keys(section, &["configs", "instances", "backends"], "resilience4j.retry")?;
    let named = |key: &str| -> Vec<(String, &Node)> {
        match section.get(key).map(|n| &n.value) {
            Some(Value::Map(entries)) => entries.iter().map(|(name, _, node)| (name.clone(), node)).collect(),
            _ => Vec::new(),
        }
    };
    let configs = named("configs");
    let mut instances = named("instances");
    instances.extend(named("backends"));
    let (name, instance) = choose(&instances, ask.choice, "instance")?;
    let mut imported = Imported { entry: Some(name.clone()), ..Imported::default() };
    let own = fields(instance, &format!("instances.{name}"))?;
    // The template: baseConfig's, else configs.default's (merged into every instance), else none.
    let base_name = own.iter().find(|(key, _)| key == "baseConfig").map(|(_, node)| node);
    let template = match base_name {
        Some(node) => {
            let Value::Text(wanted) = &node.value else { return Err(expected(node, "baseConfig", "a config's name")) };
            let found = configs.iter().find(|(config, _)| config.as_str() == wanted.as_str()).ok_or_else(|| {
                Problem::new(Some(node.at), &format!("instances.{name}.baseConfig"), format!("no config {wanted:?} under resilience4j.retry.configs"))
            })?;
            Some((found.0.clone(), fields(found.1, &format!("configs.{wanted}"))?))
        }
        None => match configs.iter().find(|(config, _)| config == "default") {
            Some((_, node)) => Some(("default".to_owned(), fields(node, "configs.default")?)),
            None => None,
        },
    };
    let get = |key: &str| -> Option<(&Node, String)> {
        own.iter()
            .find(|(k, _)| k == key)
            .map(|(_, node)| (*node, format!("instances.{name}.{key}")))
            .or_else(|| template.as_ref().and_then(|(config, keys)| keys.iter().find(|(k, _)| k == key).map(|(_, node)| (*node, format!("configs.{config}.{key}")))))
    };
    let flag = |key: &str| -> Result<bool, Problem> {
        match get(key) {
            None => Ok(false),
            Some((Node { value: Value::Bool(b), .. }, _)) => Ok(*b),
            Some((node, field)) => Err(expected(node, &field, "true or false")),
        }
    };
    let number = |key: &str| -> Result<Option<(f64, String)>, Problem> {
        match get(key) {
            None => Ok(None),
            Some((Node { value: Value::Integer(n), .. }, field)) => Ok(Some((*n as f64, field))),
            Some((Node { value: Value::Real(x), .. }, field)) => Ok(Some((*x, field))),
            Some((node, field)) => Err(expected(node, &field, "a number")),
        }
    };
    let attempts = match number("maxAttempts")? {
        None => 3,
        Some((n, field)) if n >= 1.0 && n.fract() == 0.0 => {
            imported.set("max_attempts", n as i64, format!("{field} = {n}: every attempt, the first included"));
            n as i64
        }
        Some((0.0, field)) => {
            imported.warn(get("maxAttempts").map(|(node, _)| node.at), &field, "0 is ignored: Resilience4j keeps 3 attempts");
            3
        }
        Some((_, field)) => return Err(expected(get("maxAttempts").map(|(n, _)| n).unwrap_or(instance), &field, "a whole number ≥ 1")),
    };
    if get("maxAttempts").is_none_or(|(n, _)| matches!(n.value, Value::Integer(0))) {
        imported.set("max_attempts", attempts, "maxAttempts unset: Resilience4j's 3");
    }
    let wait_node = get("waitDuration");
    let wait = match &wait_node {
        Some((node, field)) => spring_duration(node, field)?,
        None => Duration::from_millis(500),
    };
    let exponential = flag("enableExponentialBackoff")?;
    let randomized = flag("enableRandomizedWait")?;
    let multiplier = number("exponentialBackoffMultiplier")?;
    let factor = number("randomizedWaitFactor")?;
    if (exponential || randomized) && wait_node.is_none() {
        imported.warn(None, "waitDuration", "unset: Resilience4j builds its interval function only when waitDuration is set, so the waits stay a fixed 500ms");
    }
    let exponential = exponential && wait_node.is_some();
    let randomized = randomized && wait_node.is_some();
    let m = if exponential { multiplier.as_ref().map_or(1.5, |(m, _)| *m) } else { 1.0 };
    if m <= 0.0 {
        return Err(expected(get("exponentialBackoffMultiplier").map(|(n, _)| n).unwrap_or(instance), "exponentialBackoffMultiplier", "a number > 0"));
    }
    let f = if randomized { factor.as_ref().map_or(0.5, |(f, _)| *f) } else { 0.0 };
    if !(0.0..1.0).contains(&f) {
        return Err(expected(get("randomizedWaitFactor").map(|(n, _)| n).unwrap_or(instance), "randomizedWaitFactor", "a number from 0 to below 1"));
    }
    let max_wait = match get("exponentialMaxWaitDuration") {
        Some((node, field)) if exponential && multiplier.is_some() && (!randomized || factor.is_some()) => Some((spring_duration(node, &field)?, field)),
        Some((node, field)) => {
            imported.warn(Some(node.at), &field, "ignored: Resilience4j applies it only with exponentialBackoffMultiplier set (and randomizedWaitFactor, with randomized waits)");
            None
        }
        None => None,
    };
    // Without a cap the waits reach wait · m^(attempts − 2) at the last retry: that is the cap the lab needs.
    let longest = super::scaled(wait, m.max(1.0).powi((attempts - 2).clamp(0, 60) as i32));
    if max_wait.is_none() {
        super::warn_if_capped_at_longest(&mut imported, longest, &format!("instances.{name}.exponentialMaxWaitDuration"));
    }
    let cap = max_wait.as_ref().map_or(longest, |(cap, _)| *cap).max(super::scaled(wait, 1.0 - f));
    let cap_from = max_wait.as_ref().map_or_else(|| "no cap: the longest wait the attempts reach".to_owned(), |(cap, field)| format!("{field} {cap:?}"));
    let wait_from = wait_node.as_ref().map_or_else(|| "waitDuration unset: 500ms".to_owned(), |(_, field)| format!("{field} {wait:?}"));
    if randomized {
        // Resilience4j spreads first and caps after: a wait past the cap is exactly the cap.
        let (strategy, how) = match max_wait {
            Some(_) => ("proportional-jitter-capped", "enableRandomizedWait: uniform over ±randomizedWaitFactor of each wait, then capped"),
            None => ("proportional-jitter", "enableRandomizedWait: uniform over ±randomizedWaitFactor of each wait"),
        };
        imported.set("strategy", strategy, how);
        imported.set("base", lab_duration(super::scaled(wait, 1.0 - f)), format!("{wait_from} × (1 − {f})"));
        imported.set("jitter_fraction", 2.0 * f / (1.0 - f), format!("2f/(1 − f) with randomizedWaitFactor f = {f}"));
    } else {
        imported.set("strategy", if exponential { "exponential-from-base" } else { "constant" }, if exponential { "enableExponentialBackoff" } else { "fixed waits" });
        imported.set("base", lab_duration(wait), wait_from);
    }
    imported.set("cap", lab_duration(cap), cap_from);
    if exponential || randomized {
        imported.set("multiplier", m, multiplier.map_or_else(|| "exponentialBackoffMultiplier unset: 1.5".to_owned(), |(m, field)| format!("{field} {m}")));
    }
    imported.warn(None, "waitDuration", "Resilience4j truncates every wait to whole milliseconds, step by step; the lab's time is continuous");
    if get("retryExceptions").is_some() || get("ignoreExceptions").is_some() || get("resultPredicate").is_some() {
        imported.warn(None, "retryExceptions", "which failures are retried is decided by exception classes the lab cannot see: the server model's retry_on defaults apply");
    }
    Ok(imported)
}

/// A Spring Boot duration: `500ms`, `10s`, `2m`, ISO-8601 `PT0.5S`, or a bare number of milliseconds.
fn spring_duration(node: &Node, field: &str) -> Result<Duration, Problem> {
    let bad = || Problem::new(Some(node.at), field, format!("expected a duration like \"500ms\", \"PT0.5S\" or a number of ms, found {}", shown(node)));
    let text = match &node.value {
        Value::Integer(n) if *n >= 0 => return Ok(Duration::from_millis(*n as u64)),
        Value::Text(text) => text.trim(),
        _ => return Err(bad()),
    };
    if let Some(iso) = text.strip_prefix("PT").or_else(|| text.strip_prefix("pt")) {
        let seconds = iso.strip_suffix(['S', 's']).and_then(|n| n.parse::<f64>().ok()).filter(|s| *s >= 0.0).ok_or_else(bad)?;
        return super::duration_from_secs(seconds).ok_or_else(|| super::too_long(Some(node.at), field, &shown(node)));
    }
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let amount: u64 = text[..split].parse().map_err(|_| bad())?;
    let unit = match &text[split..] {
        "" | "ms" => Duration::from_millis(1),
        "ns" => Duration::from_nanos(1),
        "us" => Duration::from_micros(1),
        "s" => Duration::from_secs(1),
        "m" => Duration::from_secs(60),
        "h" => Duration::from_secs(3600),
        "d" => Duration::from_secs(86_400),
        _ => return Err(bad()),
    };
    Ok(unit * u32::try_from(amount).map_err(|_| bad())?)
}
