#!/usr/bin/env python3
"""Compare retrylab's delay distributions with samples drawn from the real client libraries.

    compare.py --cases cases.csv --samples 20000 --library LIB.csv... --retrylab "cargo run --release --quiet --"
    compare.py --cases cases.csv --samples 20000 --library LIB.csv... --against OTHER.csv...   (self-test)

LIB.csv and OTHER.csv hold `case,retry,sleep_ms` rows (the samplers' output). With --retrylab, each case's
`retrylab_args` from cases.csv is run as `RETRYLAB ARGS --seed 1 --samples N --raw`, which prints `retry,sleep_ms`
rows. With --against, the other side is a second set of library samples (another seed), which checks this
comparison itself before retrylab can print raw delays.

For every case and retry index n = 1..R (R = the case's `retries`), both sides must hold exactly N samples of n and
no other retry index. Then:
  * if both sides are deterministic (every sample within 1e-6 ms of every other), their values must agree within
    1e-6 ms;
  * otherwise the two-sample Kolmogorov-Smirnov statistic D (the largest gap between the two empirical CDFs) must
    not exceed c(alpha) * sqrt((n + m) / (n * m)) with alpha = 0.001, c = 1.949.
Both sides are seeded, so a verdict never changes between runs. One line per case and retry index, then a
`comparisons: P passed, F failed` line; exit status 1 if anything failed.
"""

from __future__ import annotations

import argparse
import csv
import math
import shlex
import subprocess
import sys
from collections import defaultdict

ALPHA = 0.001
C_ALPHA = 1.949  # sqrt(-ln(ALPHA / 2) / 2) = 1.9494...
EXACT_TOLERANCE_MS = 1e-6
RETRYLAB_SEED = 1

assert abs(C_ALPHA - math.sqrt(-math.log(ALPHA / 2) / 2)) < 1e-3


def ks_statistic(a: list[float], b: list[float]) -> float:
    """Two-sample Kolmogorov-Smirnov D = sup_x |F_a(x) - F_b(x)|, exact with ties: both empirical CDFs are
    evaluated after every sample equal to x has been counted on both sides."""
    a = sorted(a)
    b = sorted(b)
    n, m = len(a), len(b)
    i = j = 0
    d = 0.0
    while i < n and j < m:
        x = a[i] if a[i] <= b[j] else b[j]
        while i < n and a[i] == x:
            i += 1
        while j < m and b[j] == x:
            j += 1
        d = max(d, abs(i / n - j / m))
    # Once one side is exhausted its CDF is 1 and the gap only shrinks from here on.
    return d


def ks_threshold(n: int, m: int) -> float:
    return C_ALPHA * math.sqrt((n + m) / (n * m))


def is_deterministic(xs: list[float]) -> bool:
    return max(xs) - min(xs) <= EXACT_TOLERANCE_MS


def read_cases(path: str) -> list[dict]:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row["retries"] = int(row["retries"])
        args = shlex.split(row["retrylab_args"])
        if "--retries" not in args or args[args.index("--retries") + 1] != str(row["retries"]):
            raise SystemExit(f"cases.csv: {row['case']}: retrylab_args must carry --retries {row['retries']}")
    return rows


def read_library(paths: list[str]) -> dict[str, dict[int, list[float]]]:
    samples: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                samples[row["case"]][int(row["retry"])].append(float(row["sleep_ms"]))
    return samples


def parse_raw(text: str) -> dict[int, list[float]]:
    """`retry,sleep_ms` rows; a header line (or any line whose first field is not a number) is skipped."""
    by_retry: dict[int, list[float]] = defaultdict(list)
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        fields = line.split(",")
        if len(fields) != 2:
            raise ValueError(f"expected `retry,sleep_ms`, got {line!r}")
        try:
            retry = int(fields[0])
        except ValueError:
            continue
        by_retry[retry].append(float(fields[1]))
    return by_retry


def run_retrylab(command: list[str], case: dict, samples: int) -> dict[int, list[float]]:
    argv = command + shlex.split(case["retrylab_args"]) + ["--seed", str(RETRYLAB_SEED), "--samples", str(samples), "--raw"]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        raise RuntimeError(f"`{shlex.join(argv)}` exited {done.returncode}: {tail}")
    return parse_raw(done.stdout)


def shape_problem(side: str, by_retry: dict[int, list[float]], retries: int) -> str | None:
    extra = sorted(set(by_retry) - set(range(1, retries + 1)))
    if extra:
        return f"{side} has retry indices beyond 1..{retries}: {extra[:5]}"
    return None


def compare_one(lib: list[float], other: list[float], samples: int) -> tuple[bool, str]:
    if len(lib) != samples or len(other) != samples:
        return False, f"sample counts {len(lib)} (library) and {len(other)} (other), want {samples} each"
    if is_deterministic(lib) and is_deterministic(other):
        ok = abs(min(lib) - min(other)) <= EXACT_TOLERANCE_MS and abs(max(lib) - max(other)) <= EXACT_TOLERANCE_MS
        return ok, f"exact  library {lib[0]:.6f} ms, other {other[0]:.6f} ms"
    d = ks_statistic(lib, other)
    threshold = ks_threshold(len(lib), len(other))
    return d <= threshold, f"KS D={d:.5f} threshold={threshold:.5f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", required=True)
    parser.add_argument("--samples", type=int, required=True)
    parser.add_argument("--library", nargs="+", required=True, help="library sample CSVs (case,retry,sleep_ms)")
    side = parser.add_mutually_exclusive_group(required=True)
    side.add_argument("--retrylab", help="the retrylab command, split like a shell would")
    side.add_argument("--against", nargs="+", help="self-test: a second set of library sample CSVs")
    parser.add_argument("--only", default="", help="comma-separated case names")
    args = parser.parse_args()

    cases = read_cases(args.cases)
    only = [c for c in args.only.split(",") if c]
    if only:
        unknown = set(only) - {c["case"] for c in cases}
        if unknown:
            raise SystemExit(f"not in {args.cases}: {', '.join(sorted(unknown))}")
        cases = [c for c in cases if c["case"] in only]
    library = read_library(args.library)
    against = read_library(args.against) if args.against else None
    command = shlex.split(args.retrylab) if args.retrylab else None
    other_name = "retrylab" if command else "other seed"

    passed = failed = 0
    width = max(len(c["case"]) for c in cases)
    for case in cases:
        name, retries = case["case"], case["retries"]
        lib = library.get(name, {})
        try:
            other = run_retrylab(command, case, args.samples) if command else against.get(name, {})
            problem = shape_problem("library", lib, retries) or shape_problem(other_name, other, retries)
        except (RuntimeError, ValueError, OSError) as e:
            problem = str(e)
        if problem:
            for n in range(1, retries + 1):
                print(f"FAIL  {name:<{width}}  n={n}  {problem if n == 1 else 'as n=1'}")
            failed += retries
            continue
        for n in range(1, retries + 1):
            ok, detail = compare_one(lib.get(n, []), other.get(n, []), args.samples)
            print(f"{'PASS' if ok else 'FAIL'}  {name:<{width}}  n={n}  {detail}")
            passed += ok
            failed += not ok
    print(f"comparisons: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
