//! gRPC service config (JSON): a `methodConfig` entry's `retryPolicy`, and the channel's `retryThrottling`.
//! Source: gRFC A6 "gRPC Retry Design" (grpc/proposal A6-client-retries.md, with the 2024 jitter change of
//! grpc/proposal#452) and grpc/service_config/service_config.proto (grpc/grpc-proto); where implementations
//! part from it, the C core as grpcio 1.85 runs it (retry_service_config.cc, backoff.cc) and grpc-go 1.85.
//!
//! The n-th retry waits min(maxBackoff, initialBackoff · backoffMultiplier^(n−1)) · U(0.8, 1.2): the lab's
//! `grpc-jitter`. `maxAttempts` counts every attempt (at least 2; above 5 gRPC uses 5). Throttling keeps
//! `maxTokens` tokens per channel: a failure takes 1, a success gives back `tokenRatio`, and retries stop while the
//! count is at or below half of `maxTokens`: the lab's `grpc` limiter.

use super::doc::{Node, Value};
use super::{Ask, Format, expected, ignored_keys, seconds, Imported, Input, Problem, choose, lab_duration, proto_duration, shown};
use super::versions::{self, Change, Consumer};
use std::time::Duration;

pub(super) const FORMAT: Format = Format {
    name: "grpc",
    about: "gRPC service config JSON: methodConfig retryPolicy, retryThrottling (gRFC A6)",
    entry: "method",
    detect,
    near_miss: None,
    translate,
    consumers: &[&versions::GRPC_CORE, &versions::GRPC_GO, &versions::GRPC_JAVA],
    readings: &[],
};

/// Who reads a gRPC service config, for the warnings about what they skip.
const CONSUMER: &str = "gRPC (the C core, grpc-go, grpc-java)";

/// gRPC clamps `maxAttempts` to this (gRFC A6: "values greater than 5 are treated as 5").
const MAX_ATTEMPTS_LIMIT: i64 = 5;
/// `retryThrottling.maxTokens` must lie in (0, 1000].
const MAX_TOKENS_LIMIT: f64 = 1000.0;

const TOP_KEYS: &[&str] = &["methodConfig", "retryThrottling", "loadBalancingPolicy", "loadBalancingConfig", "healthCheckConfig"];
const METHOD_KEYS: &[&str] = &[
    "name",
    "waitForReady",
    "timeout",
    "maxRequestMessageBytes",
    "maxResponseMessageBytes",
    "retryPolicy",
    "hedgingPolicy",
];
const THROTTLING_KEYS: &[&str] = &["maxTokens", "tokenRatio"];
const NAME_KEYS: &[&str] = &["service", "method"];
const RETRY_KEYS: &[&str] =
    &["maxAttempts", "initialBackoff", "maxBackoff", "backoffMultiplier", "retryableStatusCodes", "perAttemptRecvTimeout"];

/// gRPC's status codes, by number (grpc/grpc doc/statuscodes.md).
pub(super) const CODES: &[&str] = &[
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// What the server model answers that a gRPC client would see as each code: its 503 (overloaded, fail-fast), 502
/// (a transient error) and connection resets are UNAVAILABLE; its rate limiter's 429 is RESOURCE_EXHAUSTED; its
/// permanent error (422) is INVALID_ARGUMENT; an attempt cut by its per-attempt timeout is DEADLINE_EXCEEDED.
pub(super) fn outcomes_of(code: &str) -> &'static [&'static str] {
    match code {
        "UNAVAILABLE" => &["502", "503", "reset"],
        "RESOURCE_EXHAUSTED" => &["429"],
        "INVALID_ARGUMENT" => &["422"],
        "DEADLINE_EXCEEDED" => &["timeout"],
        _ => &[],
    }
}

fn detect(input: &Input<'_>) -> bool {
    input.document().is_ok_and(|document| {
        // A service config choice (the DNS TXT record's form) wraps one in `serviceConfig`.
        let choice = document.get("serviceConfig").is_some_and(|inner| inner.get("methodConfig").is_some());
        document.get("methodConfig").is_some() || document.get("retryThrottling").is_some() || choice
    })
}

