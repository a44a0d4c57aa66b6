#!/usr/bin/env python3
"""gRPC service configs as grpcio runs them, against `retrylab import` and `retrylab delays`.

    grpc_check.py --retrylab "cargo run --release --quiet --" [--only CASE,...]

A loopback grpcio server (127.0.0.1, a port the kernel picks) answers every call UNAVAILABLE and notes, per call,
when each attempt arrived. A grpcio channel loads the case's file unchanged as its service config, with retries
on, and makes the case's calls. Then, per case (scripts/real_imports/cases.csv):

  schedule    every call made exactly the attempts the import's max_attempts says (gRPC's clamp of 5 included),
              and the gap between attempts n and n + 1 on the server is distributed as the lab's sleep before
              retry n (`retrylab delays` on the import) in whole milliseconds, plus one lateness for the case.
              Whole milliseconds because the C core keeps durations as integer ms and truncates
              min(cap, b_n) * U(0.8, 1.2) (src/core/util/backoff.cc, time.h); the lateness (its timer wakes a
              couple of ms after the deadline, then the attempt crosses loopback) is the one shift in
              0..MAX_LATENESS_MS that fits every retry index of the case best, and is printed. KS at alpha = 10^-5
              (common.py says why).
  refused     a backoff under 1 ms: grpcio refuses the service config (no attempt reaches the server), and the
              import warns that it does;
  stall       waits that truncate to 0 ms: some call stops retrying and ends at its deadline, and the import warns
              that it does (each retry stalls with probability 1/2 here, so 20 calls all escaping is a 16^-20 event);
  throttling  calls one after another on one channel, failing and succeeding in THROTTLING_PATTERN: each call's
              attempts are those gRFC A6's token arithmetic gives with the import's max_tokens, token_ratio and
              max_attempts (every failed attempt takes a token, a success gives back token_ratio, counted in
              thousandths as the C core does; a retry needs more than max_tokens / 2 left). The pattern is
              sharp: one success fewer and the second-to-last call would not be retried.

grpcio's random numbers cannot be seeded, so a distribution verdict can in principle change between runs; its
false-alarm rate is at most the test's alpha, 10^-5 per comparison (fitting the lateness only lowers D).
"""

from __future__ import annotations

import math
import sys
import threading
import time
from concurrent import futures

import grpc

from common import ROOT, Report, Retrylab, arguments, gaps_ms, read_cases, worst_ratio

# Failures (F) and successes (S), one call after another: four failing calls take the tokens from 10 to 3, 31
# successes bring them to 6.1, so the next failure leaves 5.1, above half of 10, and is retried once.
THROTTLING_PATTERN = "FFFF" + "S" * 31 + "FF"
LAUNCH_SPACING_S = 0.005       # a schedule case starts a call every 5 ms, so attempts rarely meet in the server
CALL_DEADLINE_S = 30           # no call may wait longer than this, whatever the config says
STALL_DEADLINE_S = 1           # the deadline a `stall` case's calls are made with
MAX_LATENESS_MS = 10.0         # the most a fitted timer lateness may be; grpcio 1.85.3 measured 0.25 to 4.2 ms
LATENESS_STEP_MS = 0.05


class AlwaysUnavailable(grpc.GenericRpcHandler):
    """Serves any method: records the attempt's arrival under the call's `x-call` metadata and answers UNAVAILABLE,
    or OK for a call whose tag ends in `:ok`."""

    def __init__(self) -> None:
        self.arrivals: dict[str, list[float]] = {}
        self.lock = threading.Lock()

    def service(self, handler_call_details):
        def fail(request, context):
            arrived = time.monotonic()
            call = dict(context.invocation_metadata()).get("x-call", "")
            with self.lock:
                self.arrivals.setdefault(call, []).append(arrived)
            if call.endswith(":ok"):
                return b""
            context.abort(grpc.StatusCode.UNAVAILABLE, "retrylab real-imports: always unavailable")

        return grpc.unary_unary_rpc_method_handler(fail)


