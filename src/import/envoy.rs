//! Envoy (YAML or JSON): a route's `retry_policy` (or its virtual host's), the route's timeout, and the circuit
//! breakers of the cluster it sends to. Sources: envoyproxy/data-plane-api `envoy/config/route/v3/
//! route_components.proto` (RetryPolicy, RouteAction) and `envoy/config/cluster/v3/circuit_breaker.proto`; the
//! backoff as `source/common/common/backoff_strategy.cc` computes it (JitteredExponentialBackOffStrategy).
//!
//! The n-th retry waits U(0, min(base · 2^(n−1), max)), in whole milliseconds: the lab's `full-jitter-from-base`
//! (Envoy's docs still give the older (2^n − 1) · base window, the lab's `envoy-jitter`). `num_retries` counts
//! retries (default 1). The cluster admits at most `max_retries` retries at once (default 3), or, with a
//! `retry_budget`, max(min_retry_concurrency, budget_percent of the active requests): the lab's `envoy` limiter.

use std::time::Duration;

use super::doc::{Node, Value};
use super::spelling::{OnBoth, respell, snake_case};
use super::{Ask, Format, expected, seconds, text, Imported, Input, Problem, choose, known_keys, lab_duration, proto_duration, shown};

pub(super) const FORMAT: Format = Format {
    name: "envoy",
    about: "Envoy route retry_policy, route timeout and the cluster's circuit breakers (v3 API)",
    entry: "route",
    detect,
    near_miss: None,
    translate,
    consumers: &[],
    readings: READINGS,
};

/// How the route's answers reach Envoy: gRPC's retry conditions (`unavailable`, …) match only a gRPC status.
pub(super) const READINGS: &[(&str, &str)] = &[
    ("http", "the route carries HTTP: gRPC's conditions (unavailable, resource-exhausted, …) match no answer"),
    ("grpc", "the route carries gRPC: gRPC's conditions match the statuses the server model's answers stand for"),
];

/// Every field the translation reads, by its proto name; Envoy reads each by its JSON name too.
const FIELDS: &[&str] = &[
    "virtual_hosts",
    "routes",
    "route",
    "match",
    "prefix",
    "path",
    "name",
    "cluster",
    "timeout",
    "hedge_policy",
    "retry_policy",
    "hedge_on_per_try_timeout",
    "clusters",
    "circuit_breakers",
    "thresholds",
    "priority",
    "max_retries",
    "retry_budget",
    "budget_percent",
    "min_retry_concurrency",
    "budget_interval",
    "base_interval",
    "max_interval",
    "reset_headers",
    "format",
    "value",
    RETRY_KEYS[0],
    RETRY_KEYS[1],
    RETRY_KEYS[2],
    RETRY_KEYS[3],
    RETRY_KEYS[4],
    RETRY_KEYS[5],
    RETRY_KEYS[6],
    RETRY_KEYS[7],
    RETRY_KEYS[8],
    RETRY_KEYS[9],
    RETRY_KEYS[10],
    RETRY_KEYS[11],
    RETRY_KEYS[12],
];

const RETRY_KEYS: &[&str] = &[
    "retry_on",
    "num_retries",
    "per_try_timeout",
    "per_try_idle_timeout",
    "retry_back_off",
    "rate_limited_retry_back_off",
    "retriable_status_codes",
    "retriable_headers",
    "retriable_request_headers",
    "retry_host_predicate",
    "retry_priority",
    "host_selection_retry_max_attempts",
    "retry_options_predicates",
];
/// Envoy's runtime default `upstream.base_retry_backoff_ms`, and the cap it takes without `max_interval`.
const DEFAULT_BASE: Duration = Duration::from_millis(25);
const CAP_TIMES_BASE: u32 = 10;
/// A route's timeout when it sets none (RouteAction.timeout).
const DEFAULT_ROUTE_TIMEOUT: Duration = Duration::from_secs(15);
/// `max_retries` of a cluster's circuit breakers when unset.
const DEFAULT_MAX_RETRIES: i64 = 3;

/// A retry policy found in the file: its label, the policy, the route action around it (for its timeout and
/// cluster), and whether it was inherited from the virtual host.
struct Found<'n> {
    policy: &'n Node,
    action: Option<&'n Node>,
    hedge: Option<&'n Node>,
    inherited: bool,
}

