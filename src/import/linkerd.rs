//! Linkerd (Kubernetes YAML): the retry annotations of 2.16+ on a Service, HTTPRoute or GRPCRoute, and the
//! legacy ServiceProfile's retryable routes and retry budget. Sources: linkerd.io/2-edge/reference/retries and
//! timeouts; linkerd2 policy-controller `outbound/index/{http,grpc}.rs` (the annotations, their backoff) and
//! linkerd2-proxy `exp-backoff` (the waits); `profiles/template.go` and `service-profiles/src/proto.rs` (budgets).
//!
//! `retry.linkerd.io/limit` counts retries (1 when another retry annotation is there; "0" is read as unset;
//! timeout annotations alone make no retry policy). Annotation retries back off from 25 ms, doubling to 250 ms,
//! with up to 100% random extra, never above 250 ms, and retry only the statuses listed and the retry timeout,
//! never a connection error. A ServiceProfile retries a retryable route's 5xx at once, as often as its budget
//! allows (retryRatio of the requests over ttl, plus minRetriesPerSecond: the lab's `gateway-budget`, kept in
//! each client's proxy); its route `timeout` bounds the request with its retries.

use std::time::Duration;

use super::doc::{Node, Value};
use super::istio::go_duration;
use super::versions::{LINKERD, LINKERD_NO_PROFILE_TIMEOUT};
use super::{Ask, Format, expected, text, Imported, Input, Problem, choose, lab_duration};

pub(super) const FORMAT: Format = Format {
    name: "linkerd",
    about: "Linkerd retry annotations (2.16+) on a Service or route, and legacy ServiceProfile budgets",
    entry: "route",
    detect,
    near_miss: None,
    translate,
    consumers: &[&LINKERD],
    readings: &[],
};

/// The annotations that make a retry policy (timeouts alone make none).
const RETRY_ANNOTATIONS: &[&str] =
    &["retry.linkerd.io/http", "retry.linkerd.io/grpc", "retry.linkerd.io/limit", "retry.linkerd.io/timeout"];

const ANNOTATIONS: &[&str] = &[
    "retry.linkerd.io/http",
    "retry.linkerd.io/grpc",
    "retry.linkerd.io/limit",
    "retry.linkerd.io/timeout",
    "timeout.linkerd.io/request",
    "timeout.linkerd.io/response",
    "timeout.linkerd.io/idle",
];

enum Entry<'n> {
    /// A Service's, HTTPRoute's or GRPCRoute's annotations, with its kind.
    Annotated(&'n Node, &'n str),
    Profile { route: &'n Node, budget: Option<&'n Node> },
}


fn entries(documents: &[Node]) -> Vec<(String, Entry<'_>)> {
    let mut found = Vec::new();
    for document in documents {
        let kind = text(document.get("kind")).unwrap_or("");
        let name = text(document.get("metadata").and_then(|m| m.get("name"))).unwrap_or("?");
        let annotations = document.get("metadata").and_then(|m| m.get("annotations"));
        if annotations.is_some_and(|a| ANNOTATIONS.iter().any(|key| a.get(key).is_some())) {
            found.push((format!("{kind}/{name}"), Entry::Annotated(annotations.unwrap_or(document), kind)));
        }
        if kind == "ServiceProfile"
            && let Some(Node { value: Value::List(routes), .. }) = document.get("spec").and_then(|s| s.get("routes"))
        {
            let budget = document.get("spec").and_then(|s| s.get("retryBudget"));
            for (i, route) in routes.iter().enumerate() {
                if matches!(route.get("isRetryable").map(|n| &n.value), Some(Value::Bool(true))) {
                    let label = text(route.get("name")).map_or_else(|| format!("routes[{i}]"), str::to_owned);
                    found.push((format!("{name}/{label}"), Entry::Profile { route, budget }));
                }
            }
        }
    }
    found
}

fn detect(input: &Input<'_>) -> bool {
    input.tree.as_ref().is_ok_and(|documents| !entries(documents).is_empty())
}

