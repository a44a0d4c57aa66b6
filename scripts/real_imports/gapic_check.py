#!/usr/bin/env python3
"""googleapis service configs as the generated Google client libraries run them, against `retrylab import`.

    gapic_check.py --retrylab "cargo run --release --quiet --" [--only CASE,...]

The consumer of a googleapis `*_grpc_service_config.json` is a generated client library: the generator bakes each
method's retry and timeout into its transport, and google-api-core runs them. This script loads the pinned
library that was generated from the case's file (google-cloud-secret-manager), builds its gRPC transport with
anonymous credentials (nothing is sent), and reads the retry and timeout of the case's method
(scripts/real_imports/cases.csv) from the library itself. Then:

  settings   the import's table says what the library runs: base, cap and multiplier are the Retry's initial,
             maximum and multiplier, deadline its timeout, timeout the method's default timeout, no attempt
             cap, retry_on the server model's answers for the predicate's exception classes; a method the
             library does not retry is max_attempts = 1;
  sleep n    google-api-core's own Retry runs against a call that always fails with UNAVAILABLE, on a fake clock
             (time.sleep and time.monotonic of google.api_core.retry replaced for the run: an attempt takes no
             time, a sleep advances the clock), and its sleeps before retry n are held against `retrylab delays`
             on the import, by the two-sample Kolmogorov-Smirnov test (alpha = 10^-5, see common.py), for the
             retries every call reaches whole (a later sleep is cut by the deadline: the attempts check covers it);
  attempts   the attempts per call google-api-core makes before its deadline, against the same count from the
             lab's delays: a call's sleeps are independent draws, so sums of the lab's samples give the lab's
             attempts; the means must agree within 4 standard errors of their difference;
  reading    the same file read as a gRPC channel (--reading channel) caps the attempts at maxAttempts, which
             the library does not: its attempts must differ from the library's;
  power      the same sleeps against a near miss (multiplier 3 instead of the import's) must fail.
"""

from __future__ import annotations

import math
import random
import sys
import types

from common import Report, Retrylab, arguments, read_cases, worst_ratio

# The library each case's file was generated into, and its transport class, by the file's service.
LIBRARIES = {
    "google.cloud.secretmanager.v1.SecretManagerService": (
        "google.cloud.secretmanager_v1.services.secret_manager_service.transports.grpc",
        "SecretManagerServiceGrpcTransport",
    ),
}
# The server model's answers a gRPC status stands for (docs/import.md, the gRPC status table), by the
# exception class google-api-core raises for it.
OUTCOMES = {
    "ServiceUnavailable": {"502", "503", "reset"},
    "ResourceExhausted": {"429"},
    "InvalidArgument": {"422"},
    "DeadlineExceeded": {"timeout"},
}


def library_method(entry: str):
    """The case's method as the generated library wraps it: (retry or None, default timeout)."""
    from google.auth.credentials import AnonymousCredentials

    service, method = entry.split("/")
    module_name, class_name = LIBRARIES[service]
    module = __import__(module_name, fromlist=[class_name])
    transport = getattr(module, class_name)(credentials=AnonymousCredentials(), host="127.0.0.1:9")
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in method).lstrip("_")
    wrapped = transport._wrapped_methods[getattr(transport, snake)]
    return wrapped._retry, wrapped._timeout


def exception_names(retry) -> set[str]:
    """The exception classes a generated `retries.if_exception_type(...)` predicate retries."""
    for cell in retry._predicate.__closure__ or ():
        if isinstance(cell.cell_contents, tuple):
            return {cls.__name__ for cls in cell.cell_contents}
    raise RuntimeError("the predicate is not if_exception_type's")


def seconds(text: str) -> float:
    """A lab duration ("250ms", "60s") in seconds."""
    units = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit) and text[: -len(unit)].replace(".", "", 1).isdigit():
            return float(text[: -len(unit)]) * units[unit]
    raise RuntimeError(f"not a duration: {text!r}")


def recorded_sleeps(retry, calls: int) -> tuple[dict[int, list[float]], list[int]]:
    """google-api-core's Retry around a call that always fails UNAVAILABLE, on a clock only its sleeps advance:
    its sleeps by retry index (ms) and the attempts of each call."""
    from google.api_core import exceptions
    from google.api_core.retry import retry_base, retry_unary

    clock = [0.0]
    sleeps: dict[int, list[float]] = {}
    index = [0]

    def sleep(seconds_: float) -> None:
        index[0] += 1
        sleeps.setdefault(index[0], []).append(seconds_ * 1000)
        clock[0] += seconds_

    fake = types.SimpleNamespace(monotonic=lambda: clock[0], sleep=sleep)
    saved = (retry_unary.time, retry_base.time)
    retry_unary.time, retry_base.time = fake, fake
    attempts_per_call = []
    try:
        for _ in range(calls):
            index[0] = 0
            attempts = [0]

            def failing():
                attempts[0] += 1
                raise exceptions.ServiceUnavailable("retrylab real-imports: always unavailable")

            try:
                retry(failing)()
            except (exceptions.RetryError, exceptions.ServiceUnavailable):
                pass
            attempts_per_call.append(attempts[0])
        return sleeps, attempts_per_call
    finally:
        retry_unary.time, retry_base.time = saved


