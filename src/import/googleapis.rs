//! googleapis service configs (`*_grpc_service_config.json`, googleapis/googleapis): gRPC service config JSON,
//! but read at generation time by the Google client generators, not by a gRPC channel. The reading here is the
//! Python one: gapic-generator-python 1.44 (`gapic/schema/api.py`, `_get_retry_and_timeout`; the transport
//! template `base.py.j2`) writes each method's `retries.Retry(initial, maximum, multiplier, predicate,
//! deadline=timeout)` and `default_timeout=timeout`, and google-api-core 2.44 runs them
//! (`retry/retry_base.py`, `retry_unary.py`, `gapic_v1/method.py`, `timeout.py`).
//!
//! So: no attempt cap (`maxAttempts` is never read); retry n waits U(0, min(initial · multiplier^(n−1), maximum)),
//! the lab's `full-jitter-from-base`; the call gives up rather than sleep past the method's `timeout` from its
//! start, and each attempt's timeout is the time left to it; no `timeout` means no deadline at all. A config
//! applies only to a method it names with its service and method both: a service-wide name matches nothing.
//! `--reading channel` reads the file as a gRPC channel would (src/import/grpc.rs).

use super::doc::{Node, Value};
use super::versions::{
    GOOGLE_API_CORE, GOOGLE_API_CORE_FIRST_WAIT_CAPPED, GOOGLE_API_CORE_FULL_JITTER, GRPC_CORE, GRPC_GO, GRPC_JAVA,
};
use super::{Ask, Format, Imported, Input, Problem, choose, expected, grpc, lab_duration, proto_duration, seconds};

pub(super) const FORMAT: Format = Format {
    name: "googleapis",
    about: "googleapis service config (*_grpc_service_config.json) as the generated Google clients run it",
    entry: "method",
    detect,
    near_miss: None,
    translate,
    consumers: &[&GOOGLE_API_CORE, &GRPC_CORE, &GRPC_GO, &GRPC_JAVA],
    readings: &[
        ("gapic", "as the generated Google client libraries run it: google-api-core, no attempt cap, full jitter"),
        ("channel", "as a gRPC channel given the file runs it (gRFC A6), read as the `grpc` format reads it"),
    ],
};

/// google-api-core's `Retry` defaults, which the generated code keeps where the file gives 0 or nothing.
const DEFAULT_INITIAL: std::time::Duration = std::time::Duration::from_secs(1);
const DEFAULT_MAXIMUM: std::time::Duration = std::time::Duration::from_secs(60);
const DEFAULT_MULTIPLIER: f64 = 2.0;

/// A gRPC service config whose every named service is one of Google's APIs (`google.…`, `grafeas.…`): the files
/// googleapis ships for its client generators. A plain channel config names the user's own services.
pub(super) fn looks_like(input: &Input<'_>) -> bool {
    let Ok(document) = input.document() else { return false };
    // Proto field names (`method_config`, `retry_policy`) are the generators' input, never a channel's.
    if document.get("method_config").is_some() && document.get("methodConfig").is_none() {
        return true;
    }
    let Some(Node { value: Value::List(configs), .. }) = document.get("methodConfig") else { return false };
    let mut services = configs.iter().flat_map(|config| match config.get("name").map(|n| &n.value) {
        Some(Value::List(names)) => names.iter().filter_map(|name| super::text(name.get("service"))).collect(),
        _ => Vec::new(),
    });
    let first = services.next();
    first.is_some()
        && first.into_iter().chain(services).all(|service| service.starts_with("google.") || service.starts_with("grafeas."))
}

fn detect(input: &Input<'_>) -> bool {
    looks_like(input)
}

