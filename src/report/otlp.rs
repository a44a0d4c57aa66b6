//! OpenTelemetry traces as OTLP/JSON (an `ExportTraceServiceRequest`, as a collector's `/v1/traces` takes it):
//! every attempt of one replicate as a span.
//!
//! Layout: one trace per owner (a request, a client, a message, a station), whose root span is the owner's
//! whole operation (from its first attempt's start to its last attempt's end); below it one span per attempt,
//! its parent the root, or in the layered model the caller's attempt that sent it (one span per hop). An
//! attempt after the first carries `http.request.resend_count` (OpenTelemetry's HTTP semantic convention: the
//! attempts before it); a queue's receive carries `retrylab.delivery_count` instead (the semantic conventions
//! have no system-neutral delivery count). The outcome is the span's status (OK, or ERROR with the outcome as
//! its message). Times are simulated: nanoseconds since [`EPOCH_UNIX_SECONDS`], 2026-01-01T00:00:00Z. Ids are
//! hex as OTLP/JSON writes them, derived from the seed, so the same run gives the same file.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::trace::TraceContext;
use crate::engine::mix64;
use crate::model::trace::Span;

/// The simulated t = 0 on the wall clock: 2026-01-01T00:00:00Z.
pub(crate) const EPOCH_UNIX_SECONDS: u64 = 1_767_225_600;

/// Span kinds and status codes as the OTLP protobuf numbers them.
const KIND_INTERNAL: u8 = 1;
const KIND_CLIENT: u8 = 3;
const KIND_PRODUCER: u8 = 4;
const KIND_CONSUMER: u8 = 5;
const STATUS_OK: u8 = 1;
const STATUS_ERROR: u8 = 2;

/// A JSON string literal.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

fn unix_nanos(time: crate::time::SimTime) -> String {
    (u128::from(EPOCH_UNIX_SECONDS) * 1_000_000_000 + u128::from(time.as_nanos())).to_string()
}

/// Whether an attempt succeeded.
fn succeeded(span: &Span) -> bool {
    span.status == 200 || matches!(span.outcome, "success" | "processed" | "duplicate" | "sent")
}

/// A 64-bit span id, never 0: `salt` names the trace, `n` the span within it (0 the root).
fn span_id(salt: u64, n: u64) -> String {
    format!("{:016x}", mix64(salt ^ mix64(n)) | 1)
}

/// One attribute: `value` is already a typed OTLP value (`{"intValue":"3"}`).
fn attribute(key: &str, value: String) -> String {
    format!("{{\"key\":{},\"value\":{value}}}", quoted(key))
}

fn text(value: &str) -> String {
    format!("{{\"stringValue\":{}}}", quoted(value))
}

fn integer(value: u64) -> String {
    format!("{{\"intValue\":\"{value}\"}}")
}

