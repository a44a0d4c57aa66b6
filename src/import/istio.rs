//! Istio (Kubernetes YAML, one or more documents): a VirtualService HTTP route's `retries` and `timeout`, and the
//! DestinationRule of its destination (`trafficPolicy.retryBudget`, `connectionPool.http.maxRetries`).
//! Sources: istio/api `networking/v1alpha3/virtual_service.proto` (HTTPRetry) and `destination_rule.proto`
//! (RetryBudget, 1.27+), and how istio/istio turns them into Envoy's retry policy
//! (`pilot/pkg/networking/core/route/retry/retry.go`, ConvertPolicy).
//!
//! Istio hands `attempts` (retries, not attempts) to Envoy's `num_retries`, `backoff` to its base interval (the cap
//! is Envoy's 10 × base), and `retryOn` to its `retry_on` (bare status codes become retriable status codes); the
//! backoff and conditions are then Envoy's (src/import/envoy.rs). Without a `retries` block a route gets Istio's
//! default policy: 2 retries on connect-failure, refused-stream, unavailable and cancelled. A `retries` block
//! without `attempts` (or with 0) turns retries off. Istio lifts Envoy's limit of 3 retries at once unless a
//! DestinationRule sets a retry budget or `maxRetries`.

use std::time::Duration;

use super::doc::{Node, Value};
use super::envoy::{READINGS, outcomes_of};
use super::spelling::{OnBoth, lower_camel, respell};
use super::versions::{ISTIO, ISTIO_NO_503_BY_DEFAULT};
use crate::error::LineCol;
use super::{Ask, Format, expected, text, Imported, Input, Problem, choose, known_keys, lab_duration, shown};

pub(super) const FORMAT: Format = Format {
    name: "istio",
    about: "Istio VirtualService http retries and timeout, with the DestinationRule's retry budget",
    entry: "route",
    detect,
    near_miss: None,
    translate,
    consumers: &[&ISTIO],
    readings: READINGS,
};

/// The VirtualService and DestinationRule fields the translation reads, as Istio spells them; jsonpb also reads
/// each by its proto name (`per_try_timeout`), and keeps the camelCase one when a file gives both.
const FIELDS: &[&str] = &[
    "attempts",
    "perTryTimeout",
    "retryOn",
    "retryRemoteLocalities",
    "retryIgnorePreviousHosts",
    "trafficPolicy",
    "retryBudget",
    "minRetryConcurrency",
    "budgetInterval",
    "connectionPool",
    "maxRetries",
];

const RETRY_KEYS: &[&str] = &["attempts", "perTryTimeout", "retryOn", "retryRemoteLocalities", "retryIgnorePreviousHosts", "backoff"];
/// Istio's default policy when a route has no `retries` block, and the conditions a block without `retryOn`
/// keeps (retry.go, DefaultPolicy): before 1.24 `retriable-status-codes` also held 503.
const DEFAULT_RETRIES: i64 = 2;
const DEFAULT_RETRY_ON: &str = "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes";
/// Envoy's base interval, which Istio's `backoff` replaces; the cap is ten times the base.
const DEFAULT_BASE: Duration = Duration::from_millis(25);

fn kind_of(document: &Node) -> Option<&str> {
    match (document.get("kind").map(|n| &n.value), document.get("apiVersion").map(|n| &n.value)) {
        (Some(Value::Text(kind)), Some(Value::Text(api))) if api.contains("istio.io") => Some(kind.as_str()),
        _ => None,
    }
}


fn detect(input: &Input<'_>) -> bool {
    input.documents().is_ok_and(|documents| documents.iter().any(|d| kind_of(d) == Some("VirtualService")))
}