fn translate(input: &Input<'_>, ask: &Ask<'_>) -> Result<Imported, Problem> {
    let mut document = input.document()?.clone();
    if !matches!(document.value, Value::Map(_)) {
        return Err(Problem::new(Some(document.at), "", format!("expected a JSON object, found {}", document.kind())));
    }
    let mut early = Vec::new();
    camel_case_keys(&mut document, &mut early);
    let document = &document;
    ignored_keys(document, TOP_KEYS, "", CONSUMER, &mut early);
    let mut entries = Vec::new();
    let mut unnamed = Vec::new();
    match document.get("methodConfig") {
        None => {}
        Some(Node { value: Value::List(items), .. }) => {
            for (i, item) in items.iter().enumerate() {
                match names(item, i, &mut early)? {
                    Some(names) => entries.push((names, (i, item))),
                    None => {
                        unnamed.push((i, item));
                        early.push(Problem::new(
                            Some(item.at),
                            &format!("methodConfig[{i}].name"),
                            "no name: gRPC skips this method config (the default for every method is \"name\": [{}])",
                        ));
                    }
                }
            }
        }
        Some(other) => return Err(expected(other, "methodConfig", "a list of method configs")),
    }
    let mut seen: Vec<&str> = Vec::new();
    for (names, (i, item)) in &entries {
        for name in names.split(", ") {
            if seen.contains(&name) {
                let message = format!("{name} is named by two method configs; gRPC refuses the service config");
                return Err(Problem::new(Some(item.at), &format!("methodConfig[{i}].name"), message));
            }
            seen.push(name);
        }
    }
    // An invalid retry policy anywhere makes gRPC refuse the whole service config, whichever method is asked for.
    for (i, item) in entries.iter().map(|(_, entry)| *entry).chain(unnamed) {
        if let Some(policy) = item.get("retryPolicy") {
            let field = format!("methodConfig[{i}].retryPolicy");
            retry_policy(policy, &field, None, ask, &mut Imported::default()).map_err(|problem| Problem {
                message: format!("{} (gRPC refuses the whole service config, every method with it)", problem.message),
                ..problem
            })?;
        }
    }
    if document.get("serviceConfig").is_some() {
        early.push(Problem::new(
            document.get("serviceConfig").map(|node| node.at),
            "serviceConfig",
            "a service config choice (the form a DNS TXT record holds): a resolver picks serviceConfig out of it, but \
             given to a channel as its service config it is read at the top level, where gRPC finds no \
             methodConfig and retries nothing",
        ));
    }
    let found = match ask.choice {
        Some(wanted) => match lookup(&entries, wanted) {
            Some(found) => Some(found),
            None if entries.is_empty() => None,
            None => {
                let listed: Vec<&str> = entries.iter().map(|(names, _)| names.as_str()).collect();
                early.push(Problem::new(
                    None,
                    "methodConfig[].name",
                    format!(
                        "no method config names {wanted}, its service, or the default: gRPC sends it once, with no \
                         deadline; the file names {}",
                        listed.join("; ")
                    ),
                ));
                None
            }
        },
        None => Some(choose(&entries, None, "method")?),
    };
    let Some((entry, (index, method))) = found else {
        let mut imported = Imported { entry: ask.choice.map(str::to_owned), warnings: early, ..Imported::default() };
        imported.set("max_attempts", 1, "no method config applies: gRPC sends one attempt");
        imported.set("retry_after", "ignore", "a gRPC client reads no HTTP Retry-After");
        return Ok(imported);
    };
    let mut imported = Imported { entry: Some(entry.clone()), warnings: early, ..Imported::default() };
    if super::googleapis::looks_like(input) {
        imported.warn(
            None,
            "",
            "this looks like a googleapis service config: the generated Google client libraries that ship it run \
             it differently (no attempt cap, full jitter, the method's timeout as the deadline; --format \
             googleapis); this is how a gRPC channel given the file runs it",
        );
    }
    let field = format!("methodConfig[{index}]");
    let deadline = method.get("timeout").map(|node| proto_duration(node, &format!("{field}.timeout"))).transpose()?;
    match (method.get("retryPolicy"), method.get("hedgingPolicy")) {
        (Some(_), Some(hedging)) => {
            let message = "a method config holds a retryPolicy or a hedgingPolicy, not both (gRFC A6)";
            return Err(Problem::new(Some(hedging.at), &format!("{field}.hedgingPolicy"), message));
        }
        (Some(policy), None) => retry_policy(policy, &format!("{field}.retryPolicy"), deadline, ask, &mut imported)?,
        (None, Some(hedging)) => {
            imported.set("max_attempts", 1, format!("{field}: a hedgingPolicy, which this [client] table does not model"));
            imported.set("retry_after", "ignore", "a gRPC client reads no HTTP Retry-After");
            imported.set("pushback", "honour", "a pushback also spaces gRPC's hedges");
            imported.warn(
                Some(hedging.at),
                &format!("{field}.hedgingPolicy"),
                "hedging is modelled by the fanout model (`hedge = \"fixed\"`, `hedge_delay`; scenarios/hedging.toml), \
                 not by the server model's clients: this block sends one attempt per call (and grpc-go and the C \
                 core behind grpcio ignore hedgingPolicy; gRPC Java, .NET and Node run it)",
            );
        }
        (None, None) => {
            imported.set("max_attempts", 1, format!("{field}: no retryPolicy, so gRPC sends one attempt"));
            imported.set("retry_after", "ignore", "a gRPC client reads no HTTP Retry-After");
        }
    }
    if let (None, Some(deadline)) = (method.get("retryPolicy"), deadline) {
        imported.set("timeout", lab_duration(deadline), "the call's deadline ends its one attempt");
    }
    if let Some(deadline) = deadline {
        let from = format!("{field}.timeout {}: the call's deadline", seconds(deadline));
        imported.set("deadline", lab_duration(deadline), from);
    }
    if let Some(throttling) = document.get("retryThrottling") {
        throttling_policy(throttling, &mut imported)?;
    }
    Ok(imported)
}

