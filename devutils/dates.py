"""Month arithmetic that is exact on every edge case, in O(1).

"Months between two dates" means different things; each meaning has its own name here:

* `count_months`: how many calendar months a closed range touches (Jan 15 .. Mar 5 -> 3);
* `months_between`: whole months elapsed, exactly ``relativedelta(end, start)``;
* `add_months`: the same day n months later, clamped to the month's last day.

A date value is any `datetime.date` instance (so `datetime.datetime`,
``pandas.Timestamp`` and pendulum objects work); nothing is parsed from strings.
A plain date next to a naive datetime counts as midnight. Aware datetimes are counted
on the start's own wall clock: the end is converted with ``end.astimezone(start.tzinfo)``.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from datetime import MAXYEAR, MINYEAR, date, datetime, time
from typing import TypeVar

__all__ = [
    "add_months",
    "count_months",
    "days_in_month",
    "iter_months",
    "month_end",
    "month_start",
    "months_between",
]

D = TypeVar("D", bound=date)

_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_FEBRUARY = 2
_MONTHS = 12
_MIDNIGHT = time()


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _dim(year: int, month: int) -> int:
    if month == _FEBRUARY and _is_leap(year):
        return 29
    return _DAYS[month]


def _check_date(name: str, value: object) -> date:
    if not isinstance(value, date):
        kind = type(value).__name__
        msg = f"{name} must be a datetime.date or datetime.datetime, got {kind} {value!r}"
        raise TypeError(msg)
    if value != value:  # noqa: PLR0124 - pandas.NaT is a datetime that equals nothing
        msg = f"{name} must be a real date, got {value!r}"
        raise ValueError(msg)
    return value


def _is_aware(value: date) -> bool:
    return isinstance(value, datetime) and value.utcoffset() is not None


def _pair(start: object, end: object) -> tuple[date, date]:
    """Validate and bring two date values onto one naive wall clock."""
    s = _check_date("start", start)
    e = _check_date("end", end)
    s_dt = isinstance(s, datetime)
    e_dt = isinstance(e, datetime)
    if not s_dt and not e_dt:
        return s, e
    s_aware = _is_aware(s)
    e_aware = _is_aware(e)
    if s_aware != e_aware:
        kinds = [
            "an aware datetime" if a else ("a naive datetime" if d else "a date")
            for a, d in ((s_aware, s_dt), (e_aware, e_dt))
        ]
        msg = f"cannot mix {kinds[0]} and {kinds[1]}: start={start!r}, end={end!r}"
        raise TypeError(msg)
    if s_aware:
        assert isinstance(s, datetime)
        assert isinstance(e, datetime)
        e = e.astimezone(s.tzinfo).replace(tzinfo=None)
        s = s.replace(tzinfo=None)
        return s, e
    if not s_dt:
        s = datetime.combine(s, _MIDNIGHT)
    if not e_dt:
        e = datetime.combine(e, _MIDNIGHT)
    return s, e


def _time_of(value: date) -> time:
    return value.time() if isinstance(value, datetime) else _MIDNIGHT


def _check_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        msg = f"{name} must be an int, got {type(value).__name__} {value!r}"
        raise TypeError(msg)
    return operator.index(value)


def count_months(start: date, end: date) -> int:
    """Return how many calendar months contain a day of the closed range [start, end].

    O(1): ``(end.year - start.year) * 12 + (end.month - start.month) + 1``.

    Args:
        start: The first day (a `date` or `datetime`).
        end: The last day; not before *start* (time of day included).

    Raises:
        TypeError: If either is not a date value, or naive and aware values are mixed.
        ValueError: If *end* is before *start*, or either is ``pandas.NaT``.

    Examples:
        >>> from datetime import date
        >>> count_months(date(2024, 1, 15), date(2024, 3, 5))
        3
        >>> count_months(date(2023, 12, 31), date(2024, 1, 1))
        2
        >>> count_months(date(2024, 3, 5), date(2024, 1, 15))
        Traceback (most recent call last):
        ...
        ValueError: end must not be before start, got start=datetime.date(2024, 3, 5), ...
    """
    if type(start) is date and type(end) is date:
        s, e = start, end
    else:
        s, e = _pair(start, end)
    if e < s:
        msg = f"end must not be before start, got start={start!r}, end={end!r}"
        raise ValueError(msg)
    return (e.year - s.year) * _MONTHS + (e.month - s.month) + 1


def months_between(start: date, end: date) -> int:
    """Return the whole months elapsed from *start* to *end* (negative if *end* is earlier).

    Exactly ``relativedelta(end, start).years * 12 + .months``: a month has elapsed
    when *start* moved by `add_months` has not passed *end*, so
    ``months_between(d, add_months(d, n)) == n`` for every *d* and *n*. Time of day
    counts. O(1).

    Raises:
        TypeError: If either is not a date value, or naive and aware values are mixed.
        ValueError: If either is ``pandas.NaT``.

    Examples:
        >>> from datetime import date, datetime
        >>> months_between(date(2024, 1, 31), date(2024, 2, 29))
        1
        >>> months_between(date(2024, 2, 29), date(2025, 2, 28))
        12
        >>> months_between(datetime(2024, 1, 31, 10), datetime(2024, 2, 29, 9))
        0
        >>> months_between(date(2024, 3, 1), date(2024, 1, 31))
        -1
    """
    if type(start) is date and type(end) is date:
        s, e = start, end
    else:
        s, e = _pair(start, end)
    months = (e.year - s.year) * _MONTHS + (e.month - s.month)
    # start + months lands in end's month, on day min(start.day, last day), start's time.
    day = min(s.day, _dim(e.year, e.month))
    if e >= s:
        if day > e.day or (day == e.day and _time_of(s) > _time_of(e)):
            months -= 1
    elif day < e.day or (day == e.day and _time_of(s) < _time_of(e)):
        months += 1
    return months


def add_months(d: D, n: int) -> D:
    """Return *d* moved by *n* months, clamped to the target month's last day.

    Keeps the type of *d* and its time, tzinfo and fold (Rails ``date >> n``;
    ``d + relativedelta(months=n)``). Not associative: adding 1 month twice to
    Jan 31 gives Mar 29, adding 2 months gives Mar 31, so step from a fixed anchor
    (``add_months(anchor, k)`` for k = 1, 2, ...) rather than chaining.

    Raises:
        TypeError: If *d* is not a date value, or *n* is not an int (bool and float,
            even ``1.0``, are refused).
        OverflowError: If the result is outside years 1..9999.

    Examples:
        >>> from datetime import date
        >>> add_months(date(2024, 1, 31), 1)
        datetime.date(2024, 2, 29)
        >>> add_months(date(2024, 3, 31), -1)
        datetime.date(2024, 2, 29)
        >>> add_months(date(2024, 1, 31), 1.0)
        Traceback (most recent call last):
        ...
        TypeError: n must be an int, got float 1.0
    """
    _check_date("d", d)
    n = _check_int("n", n)
    total = d.year * _MONTHS + (d.month - 1) + n
    year, month0 = divmod(total, _MONTHS)
    if not MINYEAR <= year <= MAXYEAR:
        msg = f"add_months({d!r}, {n}) is outside years 1..9999 (year {year})"
        raise OverflowError(msg)
    month = month0 + 1
    return d.replace(year=year, month=month, day=min(d.day, _dim(year, month)))


def iter_months(start: date, end: date) -> Iterator[date]:
    """Yield ``date(y, m, 1)`` for each calendar month the range [start, end] touches.

    Lazy, never skips a month (``rrule(MONTHLY)`` from the 31st does), and validates
    at call time, so bad input fails where the call is, not at the first ``next``.
    ``len(list(iter_months(s, e))) == count_months(s, e)``.

    Raises:
        TypeError, ValueError: As `count_months`.

    Examples:
        >>> from datetime import date
        >>> [d.isoformat() for d in iter_months(date(2024, 1, 31), date(2024, 4, 1))]
        ['2024-01-01', '2024-02-01', '2024-03-01', '2024-04-01']
    """
    count = count_months(start, end)
    s, _ = _pair(start, end)
    return _months_from(s.year, s.month, count)


def _months_from(year: int, month: int, count: int) -> Iterator[date]:
    for _ in range(count):
        yield date(year, month, 1)
        month += 1
        if month > _MONTHS:
            year, month = year + 1, 1


def days_in_month(year: int, month: int) -> int:
    """Return the number of days in *month* of *year* (proleptic Gregorian).

    Raises:
        TypeError: If either is not an int.
        ValueError: If *year* is outside 1..9999 or *month* outside 1..12.

    Examples:
        >>> days_in_month(2024, 2), days_in_month(2100, 2), days_in_month(2000, 2)
        (29, 28, 29)
    """
    year = _check_int("year", year)
    month = _check_int("month", month)
    if not MINYEAR <= year <= MAXYEAR:
        msg = f"year must be in 1..9999, got {year}"
        raise ValueError(msg)
    if not 1 <= month <= _MONTHS:
        msg = f"month must be in 1..12, got {month}"
        raise ValueError(msg)
    return _dim(year, month)


def month_start(d: D) -> D:
    """Return the first moment of *d*'s month: day 1 (a datetime: at 00:00, fold 0).

    Keeps the type and tzinfo of *d*.

    Examples:
        >>> from datetime import date, datetime
        >>> month_start(date(2024, 2, 17))
        datetime.date(2024, 2, 1)
        >>> month_start(datetime(2024, 2, 17, 13, 30))
        datetime.datetime(2024, 2, 1, 0, 0)
    """
    _check_date("d", d)
    if isinstance(d, datetime):
        return d.replace(day=1, hour=0, minute=0, second=0, microsecond=0, fold=0)
    return d.replace(day=1)


def month_end(d: D) -> D:
    """Return the last moment of *d*'s month.

    A date gives the last day. A datetime gives the last representable moment of
    that day, 23:59:59.999999, so ``month_start(d) <= d <= month_end(d)`` always
    holds (Rails ``end_of_month`` does the same). For a half-open range use
    ``add_months(month_start(d), 1)`` as the exclusive end instead.

    Examples:
        >>> from datetime import date, datetime
        >>> month_end(date(2024, 2, 17))
        datetime.date(2024, 2, 29)
        >>> month_end(datetime(2023, 2, 17, 13, 30))
        datetime.datetime(2023, 2, 28, 23, 59, 59, 999999)
    """
    _check_date("d", d)
    last = _dim(d.year, d.month)
    if isinstance(d, datetime):
        return d.replace(day=last, hour=23, minute=59, second=59, microsecond=999999, fold=0)
    return d.replace(day=last)
