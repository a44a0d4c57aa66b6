#!/usr/bin/env python3
"""Draw retry sleeps from the real Python client libraries, through each library's own code.

    sample_python.py --cases cases.csv --seed 1 --samples 20000 --out python.csv [--only CASE,...]
    sample_python.py --list          the cases this file can sample

Writes CSV `case,retry,sleep_ms`: for every case in cases.csv that this file knows (CASES below), `--samples`
simulated requests, each failing until the library has slept before retries 1..R (R from cases.csv), so there are
exactly `--samples` rows per retry index. `retry` is retrylab's n: attempts failed so far, the sleep before the
first retry has n = 1.

Nothing here computes a delay: each sampler drives the library's own retry machinery (botocore's retry handler,
tenacity's Retrying loop, urllib3's Retry.increment/get_backoff_time, google-api-core's Retry wrapper) and records
the sleep it asks for. Where the library itself decides how many retries there are (botocore, urllib3), the sampler
checks that number against cases.csv.

Every library here draws from the `random` module's shared generator, so `random.seed` before each case makes the
output a function of (seed, case) alone: the order or selection of cases does not change any case's samples.
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
from types import SimpleNamespace


class SamplerError(Exception):
    pass


# --- botocore ----------------------------------------------------------------------------------------------------

# A response botocore classifies as transient (HTTP 503, an error code no list names as throttling) and one it
# classifies as throttling (the classic ThrottlingException code, HTTP 400).
_BOTO_TRANSIENT = (503, "ServiceUnavailable")
_BOTO_THROTTLING = (400, "ThrottlingException")


def _boto_needs_retry_kwargs(attempts: int, status: int, code: str) -> dict:
    from botocore.awsrequest import AWSResponse

    http = AWSResponse("https://example.invalid/", status, {}, None)
    parsed = {"Error": {"Code": code, "Message": "sampled"}, "ResponseMetadata": {}}
    return {
        "attempts": attempts,
        "response": (http, parsed),
        "caught_exception": None,
        "operation": None,
        "request_dict": {"context": {}},
    }


def _boto_fake_client(service_id: str):
    """The parts of a botocore client that the retry registration functions touch."""
    from botocore.hooks import HierarchicalEmitter
    from botocore.model import ServiceId

    service_model = SimpleNamespace(service_id=ServiceId(service_id), endpoint_prefix=service_id.lower())
    return SimpleNamespace(meta=SimpleNamespace(service_model=service_model, events=HierarchicalEmitter()))


def botocore_standard(response):
    """Standard mode (botocore's default `retry_mode`), registered as botocore registers it for a client with no
    max_attempts configured, so DEFAULT_MAX_ATTEMPTS and the retry quota are the library's. A fresh handler per
    request: each simulated request starts with a full quota."""
    from botocore.retries import standard

    status, code = response

    def one_request(limit: int) -> list[float]:
        handler = standard.register_retry_handler(_boto_fake_client("STS"))
        sleeps = []
        for attempts in range(1, limit + 2):
            delay = handler.needs_retry(**_boto_needs_retry_kwargs(attempts, status, code))
            if delay is None:
                break
            sleeps.append(delay)
        return sleeps

    return one_request


def botocore_legacy():
    """Legacy mode: the retry config built from botocore's bundled _retry.json the way the client builds it (no
    client-side max_attempts), and the handler retryhandler.create_retry_handler makes from it."""
    from botocore import loaders, retryhandler, translate

    retry_model = loaders.create_loader().load_data("_retry")
    config = translate.build_retry_config("sts", retry_model.get("retry", {}), retry_model.get("definitions", {}))
    handler = retryhandler.create_retry_handler(config, "sts")
    status, code = _BOTO_TRANSIENT

    def one_request(limit: int) -> list[float]:
        sleeps = []
        for attempts in range(1, limit + 2):
            kwargs = _boto_needs_retry_kwargs(attempts, status, code)
            delay = handler(**kwargs)
            if delay is None:
                break
            sleeps.append(delay)
        return sleeps

    return one_request


# --- tenacity ----------------------------------------------------------------------------------------------------


def tenacity_case(make_wait):
    """A tenacity Retrying loop around a call that always raises, stopped after R retries; its `sleep` hook
    records what the wait strategy asked for instead of sleeping."""
    import tenacity

    wait = make_wait(tenacity)

    def one_request(limit: int) -> list[float]:
        sleeps: list[float] = []
        retrying = tenacity.Retrying(
            wait=wait, stop=tenacity.stop_after_attempt(limit + 1), sleep=sleeps.append, reraise=True
        )

        def always_fails():
            raise OSError("sampled failure")

        try:
            retrying(always_fails)
        except OSError:
            pass
        return sleeps

    return one_request


# --- urllib3 -----------------------------------------------------------------------------------------------------


def urllib3_case(make_retry):
    """urllib3's Retry object walked the way the connection pool walks it on a connect timeout: increment() (which
    raises MaxRetryError when the retries are used up), then the backoff that Retry.sleep() would sleep
    (get_backoff_time; sleep() skips values <= 0, recorded here as 0)."""
    from urllib3.exceptions import ConnectTimeoutError, MaxRetryError
    from urllib3.util.retry import Retry

    first = make_retry(Retry)

    def one_request(limit: int) -> list[float]:
        retry = first
        sleeps = []
        for _ in range(limit + 1):
            try:
                retry = retry.increment(method="GET", url="/", error=ConnectTimeoutError("sampled"))
            except MaxRetryError:
                break
            sleeps.append(max(0.0, retry.get_backoff_time()))
        return sleeps

    return one_request


# --- google-api-core ---------------------------------------------------------------------------------------------


def google_default_retry():
    """google.api_core.retry.Retry() with every default, wrapped around a call that raises ServiceUnavailable (a
    transient error for the default predicate) R times and then succeeds. The module's `time.sleep` is replaced by
    a recorder while sampling; the deadline check still reads the real clock, so with no real sleeping the 120 s
    default timeout never ends a sampled request early."""
    from google.api_core import exceptions
    from google.api_core.retry import retry_unary

    policy = retry_unary.Retry()

    def one_request(limit: int) -> list[float]:
        sleeps: list[float] = []
        failures = [0]

        def flaky():
            if failures[0] < limit:
                failures[0] += 1
                raise exceptions.ServiceUnavailable("sampled")
            return "ok"

        real_time = retry_unary.time
        retry_unary.time = SimpleNamespace(sleep=sleeps.append, monotonic=real_time.monotonic)
        try:
            policy(flaky)()
        finally:
            retry_unary.time = real_time
        return sleeps

    return one_request


# --- the cases ---------------------------------------------------------------------------------------------------

# case -> (builder of a one_request(limit) function, whether the library decides the number of retries itself)
CASES = {
    "botocore-standard": (lambda: botocore_standard(_BOTO_TRANSIENT), True),
    "botocore-standard-throttling": (lambda: botocore_standard(_BOTO_THROTTLING), True),
    "botocore-legacy": (botocore_legacy, True),
    "clamped-exponential": (
        lambda: tenacity_case(lambda t: t.wait_exponential(multiplier=0.5, min=1, max=10)),
        False,
    ),
    "floored-full-jitter": (
        lambda: tenacity_case(lambda t: t.wait_random_exponential(multiplier=0.5, max=10)),
        False,
    ),
    "exponential-plus-jitter": (
        lambda: tenacity_case(lambda t: t.wait_exponential_jitter(initial=1, max=30, jitter=1)),
        False,
    ),
    "urllib3": (
        lambda: urllib3_case(lambda R: R(total=5, backoff_factor=0.5, backoff_jitter=0.2, backoff_max=120)),
        True,
    ),
    "urllib3-default": (lambda: urllib3_case(lambda R: R.DEFAULT), True),
    "google-api-core": (google_default_retry, False),
}


def read_cases(path: str) -> dict[str, int]:
    with open(path, newline="") as f:
        return {row["case"]: int(row["retries"]) for row in csv.DictReader(f)}


def sample_case(case: str, retries: int, seed: int, samples: int) -> list[list[float]]:
    build, library_decides = CASES[case]
    one_request = build()
    random.seed(f"{case}/{seed}")
    columns: list[list[float]] = [[] for _ in range(retries)]
    for _ in range(samples):
        sleeps = one_request(retries)
        if len(sleeps) != retries:
            who = "the library allows" if library_decides else "the sampler produced"
            raise SamplerError(f"{case}: {who} {len(sleeps)} retries, cases.csv says {retries}")
        for column, seconds in zip(columns, sleeps):
            column.append(float(seconds) * 1000.0)
    return columns


def main() -> int:
    if sys.argv[1:] == ["--list"]:
        print("\n".join(CASES))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--samples", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", default="", help="comma-separated case names (default: every case known here)")
    args = parser.parse_args()

    table = read_cases(args.cases)
    wanted = [c for c in args.only.split(",") if c] or [c for c in table if c in CASES]
    try:
        with open(args.out, "w", newline="") as out:
            out.write("case,retry,sleep_ms\n")
            for case in wanted:
                if case not in CASES or case not in table:
                    raise SamplerError(f"{case}: not a Python case in {args.cases}")
                columns = sample_case(case, table[case], args.seed, args.samples)
                for n, column in enumerate(columns, start=1):
                    out.writelines(f"{case},{n},{ms!r}\n" for ms in column)
    except SamplerError as e:
        print(f"sample_python: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