fn translate(input: &Input<'_>, ask: &Ask<'_>) -> Result<Imported, Problem> {
    if ask.reading == Some("channel") {
        let mut imported = (grpc::FORMAT.translate)(input, &Ask { reading: None, ..*ask })?;
        imported.warnings.retain(|warning| !warning.message.starts_with("this looks like a googleapis"));
        imported.warn(
            None,
            "",
            "read as a gRPC channel runs it (gRFC A6, --reading channel); the generated Google client libraries \
             that ship this file retry without an attempt cap, with full jitter, until the method's timeout (the \
             default reading)",
        );
        return Ok(imported);
    }
    let document = input.document()?;
    let mut ignored = Vec::new();
    super::ignored_keys(document, &["methodConfig", "retryThrottling", "loadBalancingConfig", "loadBalancingPolicy"], "", GENERATOR, &mut ignored);
    let configs: &[Node] = match document.get("methodConfig") {
        Some(Node { value: Value::List(configs), .. }) => configs,
        Some(other) => return Err(expected(other, "methodConfig", "a list of method configs")),
        None => &[],
    };
    // Every {service, method} the file names; gapic-generator-python matches a method's config by exactly that
    // pair, so a name without a method (a whole service, or the default) applies to no method.
    let mut entries: Vec<(String, (usize, &Node))> = Vec::new();
    let mut service_wide = Vec::new();
    for (index, config) in configs.iter().enumerate() {
        super::ignored_keys(config, &["name", "timeout", "retryPolicy", "waitForReady", "maxRequestMessageBytes", "maxResponseMessageBytes", "hedgingPolicy"], &format!("methodConfig[{index}]"), GENERATOR, &mut ignored);
        let Some(Node { value: Value::List(names), .. }) = config.get("name") else { continue };
        for name in names {
            match (super::text(name.get("service")), super::text(name.get("method"))) {
                (Some(service), Some(method)) if !method.is_empty() => {
                    entries.push((format!("{service}/{method}"), (index, config)));
                }
                (service, _) => service_wide.push(format!("{}/*", service.unwrap_or("*"))),
            }
        }
    }
    if let Some(wanted) = ask.choice
        && !entries.iter().any(|(name, _)| name == wanted)
    {
        let service = wanted.split_once('/').map_or(wanted, |(service, _)| service);
        let why = if service_wide.iter().any(|name| *name == format!("{service}/*")) {
            format!(
                "{wanted} is covered only by a service-wide name ({service}/*): gapic-generator-python matches a \
                 config by service and method together, so the generated Python client neither retries nor times \
                 out this method; a gRPC channel would apply it (--reading channel)"
            )
        } else if document.get("methodConfig").is_none() && document.get("method_config").is_some() {
            "the file writes proto field names (method_config, retry_policy), which gapic-generator-python never \
             looks up (it reads methodConfig): the generated Python client neither retries nor times out any \
             method; the Ruby generator's protobuf parser reads them"
                .to_owned()
        } else {
            let named: Vec<&str> = entries.iter().map(|(name, _)| name.as_str()).collect();
            format!(
                "no config names {wanted} with its service and method, so the generated Python client neither \
                 retries nor times out it; the file names {}",
                if named.is_empty() { "no method".to_owned() } else { named.join(", ") }
            )
        };
        let mut imported = Imported { entry: Some(wanted.to_owned()), warnings: ignored, ..Imported::default() };
        imported.set("max_attempts", 1, "no config names this method: the generated client sends one attempt");
        imported.set("retry_after", "ignore", "google-api-core reads no Retry-After");
        imported.warn(None, "methodConfig[].name", why);
        return Ok(imported);
    }
    let (entry, (index, config)) = choose(&entries, ask.choice, "method")?;
    let field = format!("methodConfig[{index}]");
    let mut imported = Imported { entry: Some(entry.clone()), warnings: ignored, ..Imported::default() };
    let timeout = config.get("timeout").map(|node| proto_duration(node, &format!("{field}.timeout"))).transpose()?;
    let timeout = timeout.filter(|timeout| !timeout.is_zero());
    match config.get("retryPolicy") {
        Some(policy) => retry_policy(policy, &field, timeout, ask, &mut imported)?,
        None => imported.set("max_attempts", 1, format!("{field}: no retryPolicy, so the generated client sends one attempt")),
    }
    if let Some(timeout) = timeout {
        let shrinking = ask.release(&GOOGLE_API_CORE) >= GOOGLE_API_CORE_FULL_JITTER.since;
        let how = if shrinking { "each attempt's, shrinking to the time left" } else { "each attempt's, whole" };
        let from = format!("{field}.timeout {}: {how}", seconds(timeout));
        imported.set("timeout", lab_duration(timeout), from);
    }
    imported.set("retry_after", "ignore", "google-api-core reads no Retry-After, and its channel no gRPC pushback");
    if document.get("retryThrottling").is_some() {
        imported.warn(None, "retryThrottling", "the generated clients do not read it (a gRPC channel would)");
    }
    Ok(imported)
}

