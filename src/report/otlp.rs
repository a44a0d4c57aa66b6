//! OpenTelemetry traces as OTLP/JSON (an `ExportTraceServiceRequest`, as a collector's `/v1/traces` takes it):
//! every attempt of one replicate as a span.
//!
//! Layout: one trace per owner (a request, a client, a message, a station), whose root span is the owner's
//! whole operation (from its first attempt's start to its last attempt's end); below it one span per attempt,
//! its parent the root, or in the layered model the caller's attempt that sent it (one span per hop). Spans are
//! grouped by the service that made them, one resource (`service.name`) each: the client fleet (roots and
//! attempts), each service of a call graph (the attempts it received, as SERVER spans, so tools draw the graph),
//! a queue's consumers (its receives). Span names are the operation (`request`, `attempt`, `retry`, `hedge`,
//! `receive`, …), never an owner's number, which is an attribute (`retrylab.request`, …). An attempt after the
//! first carries `http.request.resend_count` (OpenTelemetry's HTTP semantic convention: the attempts before it);
//! a queue's receive carries `retrylab.delivery_count` instead (the semantic conventions have no system-neutral
//! delivery count). The outcome is the span's status (OK, or ERROR with the outcome as its message). Times are
//! simulated: nanoseconds since [`EPOCH_UNIX_SECONDS`], 2026-01-01T00:00:00Z. Trace ids are 128 random bits
//! drawn, owner by owner, from a generator of their own seeded by the run's seed (no other stream is touched);
//! span ids hash the trace's id with the span's number. Ids are hex as OTLP/JSON writes them, so the same run
//! gives the same file.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use rand::Rng;

use super::trace::TraceContext;
use crate::engine::{mix64, sim_rng};
use crate::model::trace::Span;
use crate::time::SimTime;

/// The simulated t = 0 on the wall clock: 2026-01-01T00:00:00Z.
pub(crate) const EPOCH_UNIX_SECONDS: u64 = 1_767_225_600;

/// What to do with the file, as `run --trace` prints it: tools that read OTLP.
pub(crate) const OPEN_HINT: &str = "OTLP/JSON: POST it to an OpenTelemetry collector's /v1/traces (Content-Type: \
     application/json), or to the OTLP/HTTP endpoint of Jaeger or Grafana Tempo";

/// Span kinds and status codes as the OTLP protobuf numbers them.
const KIND_INTERNAL: u8 = 1;
const KIND_SERVER: u8 = 2;
const KIND_CLIENT: u8 = 3;
const KIND_PRODUCER: u8 = 4;
const KIND_CONSUMER: u8 = 5;
const STATUS_OK: u8 = 1;
const STATUS_ERROR: u8 = 2;

/// Tells the trace ids' generator apart from anything else seeded by the run's seed ("otlptrac").
const TRACE_ID_STREAM: u64 = 0x6f74_6c70_7472_6163;

/// A JSON string literal.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

fn unix_nanos(time: SimTime) -> String {
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

/// Who makes which spans: the resources of the file, one per service, and the span kinds.
struct Services<'a> {
    /// `service.name` of each resource: the client fleet first (it makes the roots).
    names: Vec<String>,
    context: &'a TraceContext<'a>,
    root_kind: u8,
    attempt_kind: u8,
}

impl<'a> Services<'a> {
    fn of(context: &'a TraceContext<'a>) -> Services<'a> {
        let fleet = match context.owner_label {
            "message" => "producers",
            "station" => "stations",
            "node" => "nodes",
            _ => "clients",
        };
        // A service of the graph may be called `clients` too: the fleet then takes another name.
        let mut fleet = fleet.to_owned();
        while context.layer_names.contains(&fleet) {
            fleet.insert_str(0, "user-");
        }
        let mut names = vec![fleet];
        let (root_kind, attempt_kind) = match context.model {
            "queue" => {
                names.push("consumers".to_owned());
                (KIND_PRODUCER, KIND_CONSUMER)
            }
            "periodic-sync" => (KIND_INTERNAL, KIND_PRODUCER),
            _ if !context.layer_names.is_empty() => {
                names.extend(context.layer_names.iter().cloned());
                (KIND_INTERNAL, KIND_SERVER)
            }
            _ => (KIND_INTERNAL, KIND_CLIENT),
        };
        Services { names, context, root_kind, attempt_kind }
    }

    /// The resource an attempt belongs to: the service it went to (call graph), the consumers (queue), or the
    /// fleet that made it.
    fn of_attempt(&self, span: &Span) -> usize {
        match self.context.model {
            "queue" => 1,
            _ if !self.context.layer_names.is_empty() => (1 + span.layer as usize).min(self.names.len() - 1),
            _ => 0,
        }
    }

    /// The operation an attempt is: low-cardinality, the same for every owner.
    fn attempt_name(&self, span: &Span) -> &'static str {
        match (self.context.model, span.hedge, span.attempt) {
            (_, true, _) => "hedge",
            ("queue", false, 1) => "receive",
            ("queue", false, _) => "redelivery",
            ("periodic-sync", false, _) => "send",
            (_, false, 1) => "attempt",
            (_, false, _) => "retry",
        }
    }
}

