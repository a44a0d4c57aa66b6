"""Compares Sidekiq's own retry delays with retrylab's `sidekiq` strategy, retry by retry.

    python3 compare.py SIDEKIQ_CSV RETRYLAB_CSV

Both files are "retry,sleep_ms" samples. Sidekiq's delay takes ten values per retry, so the check is exact on
the support (the same ten values on both sides) and statistical on the frequencies: each value's count on
each side lies within 5 binomial standard deviations of a tenth of the samples.
"""

import csv
import math
import sys
from collections import Counter, defaultdict


def read(path):
    by_retry = defaultdict(Counter)
    with open(path) as file:
        for row in csv.DictReader(file):
            by_retry[int(row["retry"])][round(float(row["sleep_ms"]))] += 1
    return by_retry


def main(sidekiq_path, retrylab_path):
    sidekiq, retrylab = read(sidekiq_path), read(retrylab_path)
    assert sorted(sidekiq) == sorted(retrylab), f"retries: Sidekiq {sorted(sidekiq)}, retrylab {sorted(retrylab)}"
    for retry in sorted(sidekiq):
        ours, theirs = retrylab[retry], sidekiq[retry]
        assert set(ours) == set(theirs), f"retry {retry}: values {sorted(theirs)} (Sidekiq) vs {sorted(ours)}"
        assert len(ours) == 10, f"retry {retry}: {len(ours)} values, expected 10"
        for counts in (ours, theirs):
            n = sum(counts.values())
            tolerance = 5 * math.sqrt(n * 0.1 * 0.9)
            for value, count in counts.items():
                assert abs(count - n / 10) <= tolerance, f"retry {retry}: {value} ms drawn {count} of {n} times"
    print(f"sidekiq: {len(sidekiq)} retries, the same ten values each, frequencies uniform on both sides")


if __name__ == "__main__":
    main(*sys.argv[1:])