/// Who reads the file, for the warnings about what it skips.
const GENERATOR: &str = "gapic-generator-python";

fn retry_policy(
    policy: &Node,
    field: &str,
    timeout: Option<std::time::Duration>,
    ask: &Ask<'_>,
    imported: &mut Imported,
) -> Result<(), Problem> {
    let duration = |key: &str, default: std::time::Duration| -> Result<(std::time::Duration, String), Problem> {
        match policy.get(key) {
            Some(node) => match proto_duration(node, &format!("{field}.retryPolicy.{key}"))? {
                zero if zero.is_zero() => Ok((default, format!("{key} 0s: google-api-core's default"))),
                value => Ok((value, format!("{field}.retryPolicy.{key} {}", seconds(value)))),
            },
            None => Ok((default, format!("{key} unset: google-api-core's default {}", seconds(default)))),
        }
    };
    super::ignored_keys(
        policy,
        &["maxAttempts", "initialBackoff", "maxBackoff", "backoffMultiplier", "retryableStatusCodes"],
        &format!("{field}.retryPolicy"),
        GENERATOR,
        &mut imported.warnings,
    );
    let (initial, initial_from) = duration("initialBackoff", DEFAULT_INITIAL)?;
    let (maximum, maximum_from) = duration("maxBackoff", DEFAULT_MAXIMUM)?;
    let multiplier = match policy.get("backoffMultiplier").map(|node| (node, &node.value)) {
        None | Some((_, Value::Integer(0))) => DEFAULT_MULTIPLIER,
        Some((_, Value::Integer(n))) if *n > 0 => *n as f64,
        Some((_, Value::Real(x))) if *x == 0.0 => DEFAULT_MULTIPLIER,
        Some((_, Value::Real(x))) if *x > 0.0 && x.is_finite() => *x,
        Some((node, _)) => return Err(expected(node, &format!("{field}.retryPolicy.backoffMultiplier"), "a number > 0")),
    };
    if !imported.holds_for(&GOOGLE_API_CORE, &GOOGLE_API_CORE_FULL_JITTER, ask) {
        return before_2_11(policy, field, (initial, maximum, multiplier), timeout, imported);
    }
    imported.set("strategy", "full-jitter-from-base", "google-api-core: retry n waits U(0, min(initial · multiplier^(n−1), maximum))");
    imported.set("base", lab_duration(initial.min(maximum)), initial_from);
    imported.set("cap", lab_duration(maximum), maximum_from);
    imported.set("multiplier", multiplier, format!("{field}.retryPolicy.backoffMultiplier {multiplier}"));
    if initial > maximum
        && !imported.holds_for(&GOOGLE_API_CORE, &GOOGLE_API_CORE_FIRST_WAIT_CAPPED, ask)
    {
        imported.warn(
            policy.get("initialBackoff").map(|n| n.at),
            &format!("{field}.retryPolicy.initialBackoff"),
            "above maxBackoff: before google-api-core 2.16 the first wait was drawn below initialBackoff itself; \
             the lab caps it",
        );
    }
    if let Some(node) = policy.get("maxAttempts") {
        imported.warn(
            Some(node.at),
            &format!("{field}.retryPolicy.maxAttempts"),
            format!(
                "{}: the generated clients never read it and retry until the method's timeout; a gRPC channel \
                 would stop there (--reading channel)",
                super::shown(node)
            ),
        );
    } else {
        imported.warn(None, &format!("{field}.retryPolicy.maxAttempts"), "unset, and not read anyway: no attempt cap");
    }
    match timeout {
        Some(timeout) => {
            let from = format!("{field}.timeout {}: google-api-core gives up rather than sleep past it", seconds(timeout));
            imported.set("deadline", lab_duration(timeout), from);
            imported.warn(
                None,
                &format!("{field}.timeout"),
                "google-api-core gives each attempt the time left to the deadline (the whole timeout again once \
                 less than 1 s is left); the lab gives every attempt the whole timeout",
            );
        }
        None => imported.warn(
            None,
            &format!("{field}.timeout"),
            "unset: the generated client passes deadline=None, so it retries without end and attempts have no \
             timeout",
        ),
    }
    retry_on(policy, field, imported)
}