/// One owner's trace: its spans (indices into the run's), its id and the salt of its span ids.
struct Trace {
    owner: u32,
    spans: Vec<usize>,
    id: String,
    salt: u64,
}

/// The owners' traces in owner order, each id 128 bits drawn from a generator seeded by `seed`.
fn traces(spans: &[Span], seed: u64) -> Vec<Trace> {
    let mut owners: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (index, span) in spans.iter().enumerate() {
        owners.entry(span.owner).or_default().push(index);
    }
    let mut ids = sim_rng(mix64(seed ^ TRACE_ID_STREAM));
    let mut seen = BTreeSet::new();
    owners
        .into_iter()
        .map(|(owner, spans)| {
            // An all-zero id is invalid and a repeat would merge two traces: draw again (about never).
            let (high, low) = loop {
                let drawn = (ids.next_u64(), ids.next_u64());
                if drawn != (0, 0) && seen.insert(drawn) {
                    break drawn;
                }
            };
            Trace { owner, spans, id: format!("{high:016x}{low:016x}"), salt: mix64(high ^ mix64(low)) }
        })
        .collect()
}

/// The trace as OTLP/JSON bytes.
pub(crate) fn otlp_json(spans: &[Span], context: &TraceContext<'_>) -> Vec<u8> {
    let services = Services::of(context);
    let traces = traces(spans, context.seed);
    let mut out = String::with_capacity(1024 + spans.len() * 480);
    out.push_str("{\"resourceSpans\":[");
    let mut first_resource = true;
    for (resource, service) in services.names.iter().enumerate() {
        let has_spans =
            (resource == 0 && !traces.is_empty()) || spans.iter().any(|s| services.of_attempt(s) == resource);
        if !has_spans {
            continue;
        }
        if !first_resource {
            out.push(',');
        }
        first_resource = false;
        write_resource_head(&mut out, service, context);
        let mut first = true;
        let mut push = |span: String, out: &mut String| {
            out.push_str(if first { "\n" } else { ",\n" });
            first = false;
            out.push_str(&span);
        };
        for trace in &traces {
            if resource == 0 {
                push(root_json(trace, spans, &services), &mut out);
            }
            // Spans with an id of their own keep it; the others are numbered from 1 in order, past every own id.
            let own_ids: BTreeSet<u32> = trace.spans.iter().map(|&i| spans[i].id).filter(|&id| id > 0).collect();
            for (number, &index) in trace.spans.iter().enumerate() {
                if services.of_attempt(&spans[index]) == resource {
                    push(attempt_json(trace, &spans[index], number, &own_ids, &services), &mut out);
                }
            }
        }
        out.push_str("\n]}]}");
    }
    out.push_str("]}\n");
    out.into_bytes()
}

/// A resource's attributes and the head of its one scope, up to its first span.
fn write_resource_head(out: &mut String, service: &str, context: &TraceContext<'_>) {
    let resource = [
        attribute("service.name", text(service)),
        attribute("service.namespace", text(context.scenario)),
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
        "\n{{\"resource\":{{\"attributes\":[{}]}},\"scopeSpans\":[{{\"scope\":{{\"name\":\"retrylab\",\"version\":{}}},\
         \"spans\":[",
        resource.join(","),
        quoted(env!("CARGO_PKG_VERSION")),
    );
}

/// The owner's whole operation: from its first attempt's start to its last one's end, OK if an attempt of the
/// top layer succeeded.
fn root_json(trace: &Trace, spans: &[Span], services: &Services<'_>) -> String {
    let members = || trace.spans.iter().map(|&i| &spans[i]);
    let start = members().map(|s| s.start).min().unwrap_or_default();
    let end = members().map(|s| s.end).max().unwrap_or_default();
    let ok = members().any(|s| s.layer == 0 && succeeded(s));
    let top = || members().filter(|s| s.layer == 0 && !s.hedge);
    let label = services.context.owner_label;
    let attributes = [
        attribute(&format!("retrylab.{label}"), integer(u64::from(trace.owner))),
        attribute("retrylab.attempts", integer(top().count() as u64)),
        attribute("retrylab.spans", integer(trace.spans.len() as u64)),
        attribute("retrylab.outcome", text(if ok { "success" } else { "failed" })),
        attribute("retrylab.strategy", text(services.context.strategy)),
    ];
    let root = span_id(trace.salt, 0);
    span_json(&trace.id, &root, None, label, services.root_kind, (start, end), &attributes, ok, "failed")
}