def make_calls(port: int, config: str, method: str, tags: list[str], spacing_s: float | None,
               deadline_s: float = CALL_DEADLINE_S) -> list[str]:
    """Makes one call per tag through a channel holding `config`, starting one every `spacing_s` seconds (None:
    each once the previous has ended); returns the final status of each."""
    with open(ROOT / config) as f:
        service_config = f.read()
    options = [("grpc.service_config", service_config), ("grpc.enable_retries", 1)]
    statuses = []
    with grpc.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
        call = channel.unary_unary("/" + method)
        pending = []
        started = time.monotonic()
        for index, tag in enumerate(tags):
            if spacing_s is not None:
                time.sleep(max(0.0, started + index * spacing_s - time.monotonic()))
            pending.append(call.future(b"", timeout=deadline_s, metadata=[("x-call", tag)]))
            if spacing_s is None:
                pending[-1].exception()
        for future in pending:
            error = future.exception()
            statuses.append("OK" if error is None else error.code().name)
    return statuses


def a6_throttled_attempts(pattern: str, max_attempts: int, max_tokens: float, token_ratio: float) -> list[int]:
    """Attempts per call, one call after another, each failing (F) or succeeding (S) at every attempt: gRFC A6
    retry throttling in thousandths of a token, as the C core keeps them."""
    full = round(max_tokens * 1000)
    tokens = full
    attempts = []
    for outcome in pattern:
        if outcome == "S":
            tokens = min(full, tokens + round(token_ratio * 1000))
            attempts.append(1)
            continue
        made = 0
        while True:
            made += 1
            tokens = max(0, tokens - 1000)
            if made == max_attempts or tokens * 2 <= full:
                break
        attempts.append(made)
    return attempts


def main() -> int:
    retrylab, only = arguments(__doc__)
    report = Report()
    handler = AlwaysUnavailable()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), handlers=[handler])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        report.run_each(read_cases("grpc", only),
                        lambda case: CHECKS[case["check"]](case, port, handler, retrylab, report))
    finally:
        server.stop(grace=None)
    return report.summary("grpc")


def check_schedule(case: dict, port: int, handler: AlwaysUnavailable, retrylab: Retrylab, report: Report) -> None:
    name = case["case"]
    client, _ = retrylab.import_client(case["config"], "--method", case["entry"])
    attempts = int(client["max_attempts"])
    tags = [f"{name}:{i}" for i in range(case["calls"])]
    statuses = make_calls(port, case["config"], case["entry"], tags, LAUNCH_SPACING_S)
    wrong = sorted({s for s in statuses if s != "UNAVAILABLE"})
    report.check(name, "status", not wrong, f"{len(statuses)} calls ended UNAVAILABLE" if not wrong
                 else f"calls ended {', '.join(wrong)}: grpcio did not run this config as a retry policy")
    counts = [len(handler.arrivals.get(tag, [])) for tag in tags]
    report.check(name, "attempts", set(counts) == {attempts},
                 f"grpcio made {describe_counts(counts)} per call; the import says max_attempts = {attempts}")
    lab = retrylab.delays(client["strategy"], client, attempts - 1)
    measured = {retry: [gaps_ms(handler.arrivals[tag])[retry - 1] for tag in tags
                        if len(handler.arrivals.get(tag, [])) > retry] for retry in range(1, attempts)}
    whole_ms = {retry: [math.floor(sleep) for sleep in lab.get(retry, [])] for retry in range(1, attempts)}
    lateness = fit_lateness(measured, whole_ms)
    print(f"      {name:<24}  lateness     {lateness:.2f} ms fitted (grpcio's timer and loopback)", flush=True)
    predicted = shifted(whole_ms, lateness)
    for retry in range(1, attempts):
        report.compare_distribution(name, f"gap n={retry}", measured[retry], predicted[retry])
    # The comparison must be able to fail: two near misses of the translation, each given its own best lateness.
    near_misses = [("full jitter", dict(client, strategy="full-jitter-from-base")),
                   ("multiplier + 0.5", dict(client, multiplier=float(client["multiplier"]) + 0.5))]
    for label, wrong in near_misses:
        sleeps = retrylab.delays(wrong["strategy"], wrong, attempts - 1)
        wrong_ms = {retry: [math.floor(sleep) for sleep in sleeps.get(retry, [])] for retry in range(1, attempts)}
        worst = worst_ratio(measured, shifted(wrong_ms, fit_lateness(measured, wrong_ms)))
        report.check(name, "power", worst > 1, f"with {label} the worst D is {worst:.1f} x its threshold "
                     "(must exceed 1: the check tells that translation from the right one)")