fn translate(input: &Input<'_>, ask: &Ask<'_>) -> Result<Imported, Problem> {
    let documents = input.documents()?;
    let found = entries(documents);
    let (label, entry) = choose(&found, ask.choice, "route")?;
    let mut imported = Imported { entry: Some(label.clone()), ..Imported::default() };
    match entry {
        Entry::Annotated(annotations, kind) => annotated(annotations, kind, &mut imported)?,
        Entry::Profile { route, budget } => profile(route, *budget, ask, &mut imported)?,
    }
    Ok(imported)
}

/// A duration as Linkerd's annotations write one (policy controller `parse_duration`): one whole number and a
/// unit, `ms`, `s`, `m`, `h` or `d`, or a bare `0`; no fractions, no compounds like `1m30s`.
fn annotation_duration(node: &Node, field: &str) -> Result<Duration, Problem> {
    let bad = || {
        let message = "expected a whole number and one unit (ms, s, m, h, d), like \"300ms\": Linkerd refuses \
                       fractions and compounds";
        Problem::new(Some(node.at), field, format!("{message}; found {}", super::shown(node)))
    };
    let text = text(Some(node)).ok_or_else(bad)?;
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let number: u64 = text[..split].parse().map_err(|_| bad())?;
    let unit = match &text[split..] {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(bad()),
    };
    number.checked_mul(unit).map(Duration::from_millis).ok_or_else(bad)
}

/// The statuses of `retry.linkerd.io/http`, as the policy controller reads the list (split at each comma, no
/// trimming); `None` for a list it cannot read.
fn http_statuses(list: &str) -> Option<Vec<String>> {
    let range = |from: u16, to: u16| (from..=to).filter(|code| *code >= 400).map(|code| code.to_string()).collect::<Vec<_>>();
    let mut statuses = Vec::new();
    for item in list.split(',') {
        let codes = match item.to_ascii_lowercase().as_str() {
            "5xx" => vec!["5xx".to_owned()],
            "gateway-error" => range(502, 504),
            other => match other.split_once('-') {
                Some((from, to)) => match (from.parse::<u16>(), to.parse::<u16>()) {
                    (Ok(from), Ok(to)) if (100..=599).contains(&from) && from <= to && to <= 599 => range(from, to),
                    _ => return None,
                },
                None => match other.parse::<u16>() {
                    Ok(code) if (100..=599).contains(&code) => range(code, code),
                    _ => return None,
                },
            },
        };
        statuses.extend(codes);
    }
    Some(statuses)
}

