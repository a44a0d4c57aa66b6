#!/usr/bin/env python3
"""AWS config profiles as botocore runs them, against `retrylab import` and `retrylab delays`.

    aws_check.py --retrylab "cargo run --release --quiet --" [--only CASE,...]

A loopback HTTP server (127.0.0.1, a port the kernel picks) answers every request 503 ServiceUnavailable and notes
when each attempt arrived, under botocore's own `amz-sdk-invocation-id` header (one id per call, kept across its
retries). botocore reads the case's file as AWS_CONFIG_FILE and makes each call (STS GetCallerIdentity) from a
fresh client of the case's profile, so no retry quota carries over between calls. botocore's sleep between
attempts is the argument it passes to time.sleep, which this script records on the way through (the sleep still
happens). Then, per case (scripts/real_imports/cases.csv):

  attempts   every call made the attempts that the lab's policy for the import allows (`retrylab delays` on the
             import's strategy and keys prints one row per retry; a preset's own max_attempts applies when the
             profile sets none);
  sleep n    botocore's sleeps before retry n against `retrylab delays` for the case's `compare_with` preset with
             the import's keys, by the two-sample Kolmogorov-Smirnov test (alpha = 10^-5, see common.py). `compare_with` is
             empty when the import's own strategy is botocore's; otherwise the import names that preset in a
             warning, which is checked too;
  wire       each gap between attempts on the server is at least the sleep botocore recorded;
  power      the same sleeps against a near miss (multiplier 3 instead of 2) must fail.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from common import ROOT, Report, Retrylab, arguments, gaps_ms, read_cases, worst_ratio

CALL_THREADS = 20           # calls in flight at once (legacy cases: every call at once, their sleeps are long)
ERROR_BODY = (b"<ErrorResponse><Error><Type>Receiver</Type><Code>ServiceUnavailable</Code>"
              b"<Message>retrylab real-imports: always unavailable</Message></Error></ErrorResponse>")


class Arrivals:
    def __init__(self) -> None:
        self.by_call: dict[str, list[float]] = {}
        self.lock = threading.Lock()

    def add(self, call: str, at: float) -> None:
        with self.lock:
            self.by_call.setdefault(call, []).append(at)


def serve(arrivals: Arrivals) -> ThreadingHTTPServer:
    class AlwaysUnavailable(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            arrivals.add(self.headers.get("amz-sdk-invocation-id", ""), time.monotonic())
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self.send_response(503)
            self.send_header("content-type", "text/xml")
            self.send_header("content-length", str(len(ERROR_BODY)))
            self.end_headers()
            self.wfile.write(ERROR_BODY)

        def log_message(self, *args) -> None:
            pass

    class Server(ThreadingHTTPServer):
        request_queue_size = 512  # the default of 5 drops connections when every legacy call starts at once

    server = Server(("127.0.0.1", 0), AlwaysUnavailable)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class SleepRecorder:
    """Stands in for the `time` module inside botocore.endpoint: sleeps as asked and notes each sleep, per thread."""

    def __init__(self) -> None:
        self.local = threading.local()

    def __getattr__(self, name):
        return getattr(time, name)

    def sleep(self, seconds: float) -> None:
        self.local.sleeps.append(seconds * 1000)
        time.sleep(seconds)


def make_calls(config: str, profile: str, calls: int, port: int, threads: int) -> list[tuple[str, list[float], str]]:
    """(invocation id, recorded sleeps in ms, outcome) per call, each call from a fresh client of the profile."""
    import botocore.endpoint
    import botocore.session
    from botocore.exceptions import ClientError

    os.environ.update(AWS_CONFIG_FILE=str(ROOT / config), AWS_SHARED_CREDENTIALS_FILE=os.devnull,
                      AWS_EC2_METADATA_DISABLED="true")
    for variable in ("AWS_RETRY_MODE", "AWS_MAX_ATTEMPTS", "AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        os.environ.pop(variable, None)
    recorder = SleepRecorder()
    botocore.endpoint.time = recorder
    session = botocore.session.Session(profile=profile)
    # Sessions are not thread-safe: every client is made here, before any thread runs.
    clients = [session.create_client("sts", region_name="us-east-1", endpoint_url=f"http://127.0.0.1:{port}",
                                     aws_access_key_id="retrylab", aws_secret_access_key="retrylab")
               for _ in range(calls)]

    def one_call(client) -> tuple[str, list[float], str]:
        recorder.local.sleeps = []
        invocation = [""]  # botocore's id for this call, the same on every attempt

        def note_id(request, **_):
            value = request.headers.get("amz-sdk-invocation-id", b"")
            invocation[0] = value.decode() if isinstance(value, bytes) else value

        client.meta.events.register("before-send", note_id)
        try:
            client.get_caller_identity()
            outcome = "ok"
        except ClientError as error:
            outcome = error.response.get("Error", {}).get("Code", "?")
        return invocation[0], recorder.local.sleeps, outcome

    with futures.ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(one_call, clients))


def check_case(case: dict, port: int, arrivals: Arrivals, retrylab: Retrylab, report: Report) -> None:
    name = case["case"]
    client, warnings = retrylab.import_client(case["config"], "--profile", case["entry"])
    compare_with = case["compare_with"] or client["strategy"]
    if case["compare_with"]:
        report.warned(name, warnings, case["compare_with"],
                      f"that {client['strategy']} is not botocore's own and names {case['compare_with']}")
    attempts = len(retrylab.delays(client["strategy"], client)) + 1
    legacy = "legacy" in client["strategy"]
    results = make_calls(case["config"], case["entry"], case["calls"], port, case["calls"] if legacy else CALL_THREADS)
    outcomes = sorted({outcome for _, _, outcome in results})
    counts = [len(arrivals.by_call.get(call, [])) for call, _, _ in results]
    report.check(name, "attempts", set(counts) == {attempts} and outcomes == ["ServiceUnavailable"],
                 f"botocore made {' or '.join(map(str, sorted(set(counts))))} attempts per call (ending "
                 f"{', '.join(outcomes)}); the lab's policy for the import allows {attempts}")
    slack = [gap - sleep for call, sleeps, _ in results
             for gap, sleep in zip(gaps_ms(arrivals.by_call.get(call, [])), sleeps)]
    report.check(name, "wire", bool(slack) and min(slack) >= 0,
                 f"each gap on the server exceeds botocore's sleep by {min(slack, default=0):.2f} to "
                 f"{max(slack, default=0):.2f} ms")
    measured = {retry: [sleeps[retry - 1] for _, sleeps, _ in results if len(sleeps) >= retry]
                for retry in range(1, attempts)}
    lab = retrylab.delays(compare_with, client, attempts - 1)
    for retry in range(1, attempts):
        report.compare_distribution(name, f"sleep n={retry}", measured[retry], lab.get(retry, []))
    worst = worst_ratio(measured, retrylab.delays(compare_with, dict(client, multiplier=3), attempts - 1))
    report.check(name, "power", worst > 1, f"with multiplier 3 instead of 2 the worst D is {worst:.1f} x its "
                 "threshold (must exceed 1: the check tells that policy from the right one)")


def main() -> int:
    retrylab, only = arguments(__doc__)
    report = Report()
    arrivals = Arrivals()
    server = serve(arrivals)
    try:
        report.run_each(read_cases("aws", only),
                        lambda case: check_case(case, server.server_address[1], arrivals, retrylab, report))
    finally:
        server.shutdown()
    return report.summary("aws")


if __name__ == "__main__":
    sys.exit(main())