/// `service/method`, `service/*` or `*` for each of a method config's names, joined by ", "; `None` for a config
/// with no names, which gRPC skips.
pub(super) fn names(method: &Node, index: usize, warnings: &mut Vec<Problem>) -> Result<Option<String>, Problem> {
    if !matches!(method.value, Value::Map(_)) {
        return Err(expected(method, &format!("methodConfig[{index}]"), "a method config (a JSON object)"));
    }
    ignored_keys(method, METHOD_KEYS, &format!("methodConfig[{index}]"), CONSUMER, warnings);
    let field = format!("methodConfig[{index}].name");
    let Some(list) = method.get("name") else { return Ok(None) };
    let Value::List(items) = &list.value else { return Err(expected(list, &field, "a list of {service, method}")) };
    let mut names = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let field = format!("{field}[{i}]");
        ignored_keys(item, NAME_KEYS, &field, CONSUMER, warnings);
        let text = |key: &str| match item.get(key).map(|node| &node.value) {
            None => Ok(String::new()),
            Some(Value::Text(text)) => Ok(text.clone()),
            Some(_) => Err(expected(item.get(key).unwrap_or(item), &format!("{field}.{key}"), "text")),
        };
        let (service, method_name) = (text("service")?, text("method")?);
        if service.is_empty() && !method_name.is_empty() {
            let message = "a method needs its service (gRFC A6: an empty service means every method)";
            return Err(Problem::new(Some(item.at), &field, message));
        }
        names.push(match (service.is_empty(), method_name.is_empty()) {
            (true, _) => "*".to_owned(),
            (false, true) => format!("{service}/*"),
            (false, false) => format!("{service}/{method_name}"),
        });
    }
    Ok((!names.is_empty()).then(|| names.join(", ")))
}