fn annotated(annotations: &Node, kind: &str, imported: &mut Imported) -> Result<(), Problem> {
    let get = |key: &str| annotations.get(key);
    if let Value::Map(entries) = &annotations.value {
        for (key, at, _) in entries {
            let ours = key.starts_with("retry.linkerd.io/") || key.starts_with("timeout.linkerd.io/");
            if ours && !ANNOTATIONS.contains(&key.as_str()) {
                let message = format!("not an annotation Linkerd knows; it ignores it silently (valid: {})", ANNOTATIONS.join(", "));
                imported.warn(Some(*at), key, message);
            }
        }
    }
    imported.set("retry_after", "ignore", "Linkerd's proxy ignores Retry-After");
    imported.set("limiter", "off", "annotation retries have no budget");
    timeouts(annotations, imported)?;
    if !RETRY_ANNOTATIONS.iter().any(|key| get(key).is_some()) {
        imported.set("max_attempts", 1, "no retry annotation: Linkerd has no retry policy for it");
        return Ok(());
    }
    let mut retry_on: Vec<String> = Vec::new();
    if let Some(node) = get("retry.linkerd.io/http") {
        let list = text(Some(node)).ok_or_else(|| expected(node, "retry.linkerd.io/http", "a comma-separated list"))?;
        match http_statuses(list) {
            Some(statuses) => retry_on.extend(statuses),
            None if kind == "Service" => {
                imported.set("max_attempts", 1, "retry.linkerd.io/http unreadable: Linkerd drops the Service's retries");
                imported.warn(
                    Some(node.at),
                    "retry.linkerd.io/http",
                    format!(
                        "{list:?} is not a list Linkerd reads (codes, ranges like 500-504, gateway-error or 5xx, split \
                         at each comma with no spaces): it logs the error and drops every retry annotation of the \
                         Service"
                    ),
                );
                return Ok(());
            }
            None => {
                let message = format!(
                    "{list:?} is not a list Linkerd reads (codes, ranges like 500-504, gateway-error or 5xx, split \
                     at each comma with no spaces): its admission webhook refuses the {kind}"
                );
                return Err(Problem::new(Some(node.at), "retry.linkerd.io/http", message));
            }
        }
    } else if let Some(node) = get("retry.linkerd.io/grpc") {
        let list = text(Some(node)).ok_or_else(|| expected(node, "retry.linkerd.io/grpc", "a comma-separated list"))?;
        for item in list.split(',').map(str::to_ascii_lowercase) {
            match item.as_str() {
                "unavailable" => retry_on.extend(["502".to_owned(), "503".to_owned()]),
                "resource-exhausted" => retry_on.push("429".to_owned()),
                "deadline-exceeded" => retry_on.push("timeout".to_owned()),
                "cancelled" | "internal" => imported.warn(Some(node.at), "retry.linkerd.io/grpc", format!("{item}: the server model never answers it")),
                _ => return Err(expected(node, "retry.linkerd.io/grpc", "cancelled, deadline-exceeded, internal, resource-exhausted or unavailable, with no spaces")),
            }
        }
    } else {
        imported.warn(None, "retry.linkerd.io/http", "unset: Linkerd retries no status, only its retry timeout and refused streams");
    }
    let limit = match get("retry.linkerd.io/limit") {
        None => 1,
        Some(node) => match text(Some(node)).and_then(|t| t.parse::<u16>().ok()) {
            Some(0) => {
                imported.warn(Some(node.at), "retry.linkerd.io/limit", "\"0\" is read as unset: Linkerd still retries once");
                1
            }
            Some(n) => i64::from(n),
            None => return Err(expected(node, "retry.linkerd.io/limit", "a quoted whole number of retries, like \"2\"")),
        },
    };
    imported.set("strategy", "proportional-jitter-capped", "Linkerd's backoff: 25ms doubling, plus up to 100% random extra, capped at 250ms");
    imported.set("base", "25ms", "the policy controller's fixed minimum backoff");
    imported.set("cap", "250ms", "the policy controller's fixed maximum backoff");
    imported.set("multiplier", 2.0, "the backoff doubles");
    imported.set("jitter_fraction", 1.0, "jitter ratio 1.0");
    imported.set("max_attempts", limit + 1, format!("retry.linkerd.io/limit {limit}: retries, so {} attempts", limit + 1));
    super::counts_retries(imported, get("retry.linkerd.io/limit").map(|n| n.at), "retry.linkerd.io/limit", limit);
    let per_try = get("retry.linkerd.io/timeout").map(|node| annotation_duration(node, "retry.linkerd.io/timeout")).transpose()?;
    if let Some(per_try) = per_try.filter(|d| !d.is_zero()) {
        imported.set("timeout", lab_duration(per_try), format!("retry.linkerd.io/timeout {per_try:?}: per attempt, retried"));
        retry_on.push("timeout".to_owned());
        imported.warn(
            get("retry.linkerd.io/timeout").map(|n| n.at),
            "retry.linkerd.io/timeout",
            "the proxy takes it off the last attempt, which then waits for its answer; the lab times out every attempt",
        );
    }
    retry_on.dedup();
    let values: Vec<toml::Value> = retry_on.iter().map(|o| toml::Value::from(o.as_str())).collect();
    imported.set("retry_on", values, "the retry annotations, as the server model answers them; Linkerd never retries a connection error");
    imported.warn(None, "bodies", "requests with bodies over 64 KiB are never retried; the lab's have none");
    Ok(())
}