fn translate(input: &Input<'_>, ask: &Ask<'_>) -> Result<Imported, Problem> {
    let mut documents = input.documents()?.to_vec();
    for document in &mut documents {
        respell(document, FIELDS, lower_camel, OnBoth::KeepCanonical, "Istio")?;
    }
    let documents = documents.as_slice();
    let mut routes = Vec::new();
    for service in documents.iter().filter(|d| kind_of(d) == Some("VirtualService")) {
        let name = text(service.get("metadata").and_then(|m| m.get("name"))).unwrap_or("virtual-service");
        if let Some(Node { value: Value::List(http), .. }) = service.get("spec").and_then(|s| s.get("http")) {
            for (i, route) in http.iter().enumerate() {
                let label = text(route.get("name")).map_or_else(|| format!("http[{i}]"), str::to_owned);
                routes.push((format!("{name}/{label}"), route));
            }
        }
    }
    let (label, route) = choose(&routes, ask.choice, "route")?;
    let mut imported = Imported { entry: Some(label.clone()), ..Imported::default() };
    imported.set("strategy", "full-jitter-from-base", "Envoy's backoff: U(0, min(base · 2^(n−1), 10 · base))");
    let route_timeout = route.get("timeout").map(|node| go_duration(node, "timeout")).transpose()?;
    let per_try = retries(route.get("retries"), ask, &mut imported)?;
    match (per_try, route_timeout) {
        (Some(per_try), _) => imported.set("timeout", lab_duration(per_try), format!("retries.perTryTimeout {per_try:?}")),
        (None, Some(timeout)) => imported.set("timeout", lab_duration(timeout), "no perTryTimeout: the route's timeout ends the attempt"),
        (None, None) => imported.warn(
            None,
            "timeout",
            "neither perTryTimeout nor a route timeout (Istio disables Envoy's 15s): an attempt waits as long as the server takes",
        ),
    }
    if let Some(timeout) = route_timeout {
        imported.set("deadline", lab_duration(timeout), format!("timeout {timeout:?}: the whole call, retries included"));
    }
    imported.set("retry_after", "ignore", "Istio sets no rate-limited backoff: Envoy ignores Retry-After");
    let host = route
        .get("route")
        .and_then(|r| match &r.value {
            Value::List(destinations) => destinations.first(),
            _ => None,
        })
        .and_then(|first| text(first.get("destination").and_then(|d| d.get("host"))));
    destination_rule(documents, host, &mut imported)?;
    Ok(imported)
}

/// The route's `retries`, or Istio's default policy; returns the per-try timeout.
fn retries(block: Option<&Node>, ask: &Ask<'_>, imported: &mut Imported) -> Result<Option<Duration>, Problem> {
    let grpc = ask.reading == Some("grpc");
    let Some(block) = block else {
        imported.set("max_attempts", DEFAULT_RETRIES + 1, "no retries block: Istio's default of 2 retries, 3 attempts");
        let codes = default_codes(ask, None, imported);
        imported.warn(None, "retries", format!("unset: Istio's default policy retries twice on {DEFAULT_RETRY_ON}"));
        base(None, imported)?;
        let outcomes = outcomes_of(DEFAULT_RETRY_ON, Some(&codes), (false, grpc), None, "retries.retryOn", imported);
        set_retry_on(&outcomes, "Istio's default retryOn", imported);
        return Ok(None);
    };
    known_keys(block, RETRY_KEYS, "retries")?;
    let attempts = match block.get("attempts") {
        None => 0,
        Some(Node { value: Value::Integer(n), .. }) => *n,
        Some(other) => return Err(expected(other, "retries.attempts", "a whole number of retries")),
    };
    if attempts <= 0 {
        // Istio's validation (validateHTTPRetry) refuses a disabled policy that still configures retries.
        if let Some((key, node)) = ["perTryTimeout", "retryOn", "retryRemoteLocalities"]
            .iter()
            .find_map(|key| block.get(key).map(|node| (*key, node)))
        {
            let message = format!(
                "`{key}` with attempts unset or 0: Istio refuses the route (\"http retry policy configured when \
                 attempts are set to 0 (disabled)\"); set attempts, or drop {key}"
            );
            return Err(Problem::new(Some(node.at), &format!("retries.{key}"), message));
        }
        imported.set("max_attempts", 1, "retries.attempts unset or 0: Istio turns retries off");
        imported.warn(block.get("attempts").map(|n| n.at).or(Some(block.at)), "retries.attempts", "a retries block without attempts (or with 0) turns retries off, although with no block at all Istio retries twice");
    } else {
        imported.set("max_attempts", attempts + 1, format!("retries.attempts = {attempts}: retries, so {} attempts", attempts + 1));
        super::counts_retries(imported, block.get("attempts").map(|n| n.at), "retries.attempts", attempts);
    }
    base(block.get("backoff"), imported)?;
    let per_try = block.get("perTryTimeout").map(|node| go_duration(node, "retries.perTryTimeout")).transpose()?;
    let (conditions, at) = match block.get("retryOn") {
        None => (DEFAULT_RETRY_ON.to_owned(), None),
        Some(node) => match &node.value {
            Value::Text(text) => (text.clone(), Some(node.at)),
            _ => return Err(expected(node, "retries.retryOn", "a comma-separated list of conditions")),
        },
    };
    // Bare numbers are status codes Istio hands to Envoy as retriable status codes; without retryOn the default
    // conditions' codes are the release's.
    let mut codes = if block.get("retryOn").is_none() { default_codes(ask, Some(block.at), imported) } else { Vec::new() };
    let mut named = Vec::new();
    for item in conditions.split(',') {
        if item.trim() != item || item.is_empty() {
            let message = format!(
                "{item:?}: Istio's validation splits retryOn at each comma and refuses a condition with spaces \
                 around it or an empty one; write {:?}",
                conditions.split(',').map(str::trim).filter(|c| !c.is_empty()).collect::<Vec<_>>().join(",")
            );
            return Err(Problem::new(at, "retries.retryOn", message));
        }
        match item.parse::<i64>() {
            Ok(code) => codes.push((code, at.unwrap_or(block.at))),
            Err(_) => named.push(item),
        }
    }
    if !codes.is_empty() && !named.contains(&"retriable-status-codes") {
        named.push("retriable-status-codes");
    }
    let outcomes = outcomes_of(&named.join(","), Some(&codes), (per_try.is_some(), grpc), at, "retries.retryOn", imported);
    set_retry_on(&outcomes, &format!("retries.retryOn {conditions:?}"), imported);
    Ok(per_try)
}

