"""Parses retrylab's OTLP/JSON traces with OpenTelemetry's own protobuf definitions (the opentelemetry-proto
package) and checks them against the run they came from.

    python check.py OTLP_JSON RUNS_CSV MODEL

OTLP/JSON writes trace and span ids as hex, where protobuf's JSON mapping expects base64 for bytes fields: the
ids are converted first, as the OTLP specification tells JSON decoders to read them. Checks: the file parses as
an ExportTraceServiceRequest; every id has its protobuf length (16 bytes, 8 bytes); each trace has exactly one
root and every other span's parent is a span of the same trace; the counts agree with the first row of runs.csv
(the traced replicate): one attempt span per attempt (`calls`, or `receives` for a queue) and, for models whose
every request makes an attempt, one trace per request or message.
"""

import base64
import csv
import json
import sys

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

ID_KEYS = ("traceId", "spanId", "parentSpanId")


def hex_ids_to_base64(node):
    if isinstance(node, dict):
        return {
            key: base64.b64encode(bytes.fromhex(value)).decode() if key in ID_KEYS else hex_ids_to_base64(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [hex_ids_to_base64(item) for item in node]
    return node


def service(span):
    return next(a.value.string_value for a in span.attributes if a.key == "server.address")


def check_hops(traces):
    """In a call graph, the root's children are attempts to the entry service, and every attempt to another
    service hangs under an attempt to a service, never under the root."""
    entries = set()
    for members in traces.values():
        root = next(span for span in members if not span.parent_span_id)
        for span in members:
            if span.parent_span_id == root.span_id:
                entries.add(service(span))
    assert len(entries) == 1, f"the root's children go to {entries}, not to one entry service"
    entry = entries.pop()
    for members in traces.values():
        root = next(span for span in members if not span.parent_span_id)
        for span in members:
            if span.parent_span_id and service(span) != entry:
                assert span.parent_span_id != root.span_id, f"{span.name} hangs under the root"


def main(otlp_path, runs_path, model):
    with open(otlp_path) as file:
        document = hex_ids_to_base64(json.load(file))
    request = json_format.ParseDict(document, ExportTraceServiceRequest())
    spans = [span for resource in request.resource_spans for scope in resource.scope_spans for span in scope.spans]
    traces = {}
    for span in spans:
        assert len(span.trace_id) == 16 and len(span.span_id) == 8, span.name
        traces.setdefault(span.trace_id, []).append(span)
    attempts = 0
    for trace_id, members in traces.items():
        roots = [span for span in members if not span.parent_span_id]
        assert len(roots) == 1, f"trace {trace_id.hex()}: {len(roots)} roots"
        ids = {span.span_id for span in members}
        assert len(ids) == len(members), f"trace {trace_id.hex()}: repeated span ids"
        for span in members:
            if span.parent_span_id:
                assert span.parent_span_id in ids, f"{span.name}: parent outside its trace"
                assert span.start_time_unix_nano <= span.end_time_unix_nano, span.name
                attempts += 1
    with open(runs_path) as file:
        first = next(csv.DictReader(file))
    if model == "layers":
        check_hops(traces)
    else:
        expected = float(first["receives" if model == "queue" else "calls"])
        assert attempts == expected, f"{attempts} attempt spans, runs.csv says {expected}"
    requests_key = {"queue": "messages", "server": "requests", "layers": "requests"}.get(model)
    if requests_key:
        assert len(traces) == float(first[requests_key]), f"{len(traces)} traces, {first[requests_key]} requests"
    print(f"ok: {otlp_path}: {len(traces)} traces, {attempts} attempt spans, parent links inside each trace")


if __name__ == "__main__":
    main(*sys.argv[1:])