/// `timeout.linkerd.io/request` (the whole call, never retried) and `/response` (each attempt, not retried).
fn timeouts(annotations: &Node, imported: &mut Imported) -> Result<(), Problem> {
    let duration = |key: &str| annotations.get(key).map(|node| annotation_duration(node, key)).transpose();
    if let Some(request) = duration("timeout.linkerd.io/request")?.filter(|d| !d.is_zero()) {
        imported.set("deadline", lab_duration(request), format!("timeout.linkerd.io/request {request:?}: the whole call, not retried"));
    }
    if let Some(response) = duration("timeout.linkerd.io/response")?.filter(|d| !d.is_zero()) {
        imported.set("timeout", lab_duration(response), format!("timeout.linkerd.io/response {response:?}: each attempt, not retried"));
    }
    Ok(())
}

fn profile(route: &Node, budget: Option<&Node>, ask: &Ask<'_>, imported: &mut Imported) -> Result<(), Problem> {
    imported.set("strategy", "none", "a ServiceProfile retries at once: no backoff");
    imported.set("retry_on", vec![toml::Value::from("5xx")], "the route's responseClasses default: 5xx is a failure; errors are not retried");
    if route.get("responseClasses").is_some() {
        imported.warn(route.get("responseClasses").map(|n| n.at), "responseClasses", "custom response classes are not read: 5xx is retried");
    }
    let timeout = match route.get("timeout") {
        Some(node) => Some((go_duration(node, "timeout")?, format!("route timeout {}", super::shown(node)))),
        None if imported.holds_for(&LINKERD, &LINKERD_NO_PROFILE_TIMEOUT, ask) => None,
        None => Some((Duration::from_secs(10), "route timeout unset: 10s before Linkerd 2.9".to_owned())),
    };
    if let Some((timeout, from)) = timeout.filter(|(timeout, _)| !timeout.is_zero()) {
        // The proxy puts the route's timeout outside its retries (app/outbound/src/http/logical/profile.rs): it
        // bounds the request, and the attempt under way when it fires.
        imported.set("deadline", lab_duration(timeout), format!("{from}: the request, its retries included"));
        imported.set("timeout", lab_duration(timeout), format!("{from}: an attempt cannot outlast the request"));
    }
    let (ratio, rate, ttl) = match budget {
        None => {
            imported.warn(None, "retryBudget", "unset: Linkerd's 20% of requests, 10 retries per second, over 10s");
            (0.2, 10.0, Duration::from_secs(10))
        }
        Some(budget) => {
            let number = |key: &str| match budget.get(key).map(|n| &n.value) {
                None => Ok(0.0),
                Some(Value::Integer(n)) if *n >= 0 => Ok(*n as f64),
                Some(Value::Real(x)) if *x >= 0.0 => Ok(*x),
                Some(_) => Err(expected(budget.get(key).unwrap_or(budget), &format!("retryBudget.{key}"), "a number ≥ 0")),
            };
            for key in ["retryRatio", "minRetriesPerSecond"] {
                if budget.get(key).is_none() {
                    imported.warn(Some(budget.at), &format!("retryBudget.{key}"), "missing in a retryBudget block: Linkerd takes 0, not its default");
                }
            }
            let ttl_node = budget.get("ttl").ok_or_else(|| Problem::new(Some(budget.at), "retryBudget.ttl", "missing: Linkerd refuses the profile"))?;
            let ttl = go_duration(ttl_node, "retryBudget.ttl")?;
            if !(Duration::from_secs(1)..=Duration::from_secs(60)).contains(&ttl) {
                return Err(Problem::new(Some(ttl_node.at), "retryBudget.ttl", "outside 1s to 60s: the proxy drops the budget and retries nothing"));
            }
            (number("retryRatio")?, number("minRetriesPerSecond")?, ttl)
        }
    };
    imported.set("limiter", "gateway-budget", "the ServiceProfile's retryBudget");
    imported.set("retry_percent", ratio, format!("retryBudget.retryRatio {ratio}"));
    imported.set("min_retry_rate", rate, format!("retryBudget.minRetriesPerSecond {rate}"));
    imported.set("retry_interval", lab_duration(ttl), format!("retryBudget.ttl {ttl:?}"));
    imported.set("limiter_scope", "client", "each client's proxy keeps its own budget");
    imported.set("retry_after", "ignore", "Linkerd's proxy ignores Retry-After");
    Ok(())
}