fn detect(input: &Input<'_>) -> bool {
    input.document().is_ok_and(|document| {
        let Ok(document) = proto_names(document) else { return true };
        let mut found = Vec::new();
        policies(&document, &mut found);
        // An Envoy retry policy holds Envoy's keys: a gRPC `retryPolicy` (maxAttempts, …) is no Envoy route.
        found.iter().any(|(_, found)| match &found.policy.value {
            Value::Map(entries) => entries.iter().all(|(key, _, _)| RETRY_KEYS.contains(&key.as_str())),
            _ => false,
        })
    })
}

/// The file with every field under its proto name (`retryPolicy` read as `retry_policy`), as Envoy's protobuf
/// JSON reader takes both (`source/common/protobuf/utility.cc`, loadFromJson); one field in both spellings is
/// refused, as Envoy refuses it.
fn proto_names(document: &Node) -> Result<Node, Problem> {
    let mut document = document.clone();
    respell(&mut document, FIELDS, snake_case, OnBoth::Refuse, "Envoy")?;
    Ok(document)
}

/// Every route (and bare retry policy) with the retry policy it runs: its own, else its virtual host's.
fn policies<'n>(node: &'n Node, found: &mut Vec<(String, Found<'n>)>) {
    match &node.value {
        Value::Map(_) if node.get("virtual_hosts").is_some() => {
            if let Some(Node { value: Value::List(hosts), .. }) = node.get("virtual_hosts") {
                for (h, host) in hosts.iter().enumerate() {
                    virtual_host(host, h, found);
                }
            }
        }
        Value::Map(_) if node.get("retry_policy").is_some() && node.get("routes").is_none() => {
            // A route action, or a route, given alone.
            let action = node.get("route").unwrap_or(node);
            let policy = action.get("retry_policy").or_else(|| node.get("retry_policy"));
            if let Some(policy) = policy {
                let label = text_string(node.get("name")).unwrap_or_else(|| "retry_policy".to_owned());
                found.push((label, Found { policy, action: Some(action), hedge: action.get("hedge_policy"), inherited: false }));
            }
        }
        Value::Map(entries) => entries.iter().for_each(|(_, _, value)| policies(value, found)),
        Value::List(items) => items.iter().for_each(|item| policies(item, found)),
        _ => {}
    }
}

fn virtual_host<'n>(host: &'n Node, index: usize, found: &mut Vec<(String, Found<'n>)>) {
    let host_name = text_string(host.get("name")).unwrap_or_else(|| format!("virtual_hosts[{index}]"));
    let host_policy = host.get("retry_policy");
    let Some(Node { value: Value::List(routes), .. }) = host.get("routes") else {
        if let Some(policy) = host_policy {
            found.push((host_name, Found { policy, action: None, hedge: host.get("hedge_policy"), inherited: false }));
        }
        return;
    };
    for (r, route) in routes.iter().enumerate() {
        let action = route.get("route");
        let own = action.and_then(|action| action.get("retry_policy"));
        let Some(policy) = own.or(host_policy) else { continue };
        let route_name = text_string(route.get("name"))
            .or_else(|| route.get("match").and_then(|m| text_string(m.get("prefix")).or_else(|| text_string(m.get("path")))))
            .unwrap_or_else(|| format!("routes[{r}]"));
        let hedge = action.and_then(|action| action.get("hedge_policy")).or_else(|| host.get("hedge_policy"));
        found.push((format!("{host_name}/{route_name}"), Found { policy, action, hedge, inherited: own.is_none() }));
    }
}


fn translate(input: &Input<'_>, ask: &Ask<'_>) -> Result<Imported, Problem> {
    let document = &proto_names(input.document()?)?;
    let mut found = Vec::new();
    policies(document, &mut found);
    let (label, entry) = choose(&found, ask.choice, "route")?;
    let mut imported = Imported { entry: Some(label.clone()), ..Imported::default() };
    if entry.inherited {
        imported.warn(Some(entry.policy.at), "retry_policy", "the route has none of its own: its virtual host's applies");
    }
    let grpc = ask.reading == Some("grpc");
    retry_policy(entry.policy, entry.action, grpc, &mut imported)?;
    if let Some(hedge) = entry.hedge {
        let on_timeout = matches!(hedge.get("hedge_on_per_try_timeout").map(|n| &n.value), Some(Value::Bool(true)));
        if on_timeout {
            imported.warn(
                Some(hedge.at),
                "hedge_policy.hedge_on_per_try_timeout",
                "a per-try timeout sends a hedge without cancelling the attempt; the lab's server clients cancel \
                 nothing and send the retry: hedging is the fanout model's (`hedge`, `hedge_delay`)",
            );
        }
    }
    let cluster = entry.action.and_then(|action| text_string(action.get("cluster")));
    circuit_breakers(document, cluster.as_deref(), &mut imported)?;
    Ok(imported)
}

