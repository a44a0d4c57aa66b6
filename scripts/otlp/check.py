"""Parses retrylab's OTLP/JSON traces with OpenTelemetry's own protobuf definitions (the opentelemetry-proto
package) and checks them against the run they came from.

    python check.py OTLP_JSON RUNS_CSV MODEL

OTLP/JSON writes trace and span ids as hex, where protobuf's JSON mapping expects base64 for bytes fields: the
ids are converted first, as the OTLP specification tells JSON decoders to read them. Checks: the file parses as
an ExportTraceServiceRequest; every id has its protobuf length (16 bytes, 8 bytes); each trace has exactly one
root and every other span's parent is a span of the same trace; the counts agree with the first row of runs.csv
(the traced replicate): one attempt span per attempt (`calls`, or `receives` for a queue) and, for models whose
every request makes an attempt, one trace per request or message. What tracing tools need: one `service.name`
per resource, no two resources alike, the fleet's resource holding every root, each service of a call graph and
a queue's consumers a resource of their own; span names that are operations (no digits, at most a dozen
distinct), the owner's number as an attribute of every span; attributes on every root; trace ids drawn at
random, not counted (no 64-bit half of one shared with another trace).
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


def attribute(item, key):
    return next((a.value for a in item.attributes if a.key == key), None)


def check_services(request, model, services):
    """One resource per service, named; the roots in the fleet's; the services the model should show."""
    names = []
    for resource in request.resource_spans:
        name = attribute(resource.resource, "service.name")
        assert name is not None and name.string_value, "a resource without service.name"
        names.append(name.string_value)
        assert attribute(resource.resource, "service.namespace") is not None, f"{name.string_value}: no namespace"
    assert len(set(names)) == len(names), f"resources repeat a service.name: {names}"
    roots = {names[i] for i, resource in enumerate(request.resource_spans)
             for scope in resource.scope_spans for span in scope.spans if not span.parent_span_id}
    assert len(roots) == 1, f"roots are spread over {roots}, not the client fleet's resource alone"
    expected = set(services) | roots
    if model == "queue":
        expected.add("consumers")
    assert expected <= set(names), f"services {sorted(expected - set(names))} missing from {names}"
    return names


def check_names_and_owners(spans):
    """Span names are operations, the owner's number an attribute of every span, roots carry attributes."""
    names = {span.name for span in spans}
    assert all(not any(c.isdigit() for c in name) for name in names), f"numbers in span names: {sorted(names)[:5]}"
    assert len(names) <= 12, f"{len(names)} distinct span names: {sorted(names)[:12]}"
    for span in spans:
        owner = [a for a in span.attributes if a.key.startswith("retrylab.") and a.key[9:] in OWNER_LABELS]
        assert len(owner) == 1, f"{span.name}: the owner's number is not an attribute"
        if not span.parent_span_id:
            for key in ("retrylab.attempts", "retrylab.outcome"):
                assert attribute(span, key) is not None, f"root {span.name}: no {key}"
    return names


def check_trace_ids(traces):
    """Ids drawn at random share no 64-bit half; a counter in either half would."""
    halves = [half for trace_id in traces for half in (trace_id[:8], trace_id[8:])]
    assert len(set(halves)) == len(halves), "trace ids share a half: counted, not drawn"


OWNER_LABELS = ("request", "client", "message", "station", "node")


def main(otlp_path, runs_path, model, *services):
    with open(otlp_path) as file:
        document = hex_ids_to_base64(json.load(file))
    request = json_format.ParseDict(document, ExportTraceServiceRequest())
    resources = check_services(request, model, services)
    spans = [span for resource in request.resource_spans for scope in resource.scope_spans for span in scope.spans]
    names = check_names_and_owners(spans)
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
    check_trace_ids(traces)
    print(f"ok: {otlp_path}: {len(traces)} traces, {attempts} attempt spans, parent links inside each trace; "
          f"services {', '.join(resources)}; span names {', '.join(sorted(names))}")


if __name__ == "__main__":
    main(*sys.argv[1:])
