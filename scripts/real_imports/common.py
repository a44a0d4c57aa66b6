"""What the import checks share: `retrylab import` and `retrylab delays` run as commands, and the verdict lines.

The distribution test is scripts/real_clients/compare.py's two-sample Kolmogorov-Smirnov statistic, imported from
there rather than written twice, at a stricter alpha than there: real-clients seeds both sides, so its verdicts
never change between runs, while grpcio's and botocore's random numbers cannot be seeded here, so every run is a
new draw and the false alarms of ~30 comparisons per run must stay rare in CI.
"""

from __future__ import annotations

import argparse
import csv
import math
import pathlib
import shlex
import subprocess
import sys
import tomllib

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "real_clients"))
from compare import ks_statistic, parse_raw  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
# The keys of an imported [client] table that `retrylab delays --set` takes (its --help lists them).
DELAY_KEYS = ("base", "cap", "multiplier", "max_attempts", "floor", "jitter", "jitter_fraction", "steps",
              "throttling_base")
LAB_SAMPLES = 20000
LAB_SEED = 1
ALPHA = 1e-5                                   # per comparison: about 3 in 10,000 runs show a false alarm
C_ALPHA = math.sqrt(-math.log(ALPHA / 2) / 2)  # 2.47


def ks_threshold(n: int, m: int) -> float:
    """The two-sample KS rejection threshold at ALPHA for samples of n and m."""
    return C_ALPHA * math.sqrt((n + m) / (n * m))


def worst_ratio(measured: dict[int, list[float]], predicted: dict[int, list[float]]) -> float:
    """The largest KS D over the retry indices, as a multiple of its threshold (above 1: some index is refused)."""
    return max((ks_statistic(measured[r], predicted.get(r, [])) / ks_threshold(len(measured[r]), len(predicted[r]))
                for r in measured if measured[r] and predicted.get(r)), default=0.0)


def gaps_ms(arrivals: list[float]) -> list[float]:
    """The gaps between consecutive arrivals (monotonic seconds), in ms."""
    return [(later - earlier) * 1000 for earlier, later in zip(arrivals, arrivals[1:])]


def arguments(doc: str) -> tuple["Retrylab", list[str]]:
    """A check script's command line: `--retrylab COMMAND [--only CASE,...]`."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--retrylab", required=True, help="the retrylab command, split like a shell would")
    parser.add_argument("--only", default="", help="comma-separated case names")
    args = parser.parse_args()
    return Retrylab(args.retrylab), [case for case in args.only.split(",") if case]


class Report:
    """PASS/FAIL lines, one per comparison, and their tally."""

    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def run_each(self, cases: list[dict], check) -> None:
        """`check(case)` for every case; one that fails to run at all is one FAIL line, and the rest still run."""
        for case in cases:
            try:
                check(case)
            except (RuntimeError, KeyError, OSError) as error:
                self.check(case["case"], "run", False, str(error))

    def summary(self, library: str) -> int:
        """The tally line; the exit status."""
        print(f"{library} comparisons: {self.passed} passed, {self.failed} failed", flush=True)
        return 1 if self.failed else 0

    def warned(self, case: str, warnings: list[str], phrase: str, claim: str) -> bool:
        """The import's warnings (stderr lines) say `phrase`: it warns of what `claim` describes."""
        said = any(phrase in line for line in warnings)
        return self.check(case, "import", said, f"the import {'warns' if said else 'does not warn'} {claim}")

    def check(self, case: str, what: str, ok: bool, detail: str) -> bool:
        print(f"{'PASS' if ok else 'FAIL'}  {case:<24}  {what:<12}  {detail}", flush=True)
        self.passed += ok
        self.failed += not ok
        return ok

    def compare_distribution(self, case: str, what: str, measured: list[float], predicted: list[float]) -> bool:
        if not measured or not predicted:
            return self.check(case, what, False, f"{len(measured)} measured and {len(predicted)} predicted values")
        d = ks_statistic(measured, predicted)
        threshold = ks_threshold(len(measured), len(predicted))
        mean_measured = sum(measured) / len(measured)
        mean_predicted = sum(predicted) / len(predicted)
        detail = (f"KS D={d:.4f} threshold={threshold:.4f} (n={len(measured)}); mean {mean_measured:.2f} ms, "
                  f"retrylab {mean_predicted:.2f} ms")
        return self.check(case, what, d <= threshold, detail)


def read_cases(library: str, only: list[str]) -> list[dict]:
    with open(ROOT / "scripts/real_imports/cases.csv", newline="") as f:
        rows = [row for row in csv.DictReader(f) if row["library"] == library]
    for row in rows:
        row["calls"] = int(row["calls"])
    return [row for row in rows if not only or row["case"] in only]


class Retrylab:
    """The retrylab command line, run as a user would run it."""

    def __init__(self, command: str) -> None:
        self.command = shlex.split(command)

    def _run(self, args: list[str]) -> subprocess.CompletedProcess:
        done = subprocess.run(self.command + args, capture_output=True, text=True, cwd=ROOT)
        if done.returncode != 0:
            tail = " | ".join(done.stderr.strip().splitlines()[-3:])
            raise RuntimeError(f"`retrylab {shlex.join(args)}` exited {done.returncode}: {tail}")
        return done

    def import_client(self, config: str, entry_flag: str, entry: str) -> tuple[dict, list[str]]:
        """The [client] table `retrylab import` prints for the file, and its warnings (stderr lines)."""
        args = ["import", config] + ([entry_flag, entry] if entry else [])
        done = self._run(args)
        return tomllib.loads(done.stdout)["client"], done.stderr.strip().splitlines()

    def delays(self, strategy: str, client: dict, retries: int | None = None) -> dict[int, list[float]]:
        """`retrylab delays STRATEGY --set ... --raw` for the imported keys it takes: sleeps in ms by retry index.
        Without `retries`, every retry the policy's max_attempts allows (so the count tells the attempts)."""
        args = ["delays", strategy, "--raw", "--seed", str(LAB_SEED), "--samples", str(LAB_SAMPLES)]
        for key in DELAY_KEYS:
            if key in client:
                args += ["--set", f"{key}={client[key]}"]
        if retries is not None:
            args += ["--retries", str(retries)]
        return parse_raw(self._run(args).stdout)