/// The status codes Istio's default conditions carry: [503] before 1.24, none since (istio/istio#52111).
fn default_codes(ask: &Ask<'_>, at: Option<LineCol>, imported: &mut Imported) -> Vec<(i64, LineCol)> {
    if imported.holds_for(&ISTIO, &ISTIO_NO_503_BY_DEFAULT, ask) {
        Vec::new()
    } else {
        vec![(503, at.unwrap_or(LineCol { line: 1, column: 1 }))]
    }
}

fn base(node: Option<&Node>, imported: &mut Imported) -> Result<(), Problem> {
    let base = node.map(|node| go_duration(node, "retries.backoff")).transpose()?.unwrap_or(DEFAULT_BASE);
    if base.is_zero() {
        return Err(Problem::new(node.map(|n| n.at), "retries.backoff", "must be longer than 0s"));
    }
    let from = if node.is_some() { format!("retries.backoff {base:?}") } else { "Envoy's 25ms base interval".to_owned() };
    imported.set("base", lab_duration(base), from);
    imported.set("cap", lab_duration(base * 10), "Envoy caps at 10 × the base interval");
    imported.set("multiplier", 2.0, "Envoy doubles the window");
    Ok(())
}

fn set_retry_on(outcomes: &[String], from: &str, imported: &mut Imported) {
    let values: Vec<toml::Value> = outcomes.iter().map(|outcome| toml::Value::from(outcome.as_str())).collect();
    imported.set("retry_on", values, format!("{from}, as the server model answers it"));
}

/// Where a DestinationRule's limits are kept.
const SIDECAR: &str = "each caller's sidecar keeps its own circuit breaker and budget";

