//! Linkerd (Kubernetes YAML): the retry annotations of 2.16+ on a Service, HTTPRoute or GRPCRoute, and the
//! legacy ServiceProfile's retryable routes and retry budget. Sources: linkerd.io/2-edge/reference/retries and
//! timeouts; linkerd2 policy-controller `outbound/index/{http,grpc}.rs` (the annotations, their backoff) and
//! linkerd2-proxy `exp-backoff` (the waits); `profiles/template.go` and `service-profiles/src/proto.rs` (budgets).
//!
//! `retry.linkerd.io/limit` counts retries (1 unset; "0" is read as unset). Annotation retries back off from
//! 25 ms, doubling to 250 ms, with up to 100% random extra, never above 250 ms. A ServiceProfile retries a
//! retryable route at once, as often as its budget allows (retryRatio of the requests over ttl, plus
//! minRetriesPerSecond): the lab's `gateway-budget`.

use std::time::Duration;

use super::doc::{Node, Value};
use super::istio::go_duration;
use super::{Ask, Format, expected, text, Imported, Input, Problem, choose, lab_duration};

pub(super) const FORMAT: Format = Format {
    name: "linkerd",
    about: "Linkerd retry annotations (2.16+) on a Service or route, and legacy ServiceProfile budgets",
    entry: "route",
    detect,
    near_miss: None,
    translate,
    consumers: &[],
    readings: &[],
};

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
    Annotated(&'n Node),
    Profile { route: &'n Node, budget: Option<&'n Node> },
}


fn entries(documents: &[Node]) -> Vec<(String, Entry<'_>)> {
    let mut found = Vec::new();
    for document in documents {
        let kind = text(document.get("kind")).unwrap_or("");
        let name = text(document.get("metadata").and_then(|m| m.get("name"))).unwrap_or("?");
        let annotations = document.get("metadata").and_then(|m| m.get("annotations"));
        if annotations.is_some_and(|a| ANNOTATIONS.iter().any(|key| a.get(key).is_some())) {
            found.push((format!("{kind}/{name}"), Entry::Annotated(annotations.unwrap_or(document))));
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
        Entry::Annotated(annotations) => annotated(annotations, &mut imported)?,
        Entry::Profile { route, budget } => profile(route, *budget, &mut imported)?,
    }
    Ok(imported)
}

fn annotated(annotations: &Node, imported: &mut Imported) -> Result<(), Problem> {
    let get = |key: &str| annotations.get(key);
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
    let mut retry_on: Vec<String> = vec!["reset".to_owned()];
    let per_try = get("retry.linkerd.io/timeout").map(|node| go_duration(node, "retry.linkerd.io/timeout")).transpose()?;
    if let Some(per_try) = per_try.filter(|d| !d.is_zero()) {
        imported.set("timeout", lab_duration(per_try), format!("retry.linkerd.io/timeout {per_try:?}: per attempt, retried"));
        retry_on.push("timeout".to_owned());
    }
    match (get("retry.linkerd.io/http"), get("retry.linkerd.io/grpc")) {
        (Some(node), _) => {
            let list = text(Some(node)).ok_or_else(|| expected(node, "retry.linkerd.io/http", "a comma-separated list"))?;
            for item in list.split(',').map(|i| i.trim().to_ascii_lowercase()).filter(|i| !i.is_empty()) {
                let range = |from: u16, to: u16| (from..=to).filter(|code| *code >= 400).map(|code| code.to_string()).collect::<Vec<_>>();
                let codes = match item.as_str() {
                    "5xx" => vec!["5xx".to_owned()],
                    "gateway-error" => range(502, 504),
                    other => match other.split_once('-') {
                        Some((from, to)) => match (from.parse::<u16>(), to.parse::<u16>()) {
                            (Ok(from), Ok(to)) if (100..=599).contains(&from) && from <= to && to <= 599 => range(from, to),
                            _ => return Err(expected(node, "retry.linkerd.io/http", "codes, ranges like 500-504, gateway-error or 5xx")),
                        },
                        None => match other.parse::<u16>() {
                            Ok(code) if (100..=599).contains(&code) => range(code, code),
                            _ => return Err(expected(node, "retry.linkerd.io/http", "codes, ranges like 500-504, gateway-error or 5xx")),
                        },
                    },
                };
                retry_on.extend(codes);
            }
        }
        (None, Some(node)) => {
            let list = text(Some(node)).ok_or_else(|| expected(node, "retry.linkerd.io/grpc", "a comma-separated list"))?;
            for item in list.split(',').map(|i| i.trim().to_ascii_lowercase()).filter(|i| !i.is_empty()) {
                match item.as_str() {
                    "unavailable" => retry_on.extend(["502".to_owned(), "503".to_owned()]),
                    "resource-exhausted" => retry_on.push("429".to_owned()),
                    "deadline-exceeded" => retry_on.push("timeout".to_owned()),
                    "cancelled" | "internal" => imported.warn(Some(node.at), "retry.linkerd.io/grpc", format!("{item}: the server model never answers it")),
                    _ => return Err(expected(node, "retry.linkerd.io/grpc", "cancelled, deadline-exceeded, internal, resource-exhausted or unavailable")),
                }
            }
        }
        (None, None) => imported.warn(None, "retry.linkerd.io/http", "unset: Linkerd retries no status, only connection failures and per-attempt timeouts"),
    }
    retry_on.dedup();
    let values: Vec<toml::Value> = retry_on.iter().map(|o| toml::Value::from(o.as_str())).collect();
    imported.set("retry_on", values, "the retry annotations, as the server model answers them");
    if let Some(request) = get("timeout.linkerd.io/request").map(|node| go_duration(node, "timeout.linkerd.io/request")).transpose()? {
        imported.set("deadline", lab_duration(request), format!("timeout.linkerd.io/request {request:?}: the whole call, not retried"));
    }
    imported.set("retry_after", "ignore", "Linkerd's proxy ignores Retry-After");
    imported.set("limiter", "off", "annotation retries have no budget");
    imported.warn(None, "bodies", "requests with bodies over 64 KiB are never retried; the lab's have none");
    Ok(())
}

fn profile(route: &Node, budget: Option<&Node>, imported: &mut Imported) -> Result<(), Problem> {
    imported.set("strategy", "none", "a ServiceProfile retries at once: no backoff");
    imported.set("retry_on", vec![toml::Value::from("5xx")], "the route's responseClasses default: 5xx is a failure");
    if route.get("responseClasses").is_some() {
        imported.warn(route.get("responseClasses").map(|n| n.at), "responseClasses", "custom response classes are not read: 5xx is retried");
    }
    if let Some(timeout) = route.get("timeout") {
        let timeout = go_duration(timeout, "timeout")?;
        imported.set("timeout", lab_duration(timeout), format!("route timeout {timeout:?}"));
    } else {
        imported.set("timeout", "10s", "route timeout unset: the profile's 10s");
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
    imported.set("retry_after", "ignore", "Linkerd's proxy ignores Retry-After");
    Ok(())
}
