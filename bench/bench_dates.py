"""Time count_months and months_between against the alternatives, in one run.

Run: ``python3 -m pip install -e . --group bench && python3 bench/bench_dates.py``.
Reports the median of several repeats, in nanoseconds per call, for ranges of one month,
one year, ten years and a hundred years, so that growth with the range shows.

Then columns: 1,000,000 rows of start and end datetimes (pandas Series, 1990..2030; the
ends up to about three years later, 1 % missing): the column functions against a Python
loop over the scalar ones (timed on 100,000 rows and scaled) and against the hand-rolled
``(e.dt.year - s.dt.year) * 12 + (e.dt.month - s.dt.month) + 1``; milliseconds, median
of 5, results checked equal first.
"""

from __future__ import annotations

import statistics
import sys
import time as clock
from collections.abc import Callable
from datetime import date, datetime, time, timedelta

import numpy as np
import pandas as pd
import pendulum
from dateutil.relativedelta import relativedelta

from devutils.dates import add_months, count_months, months_between

NOON = time(12)
RANGES = {
    "1 month": (date(2024, 1, 15), date(2024, 2, 20)),
    "1 year": (date(2024, 1, 15), date(2025, 1, 20)),
    "10 years": (date(2024, 1, 15), date(2034, 1, 20)),
    "100 years": (date(1924, 1, 15), date(2024, 1, 20)),
}

DATETIMES = {d: datetime.combine(d, NOON) for pair in RANGES.values() for d in pair}


def rails_count(start: date, end: date) -> int:
    """The Rails idiom: walk every day, count distinct (year, month)."""
    return len(
        {((d := start + timedelta(days=i)).year, d.month) for i in range((end - start).days + 1)}
    )


def relativedelta_months(start: date, end: date) -> int:
    delta = relativedelta(end, start)
    return delta.years * 12 + delta.months


def per_call_ns(function: Callable[[], object], budget: float = 0.2) -> float:
    loops = 1
    while True:
        start = clock.perf_counter()
        for _ in range(loops):
            function()
        if clock.perf_counter() - start > budget / 5:
            break
        loops *= 4
    times = []
    for _ in range(7):
        start = clock.perf_counter()
        for _ in range(loops):
            function()
        times.append(clock.perf_counter() - start)
    return statistics.median(times) / loops * 1e9


def main() -> int:
    print(f"Python {sys.version.split()[0]}; ns per call, median of 7")
    header = "| function | " + " | ".join(RANGES) + " |"
    print(header)
    print("|---" * (len(RANGES) + 1) + "|")
    rows: dict[str, Callable[[date, date], object]] = {
        "devutils count_months": count_months,
        "devutils months_between": months_between,
        "devutils count_months, datetimes": lambda s, e: count_months(DATETIMES[s], DATETIMES[e]),
        "devutils months_between, datetimes": lambda s, e: months_between(
            DATETIMES[s], DATETIMES[e]
        ),
        "Rails-style day walk": rails_count,
        "relativedelta(end, start)": relativedelta_months,
        "pendulum diff().in_months()": lambda s, e: (
            pendulum.date(e.year, e.month, e.day) - pendulum.date(s.year, s.month, s.day)
        ).in_months(),
        "pandas Period difference": lambda s, e: (pd.Period(e, "M") - pd.Period(s, "M")).n + 1,
    }
    results: dict[str, list[float]] = {}
    for name, function in rows.items():
        cells = []
        for start, end in RANGES.values():
            cells.append(per_call_ns(lambda f=function, s=start, e=end: f(s, e)))
        results[name] = cells
        print(f"| {name} | " + " | ".join(f"{ns:,.0f}" for ns in cells) + " |", flush=True)
    ours = results["devutils months_between"]
    theirs = results["relativedelta(end, start)"]
    ratio = min(t / o for t, o in zip(theirs, ours, strict=True))
    print(f"\nmonths_between is at least {ratio:.1f}x faster than relativedelta")
    columns()
    return 0


def median_ms(function: Callable[[], object], repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = clock.perf_counter()
        function()
        times.append(clock.perf_counter() - start)
    return statistics.median(times) * 1e3


def columns(rows: int = 1_000_000, looped: int = 100_000) -> None:
    rng = np.random.default_rng(0)
    seconds = rng.integers(631_152_000, 1_893_456_000, rows)  # 1990 .. 2030
    starts = pd.Series(pd.to_datetime(seconds, unit="s"))
    ends = starts + pd.to_timedelta(rng.integers(0, 10**8, rows), unit="s")
    starts[rng.random(rows) < 0.01] = pd.NaT
    naive = (starts.to_numpy(), ends.to_numpy())

    def hand_rolled() -> object:
        return (ends.dt.year - starts.dt.year) * 12 + (ends.dt.month - starts.dt.month) + 1

    def loop(function: Callable[..., object], n: int) -> Callable[[], object]:
        pairs = list(zip(starts[:n], ends[:n], strict=True))
        return lambda: [None if s is pd.NaT else function(s, e) for s, e in pairs]

    assert count_months(starts, ends).equals(hand_rolled().astype("float64"))
    print(f"\n{rows:,} rows (pandas Series, datetime64[{np.datetime_data(naive[0].dtype)[0]}]), ms")
    scale = rows / looped
    table = {
        "count_months(column, column)": median_ms(lambda: count_months(starts, ends)),
        "count_months on numpy arrays": median_ms(lambda: count_months(*naive)),
        "hand-rolled pandas expression": median_ms(hand_rolled),
        "Python loop over count_months": median_ms(loop(count_months, looped), 3) * scale,
        "months_between(column, column)": median_ms(lambda: months_between(starts, ends)),
        "Python loop over months_between": median_ms(loop(months_between, looped), 3) * scale,
        "add_months(column, 1)": median_ms(lambda: add_months(starts, 1)),
        "starts + pd.DateOffset(months=1)": median_ms(lambda: starts + pd.DateOffset(months=1)),
    }
    for name, ms in table.items():
        print(f"| {name} | {ms:,.1f} |")
    ours, loop_ms = table["count_months(column, column)"], table["Python loop over count_months"]
    hand = table["hand-rolled pandas expression"]
    print(
        f"count_months on columns: {loop_ms / ours:,.0f}x the loop, {hand / ours:.2f}x the hand-rolled"
    )


if __name__ == "__main__":
    sys.exit(main())
