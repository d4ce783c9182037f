"""Print how other libraries answer devutils.dates' edge cases (the table in docs/dates.md).

Run: ``python3 -m pip install -e . --group bench && python3 bench/compare_dates.py``.
Java's ``ChronoUnit.MONTHS.between`` and PostgreSQL's ``age()`` are not Python: their
columns in the docs were measured separately (OpenJDK 17, PostgreSQL 15).
"""

from __future__ import annotations

from datetime import date, datetime

import arrow
import pandas as pd
import pendulum
from dateutil.relativedelta import relativedelta
from dateutil.rrule import MONTHLY, rrule

from devutils.dates import add_months, count_months, months_between

CASES = [
    (date(2024, 1, 15), date(2024, 3, 5)),
    (date(2023, 12, 31), date(2024, 1, 1)),
    (date(2024, 1, 31), date(2024, 2, 29)),
    (date(2024, 2, 29), date(2025, 2, 28)),
    (datetime(2024, 1, 31, 10), datetime(2024, 2, 29, 9)),
    (date(2024, 3, 31), date(2024, 2, 29)),
]


def as_datetime(value: date) -> datetime:
    return value if isinstance(value, datetime) else datetime(value.year, value.month, value.day)


def main() -> None:
    print(
        "start | end | count_months | months_between | relativedelta | pendulum in_months"
        " | pandas Period diff | arrow span_range count | rrule(MONTHLY) count"
    )
    for start, end in CASES:
        delta = relativedelta(end, start)
        pstart, pend = pendulum.instance(as_datetime(start)), pendulum.instance(as_datetime(end))
        period = (pd.Period(start, "M") - pd.Period(end, "M")).n * -1
        try:
            spans = len(
                list(
                    arrow.Arrow.span_range(
                        "month", arrow.get(as_datetime(start)), arrow.get(as_datetime(end))
                    )
                )
            )
        except Exception as exc:
            spans = f"error {type(exc).__name__}"
        rr = len(list(rrule(MONTHLY, dtstart=as_datetime(start), until=as_datetime(end))))
        try:
            counted: object = count_months(start, end)
        except ValueError:
            counted = "ValueError"
        print(
            f"{start} | {end} | {counted} | {months_between(start, end)} | "
            f"{delta.years * 12 + delta.months} | {(pend - pstart).in_months()} | {period} | "
            f"{spans} | {rr}"
        )
    jan31 = date(2024, 1, 31)
    print("\nadd one month to 2024-01-31:")
    print("  devutils", add_months(jan31, 1))
    print("  relativedelta", jan31 + relativedelta(months=1))
    print("  pendulum", pendulum.date(2024, 1, 31).add(months=1))
    print("  pandas DateOffset", (pd.Timestamp(jan31) + pd.DateOffset(months=1)).date())
    print("  arrow shift", arrow.get(jan31).shift(months=1).date())
    leap = date(2024, 2, 29)
    print("round trip: months between 2024-02-29 and itself + 12 months:")
    print("  devutils", months_between(leap, add_months(leap, 12)))
    moved = pendulum.date(2024, 2, 29).add(months=12)
    print("  pendulum", moved, (moved - pendulum.date(2024, 2, 29)).in_months())
    print(
        "rrule(MONTHLY) from 2024-01-31, 4 occurrences:",
        [d.date().isoformat() for d in rrule(MONTHLY, dtstart=datetime(2024, 1, 31), count=4)],
    )


if __name__ == "__main__":
    main()