/// Attempt `span`, the `number`th of its trace.
fn attempt_json(trace: &Trace, span: &Span, number: usize, own_ids: &BTreeSet<u32>, services: &Services<'_>) -> String {
    let context = services.context;
    let id_number = if span.id > 0 { u64::from(span.id) } else { (1u64 << 32) + number as u64 };
    let id = span_id(trace.salt, id_number);
    let parent = if span.parent > 0 && own_ids.contains(&span.parent) { u64::from(span.parent) } else { 0 };
    let parent = span_id(trace.salt, parent);
    let mut attributes = vec![
        attribute(&format!("retrylab.{}", context.owner_label), integer(u64::from(trace.owner))),
        attribute("retrylab.attempt", integer(u64::from(span.attempt))),
        attribute("retrylab.outcome", text(span.outcome)),
    ];
    if span.attempt > 1 && !span.hedge {
        let key = if context.model == "queue" { "retrylab.delivery_count" } else { "http.request.resend_count" };
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
    if let Some(service) = context.layer_names.get(span.layer as usize) {
        attributes.push(attribute("server.address", text(service)));
    }
    let name = services.attempt_name(span);
    let times = (span.start, span.end);
    let kind = services.attempt_kind;
    span_json(&trace.id, &id, Some(&parent), name, kind, times, &attributes, succeeded(span), span.outcome)
}

#[allow(clippy::too_many_arguments)]
fn span_json(
    trace_id: &str,
    id: &str,
    parent: Option<&str>,
    name: &str,
    kind: u8,
    (start, end): (SimTime, SimTime),
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
    use crate::time::SimDuration;

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
            at_server: None,
        }
    }

    fn context<'a>(model: &'a str, layers: &'a [String], seed: u64) -> TraceContext<'a> {
        TraceContext {
            scenario: "s",
            model,
            owner_label: "request",
            strategy: "full-jitter",
            layer_names: layers,
            point: 0,
            point_id: "abc",
            replicate: 0,
            seed,
        }
    }

    /// Every span of the file with the `service.name` of its resource.
    fn spans_by_service(bytes: &[u8]) -> Vec<(String, serde_json::Value)> {
        let json: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        let mut all = Vec::new();
        for resource in json["resourceSpans"].as_array().unwrap() {
            let attributes = resource["resource"]["attributes"].as_array().unwrap();
            let name = attributes.iter().find(|a| a["key"] == "service.name").unwrap()["value"]["stringValue"].clone();
            for span in resource["scopeSpans"][0]["spans"].as_array().unwrap() {
                all.push((name.as_str().unwrap().to_owned(), span.clone()));
            }
        }
        all
    }

    fn attribute_of<'a>(span: &'a serde_json::Value, key: &str) -> Option<&'a serde_json::Value> {
        span["attributes"].as_array().unwrap().iter().find(|a| a["key"] == key).map(|a| &a["value"])
    }

    #[test]
    fn one_trace_per_owner_a_root_and_an_attempt_per_span_with_the_resend_count() {
        let spans = [span(0, 0, 1, (0, 0), 503), span(0, 0, 2, (0, 0), 200), span(1, 0, 1, (0, 0), 200)];
        let all: Vec<_> = spans_by_service(&otlp_json(&spans, &context("server", &[], 7)))
            .into_iter()
            .map(|(service, span)| {
                assert_eq!(service, "clients", "the server model's spans are the client fleet's");
                span
            })
            .collect();
        assert_eq!(all.len(), 5, "two roots and three attempts");
        let roots: Vec<_> = all.iter().filter(|s| s.get("parentSpanId").is_none()).collect();
        assert_eq!(roots.len(), 2);
        assert_ne!(roots[0]["traceId"], roots[1]["traceId"]);
        for attempt in all.iter().filter(|s| s.get("parentSpanId").is_some()) {
            let root = roots.iter().find(|r| r["traceId"] == attempt["traceId"]).unwrap();
            assert_eq!(attempt["parentSpanId"], root["spanId"]);
            assert_eq!(attempt["kind"], 3);
        }
        let retry = all.iter().find(|s| s["name"] == "retry").unwrap();
        assert_eq!(attribute_of(retry, "http.request.resend_count").unwrap()["intValue"], "1");
        let failed = all.iter().find(|s| s["name"] == "attempt" && s["status"]["code"] == 2).unwrap();
        assert_eq!(failed["status"]["message"], "error");
        assert_eq!(roots[0]["startTimeUnixNano"], "1767225600010000000");
        assert_eq!(roots[0]["status"]["code"], 1, "the request succeeded on its second attempt");
    }

    #[test]
    fn names_are_operations_and_the_owner_is_an_attribute_of_every_span_roots_included() {
        let spans = [span(7491, 0, 1, (0, 0), 503), span(7491, 0, 2, (0, 0), 200)];
        let all = spans_by_service(&otlp_json(&spans, &context("server", &[], 7)));
        let names: BTreeSet<&str> = all.iter().map(|(_, s)| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, BTreeSet::from(["request", "attempt", "retry"]));
        for (_, span) in &all {
            assert_eq!(attribute_of(span, "retrylab.request").unwrap()["intValue"], "7491", "{span}");
        }
        let root = &all.iter().find(|(_, s)| s.get("parentSpanId").is_none()).unwrap().1;
        assert_eq!(attribute_of(root, "retrylab.attempts").unwrap()["intValue"], "2");
        assert_eq!(attribute_of(root, "retrylab.outcome").unwrap()["stringValue"], "success");
    }

    #[test]
    fn trace_ids_are_drawn_from_the_seed_not_counted() {
        let spans: Vec<Span> = (0..4).map(|owner| span(owner, 0, 1, (0, 0), 200)).collect();
        let ids = |seed: u64| -> Vec<String> {
            let all = spans_by_service(&otlp_json(&spans, &context("server", &[], seed)));
            let roots = all.iter().filter(|(_, s)| s.get("parentSpanId").is_none());
            roots.map(|(_, s)| s["traceId"].as_str().unwrap().to_owned()).collect()
        };
        let (first, again, other) = (ids(7), ids(7), ids(8));
        assert_eq!(first, again, "the same seed gives the same ids");
        assert!(first.iter().all(|id| other.iter().all(|o| o != id)), "another seed, other ids");
        // No half of an id is shared with another trace's, as it would be with a counter in the low half.
        let halves: BTreeSet<&str> = first.iter().flat_map(|id| [&id[..16], &id[16..]]).collect();
        assert_eq!(halves.len(), 2 * first.len(), "{first:?}");
    }

    #[test]
    fn a_hop_is_the_child_of_the_callers_attempt_that_sent_it_and_each_service_is_a_resource() {
        let layers = ["api".to_owned(), "db".to_owned()];
        let spans = [span(4, 0, 1, (11, 0), 200), span(4, 1, 1, (12, 11), 503), span(4, 1, 2, (13, 11), 200)];
        let all = spans_by_service(&otlp_json(&spans, &context("layers", &layers, 7)));
        let (api_service, api) = all
            .iter()
            .find(|(_, s)| {
                attribute_of(s, "server.address").unwrap_or(&serde_json::Value::Null)["stringValue"] == "api"
            })
            .unwrap();
        assert_eq!(api_service, "api");
        assert_eq!(api["kind"], 2, "filed under the service it went to, as a SERVER span");
        let db: Vec<_> = all.iter().filter(|(service, _)| service == "db").collect();
        assert_eq!(db.len(), 2);
        for (_, span) in db {
            assert_eq!(span["parentSpanId"], api["spanId"], "{span}");
        }
        let root = all.iter().find(|(_, s)| s.get("parentSpanId").is_none()).unwrap();
        assert_eq!(root.0, "clients");
        let services: BTreeSet<&str> = all.iter().map(|(service, _)| service.as_str()).collect();
        assert_eq!(services, BTreeSet::from(["clients", "api", "db"]));
        let taken = ["clients".to_owned(), "db".to_owned()];
        let renamed = spans_by_service(&otlp_json(&spans, &context("layers", &taken, 7)));
        let services: BTreeSet<&str> = renamed.iter().map(|(service, _)| service.as_str()).collect();
        assert_eq!(services, BTreeSet::from(["user-clients", "clients", "db"]), "no two services share a name");
        let ids: BTreeSet<_> = all.iter().map(|(_, s)| s["spanId"].as_str().unwrap().to_owned()).collect();
        assert_eq!(ids.len(), all.len(), "span ids are unique");
    }
}