/// gRPC's own lookup for `service/method`: the config naming that method, else its service's, else the default.
fn lookup<'e>(entries: &'e [(String, (usize, &'e Node))], wanted: &str) -> Option<&'e (String, (usize, &'e Node))> {
    let service = wanted.split_once('/').map_or(wanted, |(service, _)| service);
    let has = |name: &str| entries.iter().find(|(names, _)| names.split(", ").any(|listed| listed == name));
    has(wanted).or_else(|| has(&format!("{service}/*"))).or_else(|| has("*"))
}

/// The C core keeps durations in whole milliseconds, truncating (src/core/util/time.h): a backoff under 1 ms reads
/// as 0 and the service config is refused; a wait min(cap, b_n) · U(0.8, 1.2) that truncates to 0 ms is never sent,
/// so the call hangs until its deadline (grpcio 1.85.3, both measured by scripts/real-imports).
fn whole_milliseconds(policy: &Node, field: &str, base: Duration, cap: Duration, imported: &mut Imported) {
    const MILLISECOND: Duration = Duration::from_millis(1);
    for (key, value) in [("initialBackoff", base), ("maxBackoff", cap)] {
        if value < MILLISECOND {
            imported.warn(
                policy.get(key).map(|node| node.at),
                &format!("{field}.{key}"),
                "under 1 ms: the C core (grpcio) keeps whole milliseconds, reads 0 and refuses the whole service \
                 config, so every call on the channel fails; grpc-go takes it",
            );
            return;
        }
    }
    let shortest = base.min(cap);
    if shortest * 4 < MILLISECOND * 5 {
        let message = format!(
            "a wait can be as short as 0.8 × {} < 1 ms: the C core (grpcio 1.85.3) truncates waits to whole \
             milliseconds and never sends a retry whose wait truncates to 0, so that call hangs until its deadline",
            seconds(shortest)
        );
        imported.warn(None, field, message);
    }
}

/// The implementations that drew full jitter before A6's 2024 change, and the change that ended it.
const FULL_JITTER_UNTIL: &[(&Consumer, &Change)] = &[
    (&versions::GRPC_GO, &versions::GRPC_GO_TWENTY_PERCENT),
    (&versions::GRPC_JAVA, &versions::GRPC_JAVA_FORTY_PERCENT),
    (&versions::GRPC_JS, &versions::GRPC_JS_TWENTY_PERCENT),
];

/// The backoff's strategy: ±20% (`grpc-jitter`), as gRFC A6 has said since 2024 and every implementation draws
/// now, unless `--version` names a release from before its change: full jitter, U(0, b_n); or grpc-java 1.71 to
/// 1.79, which drew U(0.4, 1.2) × b_n by mistake (grpc/grpc-java#11858). That is `proportional-jitter` from a base
/// and cap of 0.4 times the file's, with q = 2, exactly; the factor 0.4 is returned for the caller to apply.
fn jitter(field: &str, ask: &Ask<'_>, imported: &mut Imported) -> Option<f64> {
    let java = &versions::GRPC_JAVA;
    if ask.named(java) && (versions::GRPC_JAVA_FORTY_PERCENT.since..versions::GRPC_JAVA_TWENTY_PERCENT.since).contains(&ask.release(java)) {
        imported.set("strategy", "proportional-jitter", format!("{field}: grpc-java 1.71-1.79 draws U(0.4, 1.2) × the capped exponential"));
        imported.holds_for(java, &versions::GRPC_JAVA_TWENTY_PERCENT, ask);
        return Some(0.4);
    }
    let older = FULL_JITTER_UNTIL
        .iter()
        .find(|(consumer, change)| ask.named(consumer) && ask.release(consumer) < change.since);
    if let Some((consumer, change)) = older {
        let from = format!("{field}: full jitter, U(0, the capped exponential), as gRPC drew it before gRFC A6's 2024 change");
        imported.set("strategy", "full-jitter-from-base", from);
        imported.holds_for(consumer, change, ask);
        return None;
    }
    imported.set("strategy", "grpc-jitter", format!("{field}: gRFC A6 backoff, U(0.8, 1.2) × the capped exponential"));
    imported.read_as(
        "the C core, grpc-go 1.69 or later, grpc-java 1.80 or later and grpc-js 1.14 or later: ±20% jitter (before \
         those releases full jitter: --version grpc-go=1.68, grpc-java=1.70 or grpc-js=1.13; grpc-java 1.71 to 1.79 \
         drew U(0.4, 1.2): --version grpc-java=1.79)"
            .to_owned(),
    );
    None
}

fn retry_policy(
    policy: &Node,
    field: &str,
    deadline: Option<std::time::Duration>,
    ask: &Ask<'_>,
    imported: &mut Imported,
) -> Result<(), Problem> {
    ignored_keys(policy, RETRY_KEYS, field, CONSUMER, &mut imported.warnings);
    let required = |key: &str| {
        policy.get(key).ok_or_else(|| {
            Problem::new(Some(policy.at), &format!("{field}.{key}"), "missing; gRFC A6 requires it in a retryPolicy")
        })
    };
    let attempts_node = required("maxAttempts")?;
    let Value::Integer(attempts) = attempts_node.value else {
        return Err(expected(attempts_node, &format!("{field}.maxAttempts"), "a whole number ≥ 2"));
    };
    if attempts < 2 {
        let message = format!("{attempts} is below 2; gRPC refuses the policy (a retry policy needs a second attempt)");
        return Err(Problem::new(Some(attempts_node.at), &format!("{field}.maxAttempts"), message));
    }
    let used = attempts.min(MAX_ATTEMPTS_LIMIT);
    let scale = jitter(field, ask, imported);
    imported.set("max_attempts", used, format!("{field}.maxAttempts = {attempts}: every attempt, the first included"));
    if attempts > MAX_ATTEMPTS_LIMIT {
        imported.warn(
            Some(attempts_node.at),
            &format!("{field}.maxAttempts"),
            format!("{attempts} is above gRPC's limit of {MAX_ATTEMPTS_LIMIT}; gRPC treats it as {MAX_ATTEMPTS_LIMIT}"),
        );
    }
    // grpc-java, the C core and grpc-js refuse a duration without its leading 0 (".1s"); grpc-go reads it.
    let strict = [&versions::GRPC_JAVA, &versions::GRPC_CORE, &versions::GRPC_JS].into_iter().find(|c| ask.named(c));
    let base = positive_duration(required("initialBackoff")?, &format!("{field}.initialBackoff"), strict, imported)?;
    let cap = positive_duration(required("maxBackoff")?, &format!("{field}.maxBackoff"), strict, imported)?;
    whole_milliseconds(policy, field, base, cap, imported);
    imported.set("base", lab_duration(base), format!("{field}.initialBackoff {}", seconds(base)));
    imported.set("cap", lab_duration(cap), format!("{field}.maxBackoff {}", seconds(cap)));
    if cap < base {
        imported.warn(
            Some(required("maxBackoff")?.at),
            &format!("{field}.maxBackoff"),
            "shorter than initialBackoff: every retry waits about maxBackoff",
        );
        imported.set("base", lab_duration(cap), format!("{field}.initialBackoff, above maxBackoff: capped to it"));
    }
    if let Some(scale) = scale {
        let (base, cap) = (base.min(cap), cap);
        imported.set("base", lab_duration(super::scaled(base, scale)), format!("{scale} × {field}.initialBackoff {}", seconds(base)));
        imported.set("cap", lab_duration(super::scaled(cap, scale)), format!("{scale} × {field}.maxBackoff {}", seconds(cap)));
        imported.set("jitter_fraction", 2.0, "U(0.4, 1.2) is 0.4 × U(1, 3): a stretch of up to 2 times the wait");
    }
    let multiplier_node = required("backoffMultiplier")?;
    let multiplier = match multiplier_node.value {
        Value::Integer(n) if n > 0 => n as f64,
        Value::Real(x) if x > 0.0 && x.is_finite() => x,
        _ => return Err(expected(multiplier_node, &format!("{field}.backoffMultiplier"), "a number > 0")),
    };
    imported.set("multiplier", multiplier, format!("{field}.backoffMultiplier {}", shown(multiplier_node)));
    if multiplier < 1.0 {
        imported.warn(
            Some(multiplier_node.at),
            &format!("{field}.backoffMultiplier"),
            "below 1: the waits shrink; the lab follows A6's min(initialBackoff · m^(n−1), maxBackoff), while the C \
             core (grpcio) starts from min(initialBackoff, maxBackoff) and shrinks from there",
        );
    }
    let codes = status_codes(required("retryableStatusCodes")?, &format!("{field}.retryableStatusCodes"), imported)?;
    let per_attempt = policy
        .get("perAttemptRecvTimeout")
        .map(|node| positive_duration(node, &format!("{field}.perAttemptRecvTimeout"), strict, imported))
        .transpose()?;
    let mut retry_on: Vec<&str> = Vec::new();
    for code in &codes {
        for outcome in outcomes_of(code) {
            if !retry_on.contains(outcome) {
                retry_on.push(outcome);
            }
        }
    }
    match (per_attempt, deadline) {
        (Some(timeout), _) => {
            imported.set("timeout", lab_duration(timeout), format!("{field}.perAttemptRecvTimeout {}", seconds(timeout)));
            imported.warn(
                policy.get("perAttemptRecvTimeout").map(|node| node.at),
                &format!("{field}.perAttemptRecvTimeout"),
                "not part of gRFC A6: only the C core reads it, and only with the channel argument \
                 grpc.experimental.enable_hedging; elsewhere attempts run until the deadline",
            );
            if !retry_on.contains(&"timeout") {
                retry_on.push("timeout");
            }
        }
        (None, Some(deadline)) => {
            imported.set("timeout", lab_duration(deadline), "the call's deadline: gRPC has no per-attempt timeout here");
            retry_on.retain(|outcome| *outcome != "timeout");
            imported.warn(
                None,
                &format!("{field}.perAttemptRecvTimeout"),
                "unset: an attempt runs until the call's deadline, so a slow answer ends the call instead of being \
                 retried",
            );
        }
        (None, None) => imported.warn(
            None,
            field,
            "neither a per-attempt timeout nor a deadline: an attempt waits as long as the server takes",
        ),
    }
    let listed = codes.join(", ");
    if retry_on.is_empty() {
        imported.warn(None, &format!("{field}.retryableStatusCodes"), "no code the server model answers: nothing is retried");
    }
    let values: Vec<toml::Value> = retry_on.iter().map(|outcome| toml::Value::from(*outcome)).collect();
    imported.set("retry_on", values, format!("{field}.retryableStatusCodes [{listed}], as the server model answers them"));
    imported.set("retry_after", "ignore", "a gRPC client reads no HTTP Retry-After");
    imported.set("pushback", "honour", "gRPC retries after the server's pushback (grpc-retry-pushback-ms) and restarts the backoff");
    Ok(())
}

/// The codes of `retryableStatusCodes`, by name; a code the server model never answers gets a warning.
fn status_codes(node: &Node, field: &str, imported: &mut Imported) -> Result<Vec<String>, Problem> {
    let Value::List(items) = &node.value else { return Err(expected(node, field, "a list of status code names")) };
    if items.is_empty() {
        return Err(Problem::new(Some(node.at), field, "empty; gRFC A6 requires at least one code"));
    }
    let mut codes = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let code = match &item.value {
            Value::Text(name) if CODES.contains(&name.as_str()) => name.clone(),
            Value::Text(name) if CODES.contains(&name.to_ascii_uppercase().as_str()) => {
                let code = name.to_ascii_uppercase();
                imported.warn(Some(item.at), &format!("{field}[{i}]"), format!(
                    "{name:?}: A6 allows any case, but the C core (grpcio) refuses the whole service config unless \
                     it reads {code:?}, and every call then fails with INVALID_ARGUMENT"
                ));
                code
            }
            Value::Integer(n) if (0..CODES.len() as i64).contains(n) => {
                let code = CODES[*n as usize].to_owned();
                imported.warn(Some(item.at), &format!("{field}[{i}]"), format!(
                    "{n}: A6 and grpc-go accept numbers, but the C core (grpcio) refuses the whole service config \
                     unless it reads {code:?}"
                ));
                code
            }
            _ => {
                let message = format!("{} is not a gRPC status code; valid: {}", shown(item), CODES[1..].join(", "));
                return Err(Problem::new(Some(item.at), &format!("{field}[{i}]"), message));
            }
        };
        if code == "OK" {
            return Err(Problem::new(Some(item.at), &format!("{field}[{i}]"), "OK is not an error: it cannot be retried"));
        }
        if outcomes_of(&code).is_empty() {
            imported.warn(
                Some(item.at),
                &format!("{field}[{i}]"),
                format!("{code}: the server model never answers it (it answers UNAVAILABLE, RESOURCE_EXHAUSTED, INVALID_ARGUMENT and DEADLINE_EXCEEDED), so it changes nothing here"),
            );
        }
        codes.push(code);
    }
    Ok(codes)
}

fn throttling_policy(node: &Node, imported: &mut Imported) -> Result<(), Problem> {
    ignored_keys(node, THROTTLING_KEYS, "retryThrottling", CONSUMER, &mut imported.warnings);
    let number = |key: &str| -> Result<(f64, &Node), Problem> {
        let field = format!("retryThrottling.{key}");
        let value = node.get(key).ok_or_else(|| Problem::new(Some(node.at), &field, "missing; gRFC A6 requires it"))?;
        match value.value {
            Value::Integer(n) => Ok((n as f64, value)),
            Value::Real(x) if x.is_finite() => Ok((x, value)),
            _ => Err(expected(value, &field, "a number")),
        }
    };
    let (max_tokens, tokens_node) = number("maxTokens")?;
    if max_tokens <= 0.0 {
        let message = format!("{max_tokens} is not above 0; gRPC refuses the service config");
        return Err(Problem::new(Some(tokens_node.at), "retryThrottling.maxTokens", message));
    }
    if max_tokens > MAX_TOKENS_LIMIT {
        imported.warn(
            Some(tokens_node.at),
            "retryThrottling.maxTokens",
            format!("{max_tokens} is above A6's limit of {MAX_TOKENS_LIMIT}: grpc-go refuses the service config, the C core and Java accept it"),
        );
    }
    let (ratio, ratio_node) = number("tokenRatio")?;
    if ratio <= 0.0 {
        return Err(Problem::new(Some(ratio_node.at), "retryThrottling.tokenRatio", "must be greater than 0"));
    }
    let kept = (ratio * 1000.0).trunc() / 1000.0;
    if kept != ratio {
        imported.warn(
            Some(ratio_node.at),
            "retryThrottling.tokenRatio",
            format!("{ratio} has more than 3 decimals; gRPC keeps {kept}"),
        );
    }
    imported.set("limiter", "grpc", "retryThrottling: gRPC's token bucket, retries only above half of maxTokens");
    imported.set("max_tokens", max_tokens, format!("retryThrottling.maxTokens {}", shown(tokens_node)));
    imported.set("token_ratio", kept, format!("retryThrottling.tokenRatio {}", shown(ratio_node)));
    imported.set("limiter_scope", "client", "gRPC keeps the tokens per channel: one bucket per client");
    Ok(())
}

/// Renames keys written in another case (`MaxAttempts`, as grpc-go's examples write them) to gRPC's camelCase, with
/// a warning: grpc-go matches keys in any case, the C core (grpcio) only in camelCase and ignores the others.
fn camel_case_keys(node: &mut Node, warnings: &mut Vec<Problem>) {
    let all = [TOP_KEYS, METHOD_KEYS, RETRY_KEYS, THROTTLING_KEYS, NAME_KEYS];
    match &mut node.value {
        Value::Map(entries) => {
            for (key, at, value) in entries.iter_mut() {
                if let Some(canonical) = all.iter().flat_map(|keys| keys.iter()).find(|k| k.eq_ignore_ascii_case(key) && *k != key) {
                    warnings.push(Problem::new(Some(*at), key, format!(
                        "grpc-go reads `{key}` as `{canonical}`; the C core (grpcio) reads only `{canonical}` and ignores this one"
                    )));
                    *key = (*canonical).to_owned();
                }
                camel_case_keys(value, warnings);
            }
        }
        Value::List(items) => items.iter_mut().for_each(|item| camel_case_keys(item, warnings)),
        _ => {}
    }
}

fn positive_duration(
    node: &Node,
    field: &str,
    strict: Option<&Consumer>,
    imported: &mut Imported,
) -> Result<std::time::Duration, Problem> {
    let duration = proto_duration(node, field)?;
    if let (Some(consumer), Value::Text(text)) = (strict, &node.value)
        && text.starts_with('.')
    {
        let message = format!("{text:?}: {} refuses a duration without its leading 0, and with it the whole service config; write \"0{text}\"", consumer.title);
        return Err(Problem::new(Some(node.at), field, message));
    }
    if matches!(&node.value, Value::Text(text) if text.starts_with('.')) {
        imported.warn(Some(node.at), field, format!(
            "{}: grpc-go reads a duration without its leading 0, the C core (grpcio) refuses the service config; write \"0{}\"",
            shown(node), match &node.value { Value::Text(text) => text.as_str(), _ => "" }
        ));
    }
    if duration.is_zero() {
        return Err(Problem::new(Some(node.at), field, "must be longer than 0s (gRFC A6)"));
    }
    Ok(duration)
}