def fit_lateness(measured: dict[int, list[float]], whole_ms: dict[int, list[float]]) -> float:
    """The shift in 0..MAX_LATENESS_MS that minimises the largest KS D (relative to its threshold) over every
    retry index at once: one lateness per case, so it cannot stand in for a wrong base or multiplier."""
    steps = int(MAX_LATENESS_MS / LATENESS_STEP_MS)
    shifts = (step * LATENESS_STEP_MS for step in range(steps + 1))
    return min(shifts, key=lambda shift: worst_ratio(measured, shifted(whole_ms, shift)))


def shifted(by_retry: dict[int, list[float]], shift: float) -> dict[int, list[float]]:
    return {retry: [value + shift for value in values] for retry, values in by_retry.items()}


def check_throttling(case: dict, port: int, handler: AlwaysUnavailable, retrylab: Retrylab, report: Report) -> None:
    name = case["case"]
    client, _ = retrylab.import_client(case["config"], "--method", case["entry"])
    if client.get("limiter") != "grpc":
        report.check(name, "limiter", False, f"the import's limiter is {client.get('limiter')!r}, not \"grpc\"")
        return
    tags = [f"{name}:{i}" + (":ok" if outcome == "S" else "") for i, outcome in enumerate(THROTTLING_PATTERN)]
    # One call in flight at a time: each call sees the tokens the previous ones left.
    statuses = make_calls(port, case["config"], case["entry"], tags, None)
    counts = [len(handler.arrivals.get(tag, [])) for tag in tags]
    expected = a6_throttled_attempts(THROTTLING_PATTERN, int(client["max_attempts"]), float(client["max_tokens"]),
                                     float(client["token_ratio"]))
    report.check(name, "attempts", counts == expected,
                 f"grpcio made {compact(counts)} attempts over calls {THROTTLING_PATTERN}; gRFC A6 with the import's "
                 f"max_tokens = {client['max_tokens']}, token_ratio = {client['token_ratio']}, "
                 f"max_attempts = {client['max_attempts']} gives {compact(expected)} (statuses "
                 f"{', '.join(sorted(set(statuses)))})")
    nearby = a6_throttled_attempts(THROTTLING_PATTERN, int(client["max_attempts"]), float(client["max_tokens"]),
                                   float(client["token_ratio"]) - 0.005)
    report.check(name, "power", nearby != counts, f"with token_ratio 0.005 lower gRFC A6 gives {compact(nearby)} "
                 "(must differ: the check tells that ratio from the import's)")


def compact(counts: list[int]) -> str:
    return "".join(map(str, counts)) if max(counts, default=0) < 10 else ",".join(map(str, counts))


def check_refused(case: dict, port: int, handler: AlwaysUnavailable, retrylab: Retrylab, report: Report) -> None:
    name = case["case"]
    _, warnings = retrylab.import_client(case["config"], "--method", case["entry"])
    report.warned(name, warnings, "refuses the whole service config", "that grpcio refuses it")
    tags = [f"{name}:{i}" for i in range(case["calls"])]
    statuses = make_calls(port, case["config"], case["entry"], tags, LAUNCH_SPACING_S)
    reached = sum(len(handler.arrivals.get(tag, [])) for tag in tags)
    report.check(name, "refused", reached == 0 and set(statuses) == {"INVALID_ARGUMENT"},
                 f"{reached} attempts reached the server; the calls ended {', '.join(sorted(set(statuses)))}")


def check_stall(case: dict, port: int, handler: AlwaysUnavailable, retrylab: Retrylab, report: Report) -> None:
    name = case["case"]
    client, warnings = retrylab.import_client(case["config"], "--method", case["entry"])
    report.warned(name, warnings, "hangs until its deadline", "that a call can hang")
    tags = [f"{name}:{i}" for i in range(case["calls"])]
    statuses = make_calls(port, case["config"], case["entry"], tags, LAUNCH_SPACING_S, STALL_DEADLINE_S)
    attempts = int(client["max_attempts"])
    stalled = sum(status == "DEADLINE_EXCEEDED" and len(handler.arrivals.get(tag, [])) < attempts
                  for tag, status in zip(tags, statuses))
    report.check(name, "stall", stalled > 0, f"{stalled} of {len(tags)} calls stopped retrying before their "
                 f"{attempts} attempts and ended at their deadline")


def describe_counts(counts: list[int]) -> str:
    values = sorted(set(counts))
    return " or ".join(str(v) for v in values) + (" attempts" if values != [1] else " attempt")


CHECKS = {"schedule": check_schedule, "throttling": check_throttling, "refused": check_refused,
          "stall": check_stall}


if __name__ == "__main__":
    sys.exit(main())