def lab_attempts(predicted: dict[int, list[float]], deadline_s: float, calls: int) -> list[int]:
    """Attempts per call of the lab's policy when every attempt fails at once: independent draws of each retry's
    sleep, summed until the next would end past the deadline (the lab's `deadline`, as google-api-core's)."""
    rng = random.Random(1)
    counts = []
    for _ in range(calls):
        elapsed, attempts = 0.0, 1
        while True:
            samples = predicted.get(attempts)
            if not samples:
                raise RuntimeError(f"the lab's delays stop at retry {attempts - 1}; ask for more retries")
            sleep = rng.choice(samples) / 1000
            if elapsed + sleep >= deadline_s:
                break
            elapsed += sleep
            attempts += 1
        counts.append(attempts)
    return counts


def mean_and_se(values: list[int]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(variance / n)


def check(case: dict, retrylab: Retrylab, report: Report) -> None:
    name = case["case"]
    imported, warnings = retrylab.import_client(case["config"], "--method", case["entry"])
    retry, default_timeout = library_method(case["entry"])
    if retry is None:
        said = imported.get("max_attempts") == 1 and imported.get("timeout") == f"{default_timeout:g}s"
        report.check(name, "settings", said, f"the library sends one attempt with timeout {default_timeout} s; "
                     f"the import says {imported}")
        return
    expected = {
        "base": retry._initial, "cap": retry._maximum, "deadline": retry._timeout, "timeout": default_timeout,
    }
    same = all(math.isclose(seconds(imported[key]), value) for key, value in expected.items() if value is not None)
    same &= math.isclose(imported["multiplier"], retry._multiplier) and "max_attempts" not in imported
    outcomes = set().union(*(OUTCOMES.get(cls, set()) for cls in exception_names(retry)))
    same &= set(imported.get("retry_on", [])) == outcomes
    report.check(name, "settings", same, f"the library runs Retry(initial={retry._initial}, maximum="
                 f"{retry._maximum}, multiplier={retry._multiplier}, timeout={retry._timeout}) with default timeout "
                 f"{default_timeout} on {sorted(outcomes)}; the import says {imported}")
    report.warned(name, warnings, "never read", "maxAttempts is not read by the generated clients")
    calls = case["calls"]
    measured, attempts = recorded_sleeps(retry, calls)
    retries = max(measured)
    predicted = retrylab.delays(imported["strategy"], imported, retries + 40)
    # A sleep that would end past the deadline is not taken, so only the retries that every call reaches whole
    # are free draws: those whose longest possible sleeps, added up, end before the deadline.
    whole, longest = [], 0.0
    for n in range(1, retries + 1):
        longest += min(retry._maximum, retry._initial * retry._multiplier ** (n - 1))
        if longest >= retry._timeout:
            break
        whole.append(n)
    free = {n: measured[n] for n in whole}
    ratio = worst_ratio(free, predicted)
    report.check(name, "sleeps", bool(whole) and ratio <= 1.0,
                 f"worst KS D is {ratio:.2f} of its threshold over retries {whole[0]} to {whole[-1]}")
    lab = lab_attempts(predicted, retry._timeout, calls)
    (m_lib, se_lib), (m_lab, se_lab) = mean_and_se(attempts), mean_and_se(lab)
    limit = 4 * math.hypot(se_lib, se_lab)
    report.check(name, "attempts", abs(m_lib - m_lab) <= limit,
                 f"google-api-core {m_lib:.3f} ± {se_lib:.3f} attempts per call, the lab {m_lab:.3f} ± {se_lab:.3f}")
    # The channel reading (gRFC A6) stops at maxAttempts, which the generated library never reads.
    import tomllib
    channel_args = ["import", case["config"], "--method", case["entry"], "--reading", "channel"]
    channel = tomllib.loads(retrylab._run(channel_args).stdout)["client"]
    capped = channel.get("max_attempts")
    report.check(name, "reading", capped is not None and abs(m_lib - capped) > limit,
                 f"read as a gRPC channel the file allows {capped} attempts, which is not what the library runs")
    near = dict(imported, multiplier=3.0)
    miss = worst_ratio(free, retrylab.delays(near["strategy"], near, retries))
    report.check(name, "power", miss > 1.0, f"a near miss (multiplier 3) is refused: {miss:.2f} of the threshold")


def main() -> int:
    retrylab, only = arguments(__doc__)
    report = Report()
    cases = read_cases("gapic", only)
    report.run_each(cases, lambda case: check(case, retrylab, report))
    return report.summary("gapic")


if __name__ == "__main__":
    sys.exit(main())