fn retry_policy(policy: &Node, action: Option<&Node>, grpc: bool, imported: &mut Imported) -> Result<(), Problem> {
    known_keys(policy, RETRY_KEYS, "retry_policy")?;
    let retries = match policy.get("num_retries") {
        None => {
            imported.warn(None, "retry_policy.num_retries", "unset: Envoy retries once");
            1
        }
        Some(node) => whole_number(node).ok_or_else(|| {
            expected(node, "retry_policy.num_retries", "a whole number of retries ≥ 0")
        })?,
    };
    imported.set("strategy", "full-jitter-from-base", "retry_back_off: U(0, min(base · 2^(n−1), max)), as Envoy's source draws it");
    imported.set(
        "max_attempts",
        retries + 1,
        format!("retry_policy.num_retries = {retries}: retries after the first try, so {} attempts", retries + 1),
    );
    super::counts_retries(imported, policy.get("num_retries").map(|node| node.at), "retry_policy.num_retries", retries);
    let (base, cap) = backoff(policy.get("retry_back_off"), imported)?;
    imported.set("base", lab_duration(base), format!("retry_back_off.base_interval {}", seconds(base)));
    imported.set("cap", lab_duration(cap), format!("retry_back_off.max_interval {}", seconds(cap)));
    imported.set("multiplier", 2.0, "Envoy doubles the window");
    let per_try = policy.get("per_try_timeout").map(|node| proto_duration(node, "retry_policy.per_try_timeout")).transpose()?;
    let route_timeout = match action.and_then(|action| action.get("timeout")) {
        Some(node) => proto_duration(node, "route.timeout")?,
        None => DEFAULT_ROUTE_TIMEOUT,
    };
    let retry_on = retry_on(policy, per_try.is_some(), grpc, imported)?;
    match per_try.filter(|per_try| !per_try.is_zero()) {
        Some(per_try) => imported.set("timeout", lab_duration(per_try), format!("retry_policy.per_try_timeout {}", seconds(per_try))),
        None if !route_timeout.is_zero() => {
            imported.set("timeout", lab_duration(route_timeout), "no per_try_timeout: the route's timeout ends the attempt, and the call");
        }
        None => imported.warn(None, "route.timeout", "0s disables it: with no per_try_timeout an attempt waits as long as the server takes"),
    }
    if !route_timeout.is_zero() {
        let from = match action.and_then(|action| action.get("timeout")) {
            Some(_) => format!("route.timeout {}: the whole call, retries and backoff included", seconds(route_timeout)),
            None => "route.timeout unset: Envoy's 15s, the whole call, retries and backoff included".to_owned(),
        };
        imported.set("deadline", lab_duration(route_timeout), from);
    }
    let values: Vec<toml::Value> = retry_on.iter().map(|outcome| toml::Value::from(outcome.as_str())).collect();
    imported.set("retry_on", values, "retry_policy.retry_on, as the server model answers it");
    rate_limited(policy.get("rate_limited_retry_back_off"), imported)?;
    Ok(())
}

/// A UInt32Value as protobuf's JSON writes one: a whole number, or the same in quotes (`"2"`).
fn whole_number(node: &Node) -> Option<i64> {
    match &node.value {
        Value::Integer(n) if *n >= 0 => Some(*n),
        Value::Text(text) => text.parse::<u32>().ok().map(i64::from),
        _ => None,
    }
}