/// The trace as OTLP/JSON bytes.
pub(crate) fn otlp_json(spans: &[Span], context: &TraceContext<'_>) -> Vec<u8> {
    let mut owners: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (index, span) in spans.iter().enumerate() {
        owners.entry(span.owner).or_default().push(index);
    }
    let (attempt_kind, root_kind) = match context.model {
        "queue" => (KIND_CONSUMER, KIND_PRODUCER),
        "periodic-sync" => (KIND_PRODUCER, KIND_INTERNAL),
        _ => (KIND_CLIENT, KIND_INTERNAL),
    };
    let trace_salt = mix64(context.seed ^ 0x6f74_6c70_7472_6163);
    let mut out = String::with_capacity(512 + spans.len() * 420);
    let resource = [
        attribute("service.name", text("retrylab")),
        attribute("retrylab.scenario", text(context.scenario)),
        attribute("retrylab.model", text(context.model)),
        attribute("retrylab.point", integer(context.point as u64)),
        attribute("retrylab.point_id", text(context.point_id)),
        attribute("retrylab.replicate", integer(u64::from(context.replicate))),
        attribute("retrylab.seed", text(&context.seed.to_string())),
        attribute("retrylab.strategy", text(context.strategy)),
    ];
    let _ = write!(
        out,
        "{{\"resourceSpans\":[{{\"resource\":{{\"attributes\":[{}]}},\"scopeSpans\":[{{\"scope\":{{\"name\":\"retrylab\",\
         \"version\":{}}},\"spans\":[",
        resource.join(","),
        quoted(env!("CARGO_PKG_VERSION")),
    );
    let mut first = true;
    let mut push = |span: String, out: &mut String| {
        out.push_str(if first { "\n" } else { ",\n" });
        first = false;
        out.push_str(&span);
    };
    for (&owner, indices) in &owners {
        let salt = mix64(trace_salt ^ u64::from(owner));
        let trace_id = format!("{:016x}{:016x}", trace_salt | 1, u64::from(owner) + 1);
        let root = span_id(salt, 0);
        // Spans with an id of their own keep it; the others are numbered from 1 in order, past every own id.
        let own_ids: std::collections::BTreeSet<u32> =
            indices.iter().map(|&i| spans[i].id).filter(|&id| id > 0).collect();
        let start = indices.iter().map(|&i| spans[i].start).min().unwrap_or_default();
        let end = indices.iter().map(|&i| spans[i].end).max().unwrap_or_default();
        // The operation succeeded if an attempt of the top layer did.
        let ok = indices.iter().any(|&i| spans[i].layer == 0 && succeeded(&spans[i]));
        let name = format!("{} {owner}", context.owner_label);
        push(span_json(&trace_id, &root, None, &name, root_kind, (start, end), &[], ok, "failed"), &mut out);
        for (number, &index) in indices.iter().enumerate() {
            let span = &spans[index];
            let id_number = if span.id > 0 { u64::from(span.id) } else { (1u64 << 32) + number as u64 };
            let id = span_id(salt, id_number);
            let parent = if span.parent > 0 && own_ids.contains(&span.parent) {
                span_id(salt, u64::from(span.parent))
            } else {
                root.clone()
            };
            let mut attributes = vec![
                attribute("retrylab.attempt", integer(u64::from(span.attempt))),
                attribute("retrylab.outcome", text(span.outcome)),
            ];
            if span.attempt > 1 && !span.hedge {
                let key =
                    if context.model == "queue" { "retrylab.delivery_count" } else { "http.request.resend_count" };
                let count = if context.model == "queue" { span.attempt } else { span.attempt - 1 };
                attributes.push(attribute(key, integer(u64::from(count))));
            }
            if span.status > 0 {
                attributes.push(attribute("http.response.status_code", integer(u64::from(span.status))));
            }
            if !span.slept.is_zero() {
                attributes.push(attribute(
                    "retrylab.backoff_slept_ms",
                    format!("{{\"doubleValue\":{}}}", span.slept.as_millis_f64()),
                ));
            }
            if span.hedge {
                attributes.push(attribute("retrylab.hedge", "{\"boolValue\":true}".to_owned()));
            }
            let service = context.layer_names.get(span.layer as usize);
            if let Some(service) = service {
                attributes.push(attribute("server.address", text(service)));
            }
            let name = match service {
                Some(service) => format!("attempt {} to {service}", span.attempt),
                None => format!("attempt {}", span.attempt),
            };
            let times = (span.start, span.end);
            let json = span_json(
                &trace_id,
                &id,
                Some(&parent),
                &name,
                attempt_kind,
                times,
                &attributes,
                succeeded(span),
                span.outcome,
            );
            push(json, &mut out);
        }
    }
    out.push_str("\n]}]}]}\n");
    out.into_bytes()
}

