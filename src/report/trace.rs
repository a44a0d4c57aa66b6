//! Chrome Trace Event JSON (opens in Perfetto and chrome://tracing): every attempt of one replicate as a
//! complete ("X") event.
//!
//! Layout: one process per owner (a client, a request or a station: `pid` = owner + 1, named by
//! metadata events), and within it one thread per service (`tid` = 1000 × layer + lane). Attempts of one owner
//! that overlap in time (hedged copies, fan-out branches, an abandoned attempt still running) go to further
//! lanes, first fit in start order, so the spans of one thread never overlap. Times are microseconds.

use std::fmt::Write as _;

use crate::model::trace::{MAX_TRACE_SPANS, Span};

/// What the trace is of, for its labels and `otherData`.
pub(crate) struct TraceContext<'a> {
    pub scenario: &'a str,
    pub model: &'a str,
    /// "client", "request" or "station": what an owner is.
    pub owner_label: &'a str,
    /// The point's strategy (or "-" for models without one).
    pub strategy: &'a str,
    /// Service names by layer index (layered model); empty elsewhere.
    pub layer_names: &'a [String],
    pub point: usize,
    pub point_id: &'a str,
    pub replicate: u32,
    pub seed: u64,
}

/// Assigns each span a lane within its (owner, layer) so that no two spans of a lane overlap; returns the
/// lanes in the order of `spans`.
pub(crate) fn lanes(spans: &[Span]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| (spans[i].owner, spans[i].layer, spans[i].start, spans[i].end, i));
    let mut lane_of = vec![0_u32; spans.len()];
    let mut lane_ends: Vec<crate::time::SimTime> = Vec::new();
    let mut group = None;
    for i in order {
        let key = (spans[i].owner, spans[i].layer);
        if group != Some(key) {
            group = Some(key);
            lane_ends.clear();
        }
        let lane = match lane_ends.iter().position(|&end| end <= spans[i].start) {
            Some(lane) => lane,
            None => {
                lane_ends.push(spans[i].end);
                lane_ends.len() - 1
            }
        };
        lane_ends[lane] = spans[i].end;
        lane_of[i] = lane as u32;
    }
    lane_of
}

fn micros(nanos: u64) -> String {
    let whole = nanos / 1_000;
    let fraction = nanos % 1_000;
    if fraction == 0 { whole.to_string() } else { format!("{whole}.{fraction:03}") }
}

/// A JSON string literal.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

/// The trace as JSON bytes.
pub(crate) fn chrome_trace_json(spans: &[Span], context: &TraceContext<'_>) -> Vec<u8> {
    let lanes = lanes(spans);
    let layer_name = |layer: u8| {
        context.layer_names.get(layer as usize).cloned().unwrap_or_else(|| format!("service {}", layer + 1))
    };
    let mut out = String::with_capacity(256 + spans.len() * 260);
    out.push_str("{\"traceEvents\":[\n");
    let mut first = true;
    let mut push = |event: String, out: &mut String| {
        if !first {
            out.push_str(",\n");
        }
        first = false;
        out.push_str(&event);
    };
    let mut named_owners = std::collections::BTreeSet::new();
    let mut named_threads = std::collections::BTreeSet::new();
    for (span, &lane) in spans.iter().zip(&lanes) {
        let pid = u64::from(span.owner) + 1;
        let tid = u64::from(span.layer) * 1000 + u64::from(lane);
        if named_owners.insert(pid) {
            let name = format!("{} {}", context.owner_label, span.owner);
            push(
                format!(
                    "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{pid},\"args\":{{\"name\":{}}}}}",
                    quoted(&name)
                ),
                &mut out,
            );
            push(
                format!(
                    "{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{pid},\"args\":{{\"sort_index\":{pid}}}}}"
                ),
                &mut out,
            );
        }
        if named_threads.insert((pid, tid)) {
            let base = if context.layer_names.is_empty() { "attempts".to_owned() } else { layer_name(span.layer) };
            let name = if lane == 0 { base } else { format!("{base} (overlapping {lane})") };
            push(
                format!(
                    "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":{}}}}}",
                    quoted(&name)
                ),
                &mut out,
            );
        }
        let name =
            if span.hedge { format!("hedge of attempt {}", span.attempt) } else { format!("attempt {}", span.attempt) };
        let mut event = String::with_capacity(256);
        let duration = span.end.as_nanos().saturating_sub(span.start.as_nanos());
        let _ = write!(
            event,
            "{{\"name\":{},\"cat\":\"attempt\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{pid},\"tid\":{tid},\"args\":{{\
             \"attempt\":{},\"strategy\":{},\"outcome\":{},\"status\":{},\"backoff_slept_ms\":{},\"hedge\":{}",
            quoted(&name),
            micros(span.start.as_nanos()),
            micros(duration),
            span.attempt,
            quoted(context.strategy),
            quoted(span.outcome),
            span.status,
            span.slept.as_millis_f64(),
            span.hedge,
        );
        if !context.layer_names.is_empty() {
            let _ = write!(event, ",\"service\":{}", quoted(&layer_name(span.layer)));
        }
        event.push_str("}}");
        push(event, &mut out);
    }
    let _ = write!(
        out,
        "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{{\"retrylab_version\":{},\"scenario\":{},\"model\":{},\
         \"point\":{},\"point_id\":{},\"replicate\":{},\"seed\":{},\"spans\":{},\"truncated\":{}}}}}\n",
        quoted(env!("CARGO_PKG_VERSION")),
        quoted(context.scenario),
        quoted(context.model),
        context.point,
        quoted(context.point_id),
        context.replicate,
        context.seed,
        spans.len(),
        spans.len() >= MAX_TRACE_SPANS,
    );
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{SimDuration, SimTime};

    fn span(owner: u32, start_ms: u64, end_ms: u64) -> Span {
        Span {
            owner,
            layer: 0,
            start: SimTime::ZERO + SimDuration::from_millis(start_ms),
            end: SimTime::ZERO + SimDuration::from_millis(end_ms),
            attempt: 1,
            outcome: "success",
            status: 200,
            slept: SimDuration::ZERO,
            hedge: false,
            id: 0,
            parent: 0,
            at_server: None,
        }
    }

    #[test]
    fn overlapping_spans_of_one_owner_get_separate_lanes_and_touching_ones_share() {
        let spans = [span(0, 0, 10), span(0, 5, 8), span(0, 10, 12), span(1, 0, 10), span(0, 8, 20)];
        assert_eq!(lanes(&spans), vec![0, 1, 0, 0, 1]);
    }

    #[test]
    fn the_json_parses_and_carries_the_attributes() {
        let context = TraceContext {
            scenario: "s \"quoted\"",
            model: "occ",
            owner_label: "client",
            strategy: "full-jitter",
            layer_names: &[],
            point: 0,
            point_id: "abc",
            replicate: 0,
            seed: 7,
        };
        let json: serde_json::Value = serde_json::from_slice(&chrome_trace_json(&[span(3, 1, 2)], &context)).unwrap();
        let events = json["traceEvents"].as_array().unwrap();
        let attempt = events.iter().find(|e| e["ph"] == "X").unwrap();
        assert_eq!(attempt["pid"], 4);
        assert_eq!(attempt["ts"], 1000);
        assert_eq!(attempt["dur"], 1000);
        assert_eq!(attempt["args"]["strategy"], "full-jitter");
        assert_eq!(json["otherData"]["scenario"], "s \"quoted\"");
    }
}