/// `rate_limited_retry_back_off`: Envoy reads only the headers its `reset_headers` name, by name and in whole
/// seconds or a Unix time (`retry_state_impl.cc`, parseResetInterval); a list that names Retry-After in seconds
/// honours the server model's hint, any other reads nothing the model sends.
fn rate_limited(node: Option<&Node>, imported: &mut Imported) -> Result<(), Problem> {
    let field = "rate_limited_retry_back_off";
    let Some(node) = node else {
        imported.set("retry_after", "ignore", "no rate_limited_retry_back_off: Envoy ignores Retry-After");
        return Ok(());
    };
    known_keys(node, &["reset_headers", "max_interval"], field)?;
    let headers = match node.get("reset_headers") {
        Some(Node { value: Value::List(items), .. }) => items.as_slice(),
        Some(other) => return Err(expected(other, &format!("{field}.reset_headers"), "a list of {name, format}")),
        None => return Err(Problem::new(Some(node.at), &format!("{field}.reset_headers"), "missing; Envoy requires it")),
    };
    let mut names = Vec::new();
    let mut reads_retry_after = false;
    for header in headers {
        known_keys(header, &["name", "format"], &format!("{field}.reset_headers"))?;
        let name = text(header.get("name")).unwrap_or_default();
        let format = text(header.get("format")).unwrap_or("SECONDS");
        names.push(name.to_owned());
        reads_retry_after |= name.eq_ignore_ascii_case("retry-after") && format.eq_ignore_ascii_case("seconds");
    }
    if reads_retry_after {
        imported.set("retry_after", "honour", "rate_limited_retry_back_off reads Retry-After: its interval replaces the backoff");
        imported.warn(
            Some(node.at),
            field,
            "Envoy waits U(interval, 1.5 · interval) and ignores a header above max_interval (300s unless set); \
             the lab waits the hint itself",
        );
    } else {
        let from = format!("{field} reads {}, not Retry-After: Envoy ignores the server model's hint", names.join(", "));
        imported.set("retry_after", "ignore", from);
        imported.warn(
            Some(node.at),
            &format!("{field}.reset_headers"),
            format!("{}: Envoy reads only these headers, and the server model sends Retry-After", names.join(", ")),
        );
    }
    Ok(())
}

fn backoff(node: Option<&Node>, imported: &mut Imported) -> Result<(Duration, Duration), Problem> {
    let Some(node) = node else {
        imported.warn(None, "retry_back_off", "unset: Envoy's 25ms base (runtime upstream.base_retry_backoff_ms) and 250ms cap");
        return Ok((DEFAULT_BASE, DEFAULT_BASE * CAP_TIMES_BASE));
    };
    known_keys(node, &["base_interval", "max_interval"], "retry_back_off")?;
    let base_node = node
        .get("base_interval")
        .ok_or_else(|| Problem::new(Some(node.at), "retry_back_off.base_interval", "missing; Envoy requires it"))?;
    let mut base = proto_duration(base_node, "retry_back_off.base_interval")?;
    if base.is_zero() {
        return Err(Problem::new(Some(base_node.at), "retry_back_off.base_interval", "must be longer than 0s"));
    }
    if base < Duration::from_millis(1) {
        imported.warn(Some(base_node.at), "retry_back_off.base_interval", "below 1ms: Envoy rounds it up to 1ms");
        base = Duration::from_millis(1);
    }
    let cap = match node.get("max_interval") {
        Some(max) => {
            let cap = proto_duration(max, "retry_back_off.max_interval")?;
            if cap < base {
                let message = format!("{} is shorter than base_interval; Envoy refuses it", shown(max));
                return Err(Problem::new(Some(max.at), "retry_back_off.max_interval", message));
            }
            cap
        }
        None => {
            imported.warn(None, "retry_back_off.max_interval", "unset: Envoy caps at 10 × base_interval");
            base * CAP_TIMES_BASE
        }
    };
    imported.warn(None, "retry_back_off", "Envoy draws whole milliseconds; the lab draws continuous time");
    Ok((base, cap))
}