/// The DestinationRule of the route's destination: its retry budget or `maxRetries`, else no limit at all.
fn destination_rule(documents: &[Node], host: Option<&str>, imported: &mut Imported) -> Result<(), Problem> {
    let same = |a: &str, b: &str| a == b || a.split('.').next() == b.split('.').next();
    let rule = host.and_then(|host| {
        documents.iter().filter(|d| kind_of(d) == Some("DestinationRule")).find(|rule| {
            text(rule.get("spec").and_then(|s| s.get("host"))).is_some_and(|ruled| same(ruled, host))
        })
    });
    let policy = rule.and_then(|rule| rule.get("spec")).and_then(|spec| spec.get("trafficPolicy"));
    if let Some(budget) = policy.and_then(|p| p.get("retryBudget")) {
        known_keys(budget, &["percent", "minRetryConcurrency", "budgetInterval"], "trafficPolicy.retryBudget")?;
        let percent = match budget.get("percent").map(|n| &n.value) {
            None => 20.0,
            Some(Value::Integer(n)) => *n as f64,
            Some(Value::Real(x)) => *x,
            Some(_) => return Err(expected(budget.get("percent").unwrap_or(budget), "retryBudget.percent", "a percentage")),
        };
        let floor = match budget.get("minRetryConcurrency").map(|n| &n.value) {
            None | Some(Value::Integer(0)) => 3,
            Some(Value::Integer(n)) if *n > 0 => *n,
            Some(_) => return Err(expected(budget.get("minRetryConcurrency").unwrap_or(budget), "retryBudget.minRetryConcurrency", "a whole number ≥ 0")),
        };
        if budget.get("budgetInterval").is_some() {
            imported.warn(Some(budget.at), "retryBudget.budgetInterval", "counts requests over a window (Istio 1.31+): the lab's envoy limiter counts the requests in flight");
        }
        imported.set("limiter", "envoy", format!("DestinationRule {} trafficPolicy.retryBudget", host.unwrap_or("?")));
        imported.set("budget_percent", percent, format!("retryBudget.percent {percent}"));
        imported.set("min_retry_concurrency", floor, format!("retryBudget.minRetryConcurrency {floor}"));
        imported.set("limiter_scope", "client", SIDECAR);
        return Ok(());
    }
    let max_retries = policy.and_then(|p| p.get("connectionPool")).and_then(|c| c.get("http")).and_then(|h| h.get("maxRetries"));
    match max_retries.map(|n| &n.value) {
        Some(Value::Integer(0)) => {
            imported.set("limiter", "off", "connectionPool.http.maxRetries 0 is unset: Istio lifts Envoy's limit of 3 retries at once");
            imported.warn(max_retries.map(|n| n.at), "connectionPool.http.maxRetries", "0 means unset to Istio, not zero retries: retries at once are unlimited");
        }
        Some(Value::Integer(n)) if *n > 0 => {
            imported.set("limiter", "envoy", format!("connectionPool.http.maxRetries {n}: at most that many retries at once"));
            imported.set("budget_percent", 0.0, "no retryBudget: a fixed number of retries at once");
            imported.set("min_retry_concurrency", *n, format!("maxRetries {n}"));
            imported.set("limiter_scope", "client", SIDECAR);
        }
        Some(_) => return Err(expected(max_retries.unwrap_or(&documents[0]), "connectionPool.http.maxRetries", "a whole number ≥ 0")),
        None => {
            imported.set("limiter", "off", "no retry budget: Istio lifts Envoy's limit of 3 retries at once");
            imported.warn(None, "DestinationRule", "no retryBudget or maxRetries for the destination: Istio sets Envoy's max_retries to 2^32 − 1, so retries at once are unlimited");
        }
    }
    Ok(())
}

/// A Go duration ("25ms", "1.5s", "1m30s", "1h"), as Istio's durations are written.
pub(super) fn go_duration(node: &Node, field: &str) -> Result<Duration, Problem> {
    let bad = || Problem::new(Some(node.at), field, format!("expected a duration like \"25ms\" or \"1m30s\", found {}", shown(node)));
    let Value::Text(text) = &node.value else { return Err(bad()) };
    let mut rest = text.as_str();
    let mut nanos = 0.0_f64;
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(bad)?;
        let number: f64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let unit_nanos = match &rest[..unit] {
            "h" => 3.6e12,
            "m" => 6e10,
            "s" => 1e9,
            "ms" => 1e6,
            "us" | "µs" => 1e3,
            "ns" => 1.0,
            _ => return Err(bad()),
        };
        nanos += (number * unit_nanos).round();
        rest = &rest[unit..];
    }
    Ok(Duration::from_nanos(nanos as u64))
}