#[allow(clippy::too_many_arguments)]
fn span_json(
    trace_id: &str,
    id: &str,
    parent: Option<&str>,
    name: &str,
    kind: u8,
    (start, end): (crate::time::SimTime, crate::time::SimTime),
    attributes: &[String],
    ok: bool,
    outcome: &str,
) -> String {
    let mut json = format!("{{\"traceId\":\"{trace_id}\",\"spanId\":\"{id}\"");
    if let Some(parent) = parent {
        let _ = write!(json, ",\"parentSpanId\":\"{parent}\"");
    }
    let _ = write!(
        json,
        ",\"name\":{},\"kind\":{kind},\"startTimeUnixNano\":\"{}\",\"endTimeUnixNano\":\"{}\",\"attributes\":[{}]",
        quoted(name),
        unix_nanos(start),
        unix_nanos(end),
        attributes.join(","),
    );
    if ok {
        let _ = write!(json, ",\"status\":{{\"code\":{STATUS_OK}}}}}");
    } else {
        let _ = write!(json, ",\"status\":{{\"code\":{STATUS_ERROR},\"message\":{}}}}}", quoted(outcome));
    }
    json
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{SimDuration, SimTime};

    fn span(owner: u32, layer: u8, attempt: u32, (id, parent): (u32, u32), status: u16) -> Span {
        Span {
            owner,
            layer,
            start: SimTime::ZERO + SimDuration::from_millis(u64::from(attempt) * 10),
            end: SimTime::ZERO + SimDuration::from_millis(u64::from(attempt) * 10 + 5),
            attempt,
            outcome: if status == 200 { "success" } else { "error" },
            status,
            slept: SimDuration::ZERO,
            hedge: false,
            id,
            parent,
        }
    }

    fn context<'a>(model: &'a str, layers: &'a [String]) -> TraceContext<'a> {
        TraceContext {
            scenario: "s",
            model,
            owner_label: "request",
            strategy: "full-jitter",
            layer_names: layers,
            point: 0,
            point_id: "abc",
            replicate: 0,
            seed: 7,
        }
    }

    #[test]
    fn one_trace_per_owner_a_root_and_an_attempt_per_span_with_the_resend_count() {
        let spans = [span(0, 0, 1, (0, 0), 503), span(0, 0, 2, (0, 0), 200), span(1, 0, 1, (0, 0), 200)];
        let json: serde_json::Value = serde_json::from_slice(&otlp_json(&spans, &context("server", &[]))).unwrap();
        let all = json["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap().clone();
        assert_eq!(all.len(), 5, "two roots and three attempts");
        let roots: Vec<_> = all.iter().filter(|s| s.get("parentSpanId").is_none()).collect();
        assert_eq!(roots.len(), 2);
        assert_ne!(roots[0]["traceId"], roots[1]["traceId"]);
        for attempt in all.iter().filter(|s| s.get("parentSpanId").is_some()) {
            let root = roots.iter().find(|r| r["traceId"] == attempt["traceId"]).unwrap();
            assert_eq!(attempt["parentSpanId"], root["spanId"]);
            assert_eq!(attempt["kind"], 3);
        }
        let retry = all.iter().find(|s| s["name"] == "attempt 2").unwrap();
        let resend = retry["attributes"].as_array().unwrap().iter().find(|a| a["key"] == "http.request.resend_count");
        assert_eq!(resend.unwrap()["value"]["intValue"], "1");
        let failed = all.iter().find(|s| s["name"] == "attempt 1" && s["status"]["code"] == 2).unwrap();
        assert_eq!(failed["status"]["message"], "error");
        assert_eq!(roots[0]["startTimeUnixNano"], "1767225600010000000");
        assert_eq!(roots[0]["status"]["code"], 1, "the request succeeded on its second attempt");
    }

    #[test]
    fn a_hop_is_the_child_of_the_callers_attempt_that_sent_it() {
        let layers = ["api".to_owned(), "db".to_owned()];
        let spans = [span(4, 0, 1, (11, 0), 200), span(4, 1, 1, (12, 11), 503), span(4, 1, 2, (13, 11), 200)];
        let json: serde_json::Value = serde_json::from_slice(&otlp_json(&spans, &context("layers", &layers))).unwrap();
        let all = json["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap().clone();
        let api = all.iter().find(|s| s["name"] == "attempt 1 to api").unwrap();
        for name in ["attempt 1 to db", "attempt 2 to db"] {
            let db = all.iter().find(|s| s["name"] == name).unwrap();
            assert_eq!(db["parentSpanId"], api["spanId"], "{name}");
        }
        let ids: std::collections::BTreeSet<_> = all.iter().map(|s| s["spanId"].as_str().unwrap().to_owned()).collect();
        assert_eq!(ids.len(), all.len(), "span ids are unique");
    }
}