/// Envoy's `retry_on` conditions as the server model's outcomes (see [`outcomes_of`]).
fn retry_on(policy: &Node, per_try: bool, grpc: bool, imported: &mut Imported) -> Result<Vec<String>, Problem> {
    let conditions = match policy.get("retry_on") {
        None => {
            imported.warn(None, "retry_policy.retry_on", "unset: Envoy retries nothing");
            String::new()
        }
        Some(node) => match &node.value {
            Value::Text(text) => text.clone(),
            _ => return Err(expected(node, "retry_policy.retry_on", "a comma-separated list of conditions")),
        },
    };
    let at = policy.get("retry_on").map(|node| node.at);
    let codes = match policy.get("retriable_status_codes") {
        None => None,
        Some(codes) => {
            let Value::List(items) = &codes.value else {
                return Err(expected(codes, "retry_policy.retriable_status_codes", "a list of HTTP status codes"));
            };
            let mut listed = Vec::new();
            for item in items {
                match item.value {
                    Value::Integer(code) if (100..600).contains(&code) => listed.push((code, item.at)),
                    _ => return Err(expected(item, "retry_policy.retriable_status_codes", "an HTTP status code")),
                }
            }
            Some(listed)
        }
    };
    Ok(outcomes_of(&conditions, codes.as_deref(), (per_try, grpc), at, "retry_policy.retry_on", imported))
}

/// Envoy's `retry_on` conditions (with the codes `retriable-status-codes` refers to) as the server model's
/// outcomes (`retry_state_impl.cc`, wouldRetryFromHeaders and wouldRetryFromReset): 5xx and gateway-error cover
/// its answers and every reset, reset every reset, the connection failures theirs; with a per-try timeout, which
/// Envoy ends as a local reset, 5xx, gateway-error and reset retry timed-out attempts too. gRPC's conditions
/// match a `grpc-status` only: nothing on an HTTP route, the statuses the model's answers
/// stand for on a gRPC one. Conditions the server never meets and names Envoy does not know get a warning.
pub(super) fn outcomes_of(
    conditions: &str,
    codes: Option<&[(i64, crate::error::LineCol)]>,
    (per_try, grpc): (bool, bool),
    at: Option<crate::error::LineCol>,
    field: &str,
    imported: &mut Imported,
) -> Vec<String> {
    let mut outcomes: Vec<String> = Vec::new();
    let add = |outcomes: &mut Vec<String>, items: &[&str]| {
        for item in items {
            if !outcomes.iter().any(|o| o == item) {
                outcomes.push((*item).to_owned());
            }
        }
    };
    let mut grpc_only = Vec::new();
    let mut retries_local_resets = false;
    for condition in conditions.split(',').map(str::trim).filter(|c| !c.is_empty()) {
        match condition {
            "5xx" => {
                add(&mut outcomes, &["5xx", "reset"]);
                retries_local_resets = true;
            }
            "gateway-error" => {
                add(&mut outcomes, &["502", "503", "504", "reset"]);
                retries_local_resets = true;
            }
            "reset" => {
                add(&mut outcomes, &["reset"]);
                retries_local_resets = true;
            }
            "reset-before-request" | "connect-failure" | "refused-stream" => add(&mut outcomes, &["reset"]),
            "http3-post-connect-failure" => imported.warn(
                at,
                field,
                "http3-post-connect-failure: only an HTTP/3 failure after the handshake, which the server model has not",
            ),
            "retriable-4xx" => add(&mut outcomes, &["409"]),
            "unavailable" | "resource-exhausted" | "deadline-exceeded" if !grpc => grpc_only.push(condition),
            "unavailable" => add(&mut outcomes, &["502", "503"]),
            "resource-exhausted" => add(&mut outcomes, &["429"]),
            "deadline-exceeded" => add(&mut outcomes, &["timeout"]),
            "retriable-status-codes" => {
                let Some(codes) = codes else {
                    imported.warn(at, field, "retriable-status-codes without retriable_status_codes retries nothing");
                    continue;
                };
                for &(code, code_at) in codes {
                    if (400..600).contains(&code) {
                        add(&mut outcomes, &[code.to_string().as_str()]);
                    } else {
                        imported.warn(Some(code_at), field, format!("{code} is not an error: the lab retries only 400 to 599"));
                    }
                }
            }
            "cancelled" | "internal" | "envoy-ratelimited" | "retriable-headers" => imported.warn(
                at,
                field,
                format!("{condition}: the server model never answers it, so it changes nothing here"),
            ),
            other => imported.warn(at, field, format!("{other:?} is no condition Envoy knows; Envoy ignores it silently")),
        }
    }
    if !grpc_only.is_empty() {
        imported.warn(
            at,
            field,
            format!(
                "{}: match a gRPC status (grpc-status), never an HTTP answer, so on this route, read as HTTP, they \
                 retry nothing; if it carries gRPC, read it with --reading grpc",
                grpc_only.join(", ")
            ),
        );
    }
    if per_try && retries_local_resets {
        add(&mut outcomes, &["timeout"]);
    }
    outcomes
}