/// google-api-core before 2.11: retry n sleeps min(U(0, 2d), maximum) with d = initial · m^(n−1), which no lab
/// strategy draws exactly; the nearest is U(0, min(maximum, 2d)), `full-jitter-from-base` from 2 · initial, which
/// draws the same below the cap and spreads over [0, maximum) what the old loop clamped to maximum. Every attempt
/// had the whole timeout, as the lab's do; the last sleep was cut short to end at the deadline.
fn before_2_11(
    policy: &Node,
    field: &str,
    (initial, maximum, multiplier): (std::time::Duration, std::time::Duration, f64),
    timeout: Option<std::time::Duration>,
    imported: &mut Imported,
) -> Result<(), Problem> {
    let doubled = super::scaled(initial, 2.0).min(maximum);
    imported.set("strategy", "full-jitter-from-base", "google-api-core before 2.11: min(U(0, 2 · initial · m^(n−1)), maximum), approximately");
    imported.set("base", lab_duration(doubled), format!("2 × {field}.retryPolicy.initialBackoff {}", seconds(initial)));
    imported.set("cap", lab_duration(maximum), format!("{field}.retryPolicy.maxBackoff {}", seconds(maximum)));
    imported.set("multiplier", multiplier, format!("{field}.retryPolicy.backoffMultiplier {multiplier}"));
    imported.warn(
        None,
        &format!("{field}.retryPolicy"),
        "APPROXIMATE: this google-api-core drew U(0, 2 · initial · m^(n−1)) and clamped a draw above maxBackoff to it \
         (a share of the waits exactly maxBackoff); the lab draws U(0, min(maxBackoff, that)), spreading them below it",
    );
    match timeout {
        Some(timeout) => {
            imported.set("deadline", lab_duration(timeout), format!("{field}.timeout {}: the retry's deadline", seconds(timeout)));
            imported.warn(
                None,
                &format!("{field}.timeout"),
                "this google-api-core cut the last sleep short to end at the deadline and tried once more there; the \
                 lab gives up instead",
            );
        }
        None => imported.warn(None, &format!("{field}.timeout"), "unset: the generated client retries without end"),
    }
    retry_on(policy, field, imported)
}

/// `retryableStatusCodes` as the server model's answers.
fn retry_on(policy: &Node, field: &str, imported: &mut Imported) -> Result<(), Problem> {
    let Some(codes_node) = policy.get("retryableStatusCodes") else {
        imported.set("retry_on", Vec::<toml::Value>::new(), "no retryableStatusCodes: nothing is retried");
        return Ok(());
    };
    let Value::List(codes) = &codes_node.value else {
        return Err(expected(codes_node, &format!("{field}.retryPolicy.retryableStatusCodes"), "a list of status code names"));
    };
    let mut retry_on: Vec<&str> = Vec::new();
    for (i, code) in codes.iter().enumerate() {
        let name = match &code.value {
            Value::Text(name) if grpc::CODES[1..].contains(&name.as_str()) => name.as_str(),
            _ => {
                let message = format!(
                    "{}: the generator looks the name up in grpc.StatusCode, which holds only upper-case names ({})",
                    super::shown(code),
                    grpc::CODES[1..].join(", ")
                );
                return Err(Problem::new(Some(code.at), &format!("{field}.retryPolicy.retryableStatusCodes[{i}]"), message));
            }
        };
        let outcomes = grpc::outcomes_of(name);
        if outcomes.is_empty() {
            imported.warn(Some(code.at), &format!("{field}.retryPolicy.retryableStatusCodes[{i}]"), format!("{name}: the server model never answers it"));
        }
        for outcome in outcomes {
            if !retry_on.contains(outcome) {
                retry_on.push(outcome);
            }
        }
    }
    let values: Vec<toml::Value> = retry_on.iter().map(|outcome| toml::Value::from(*outcome)).collect();
    imported.set("retry_on", values, format!("{field}.retryPolicy.retryableStatusCodes, as the server model answers them"));
    Ok(())
}
