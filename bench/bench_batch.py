"""Benchmark devutils.batch's planner against caps from 8 to 2**63 - 1.

Run from the repository root after ``python3 -m pip install -e .``::

    python3 bench/bench_batch.py

For each case it prints the median of 7 runs of ``plan_batch`` (and, for the first, the
old approach's cost: walking every size up to the cap, timed up to a cap of 10**6).
Last, what `devutils.divisors.nearest_multiple` weighs (``_TURNS_PER_TRY``): trying one
number near 2 * 10**18 (factoring it) against one turn of its loop over sizes.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import time

from devutils.batch import BatchError, plan_batch
from devutils.divisors import has_divisor_in

CASES = [
    ("97 on 2 devices, nearest", (97, 10**9, 2), {"rounding": "nearest"}),
    ("2**61 - 1 (prime), exact", (2**61 - 1, 10**9, 1), {}),
    ("2**61 - 1, at least 2 per device", (2**61 - 1, 10**9, 1), {"min_per_device": 2}),
    ("10**18, 3 devices, nearest", (10**18, 10**9, 3), {"rounding": "nearest"}),
    ("96 with a cap of 8", (96, 8, 2), {}),
    (
        "2 * 10**18 + 254260, 10**9..1.2 * 10**9",
        (2 * 10**18 + 254260, 12 * 10**8, 1),
        {
            "min_per_device": 10**9,
        },
    ),
]


def median(function: object, repeats: int = 7) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        with contextlib.suppress(BatchError):
            function()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def walk(target: int, cap: int, devices: int) -> int:
    """What the planner did before: every size up to the cap, for the nearest targets."""
    best = 0
    for per in range(1, cap + 1):
        unit = per * devices
        best = max(best, target // unit * unit)
    return best


def main() -> int:
    print(f"Python {sys.version.split()[0]}; median of 7, milliseconds")
    for name, args, options in CASES:
        seconds = median(lambda args=args, options=options: plan_batch(*args, **options))
        print(f"  plan_batch {name:38} {seconds * 1e3:9.3f} ms")
    for cap in (10**4, 10**5, 10**6):
        seconds = median(lambda cap=cap: walk(97, cap, 2), repeats=3)
        print(f"  walking every size up to {cap:>9,}            {seconds * 1e3:9.3f} ms")
    x, low, high = 2 * 10**18 + 254260, 10**9, 12 * 10**8
    tries = median(lambda: [has_divisor_in(n, low, high) for n in range(x - 1000, x)], 3)
    turns = median(lambda: max(x // d * d for d in range(low, low + 10**6)), 3)
    per_try, per_turn = tries / 1000, turns / 10**6
    print(f"  one try {per_try * 1e3:.3f} ms, one turn {per_turn * 1e9:.0f} ns: ", end="")
    print(f"a try costs {per_try / per_turn:,.0f} turns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