/// The circuit breakers of the route's cluster, if the file holds it; Envoy's default (3 retries at once) if not.
fn circuit_breakers(document: &Node, cluster: Option<&str>, imported: &mut Imported) -> Result<(), Problem> {
    let mut clusters = Vec::new();
    find_clusters(document, &mut clusters);
    let found = cluster.and_then(|name| clusters.iter().find(|c| text_string(c.get("name")).as_deref() == Some(name)));
    let thresholds = found.and_then(|c| c.get("circuit_breakers")).and_then(|b| b.get("thresholds")).and_then(|t| match &t.value {
        Value::List(items) => items.iter().find(|item| {
            text_string(item.get("priority")).is_none_or(|priority| priority.eq_ignore_ascii_case("DEFAULT"))
        }),
        _ => None,
    });
    let field = "circuit_breakers.thresholds";
    if let Some(budget) = thresholds.and_then(|t| t.get("retry_budget")) {
        known_keys(budget, &["budget_percent", "min_retry_concurrency", "budget_interval"], "retry_budget")?;
        let percent = match budget.get("budget_percent").map(|p| (p, p.get("value"))) {
            None => 20.0,
            Some((_, Some(Node { value: Value::Integer(n), .. }))) => *n as f64,
            Some((_, Some(Node { value: Value::Real(x), .. }))) => *x,
            Some((percent, _)) => {
                return Err(expected(percent, "retry_budget.budget_percent", "a Percent, as Envoy reads it: {value: 20}"));
            }
        };
        let floor = match budget.get("min_retry_concurrency") {
            None => DEFAULT_MAX_RETRIES,
            Some(Node { value: Value::Integer(n), .. }) if *n >= 0 => *n,
            Some(other) => return Err(expected(other, "retry_budget.min_retry_concurrency", "a whole number ≥ 0")),
        };
        if budget.get("budget_interval").is_some() {
            imported.warn(Some(budget.at), "retry_budget.budget_interval", "counts requests over a window (Envoy 2026): the lab's envoy limiter counts the requests in flight");
        }
        imported.set("limiter", "envoy", format!("{field}.retry_budget of cluster {}", cluster.unwrap_or("?")));
        imported.set("budget_percent", percent, format!("retry_budget.budget_percent {percent}"));
        imported.set("min_retry_concurrency", floor, format!("retry_budget.min_retry_concurrency {floor}"));
    } else {
        let max_retries = match thresholds.and_then(|t| t.get("max_retries")) {
            None => DEFAULT_MAX_RETRIES,
            Some(node) => whole_number(node).ok_or_else(|| expected(node, "circuit_breakers.max_retries", "a whole number ≥ 0"))?,
        };
        let from = match (found, thresholds.and_then(|t| t.get("max_retries"))) {
            (_, Some(_)) => format!("{field}.max_retries {max_retries}: at most that many retries at once"),
            (Some(_), None) => "max_retries unset: Envoy's 3 retries at once".to_owned(),
            (None, None) => {
                imported.warn(None, "circuit_breakers", "the route's cluster is not in this file: Envoy's default of 3 retries at once is assumed");
                "the cluster's max_retries, by default 3 retries at once".to_owned()
            }
        };
        imported.set("limiter", "envoy", from);
        imported.set("budget_percent", 0.0, "no retry_budget: a fixed number of retries at once");
        imported.set("min_retry_concurrency", max_retries, format!("max_retries {max_retries}"));
    }
    imported.set("limiter_scope", "fleet", "the cluster's breaker counts every request through this Envoy");
    Ok(())
}

fn find_clusters<'n>(node: &'n Node, clusters: &mut Vec<&'n Node>) {
    match &node.value {
        Value::Map(entries) => {
            for (key, _, value) in entries {
                match (key.as_str(), &value.value) {
                    ("clusters", Value::List(items)) => clusters.extend(items.iter()),
                    _ => find_clusters(value, clusters),
                }
            }
        }
        Value::List(items) => items.iter().for_each(|item| find_clusters(item, clusters)),
        _ => {}
    }
}

fn text_string(node: Option<&Node>) -> Option<String> {
    text(node).map(str::to_owned)
}
