"""Month arithmetic that is exact on every edge case, in O(1).

"Months between two dates" means different things; each meaning has its own name here:

* `count_months`: how many calendar months a closed range touches (Jan 15 .. Mar 5 -> 3);
* `months_between`: whole months elapsed: ``relativedelta(end, start)``'s months;
* `add_months`: the same day n months later, clamped to the month's last day.

A date value is any `datetime.date` instance (so `datetime.datetime`,
``pandas.Timestamp`` and pendulum objects work); nothing is parsed from strings.
Every function also takes whole columns (numpy ``datetime64`` arrays, pandas Series and
DatetimeIndex, polars Series) and answers row by row, vectorized: see
`devutils.datecolumns` for what they hold and give back.
A plain date next to a naive datetime counts as midnight. Aware datetimes are ordered
by their instants (a repeated DST hour's ``fold`` respected) and counted on the start's
own wall clock: the end as ``end.astimezone(start.tzinfo)`` shows it, also where that
falls past year 9999 or before year 1. ``pandas.Timestamp`` values count to the
nanosecond.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from datetime import MAXYEAR, MINYEAR, date, datetime, time, timedelta
from types import ModuleType
from typing import Any, TypeAlias, TypeVar, overload

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the constant is all that is needed
if TYPE_CHECKING:
    import numpy
    import pandas
    import polars

    Column: TypeAlias = numpy.ndarray[Any, Any] | pandas.Series | pandas.Index | polars.Series

__all__ = [
    "DateRangeError",
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


class DateRangeError(ValueError, OverflowError):
    """A result outside years 1..9999: a ValueError, and an OverflowError as Python's own
    date arithmetic raises."""


def _is_aware(value: date) -> bool:
    return isinstance(value, datetime) and value.utcoffset() is not None


_NS = 1000  # nanoseconds in a microsecond

Wall = tuple[int, int, int, int]
"""A wall-clock reading: year, month, day, nanoseconds since midnight."""


def _naive(value: date) -> datetime:
    """*value*'s wall clock as a plain naive datetime (microseconds; a date at midnight)."""
    if not isinstance(value, datetime):
        return datetime.combine(value, _MIDNIGHT)
    return datetime(*value.timetuple()[:6], value.microsecond)


def _wall(value: date, nanosecond: int | None = None) -> Wall:
    if not isinstance(value, datetime):
        return (value.year, value.month, value.day, 0)
    extra = getattr(value, "nanosecond", 0) if nanosecond is None else nanosecond
    microseconds = ((value.hour * 60 + value.minute) * 60 + value.second) * 10**6
    return (value.year, value.month, value.day, (microseconds + value.microsecond) * _NS + extra)


def _shifted(value: datetime, shift: timedelta) -> Wall:
    """*value*'s wall clock moved by *shift* (under two days), past year 9999 or before
    year 1 too, where a datetime cannot go."""
    nanosecond = getattr(value, "nanosecond", 0)
    naive = _naive(value)
    try:
        return _wall(naive + shift, nanosecond)
    except OverflowError:
        if shift > timedelta(0):  # into January of year 10000
            over = naive - datetime(MAXYEAR, 12, 31) + shift - timedelta(days=1)
            year, month, day = MAXYEAR + 1, 1, 1 + over.days
        else:  # into December of year 0
            over = naive - datetime(MINYEAR, 1, 1) + shift
            year, month, day = MINYEAR - 1, _MONTHS, 32 + over.days
        inside = (over - timedelta(days=over.days)) // timedelta(microseconds=1)
        return (year, month, day, inside * _NS + nanosecond)


def _instant_order(s: datetime, e: datetime) -> int:
    """-1, 0 or 1 as the instant of *e* is before, at or after that of *s* (their
    ``fold`` respected, which Python ignores when it compares datetimes of one zone)."""
    s_offset, e_offset = s.utcoffset(), e.utcoffset()
    assert s_offset is not None
    assert e_offset is not None
    gap = (_naive(e) - _naive(s)) - (e_offset - s_offset)  # a timedelta: nothing overflows
    nanoseconds = gap // timedelta(microseconds=1) * _NS + (
        getattr(e, "nanosecond", 0) - getattr(s, "nanosecond", 0)
    )
    return (nanoseconds > 0) - (nanoseconds < 0)


def _in_zone_of(e: datetime, s: datetime) -> Wall:
    """*e*'s wall clock in *s*'s zone, as ``e.astimezone(s.tzinfo)`` shows it."""
    try:
        return _wall(e.astimezone(s.tzinfo))
    except (OverflowError, ValueError):  # past a limit (pandas': OutOfBoundsDatetime)
        tzinfo = s.tzinfo
        assert tzinfo is not None
        near = datetime(MAXYEAR, 12, 31) if e.year > MINYEAR + 1 else datetime(MINYEAR, 1, 2)
        offset = tzinfo.utcoffset(near.replace(tzinfo=tzinfo)) or timedelta(0)
        e_offset = e.utcoffset()
        assert e_offset is not None
        return _shifted(e, offset - e_offset)


def _pair(start: object, end: object) -> tuple[Wall, Wall, int]:
    """Both values' wall clocks (the end's in the start's zone when aware), and the order
    of the end against the start: -1 earlier, 0 the same, 1 later."""
    s = _check_date("start", start)
    e = _check_date("end", end)
    s_aware = _is_aware(s)
    e_aware = _is_aware(e)
    if s_aware != e_aware:
        kinds = [
            "an aware datetime"
            if a
            else ("a naive datetime" if isinstance(v, datetime) else "a date")
            for a, v in ((s_aware, s), (e_aware, e))
        ]
        msg = f"cannot mix {kinds[0]} and {kinds[1]}: start={start!r}, end={end!r}"
        raise TypeError(msg)
    if s_aware:
        assert isinstance(s, datetime)
        assert isinstance(e, datetime)
        return _wall(s), _in_zone_of(e, s), _instant_order(s, e)
    s_wall, e_wall = _wall(s), _wall(e)
    return s_wall, e_wall, (e_wall > s_wall) - (e_wall < s_wall)


def _plain(start: object, end: object) -> bool:
    """Whether *start* and *end* are two plain dates or two naive plain datetimes: then
    Python's own comparison is their order (the fast paths)."""
    kind = type(start)
    if kind is not type(end):
        return False
    return kind is date or (kind is datetime and start.tzinfo is end.tzinfo is None)  # type: ignore[attr-defined]


def _columns(*values: object) -> ModuleType | None:
    """`devutils.datecolumns` if one of *values* is a column (imported only then)."""
    from devutils import datecolumns

    return datecolumns if any(map(datecolumns.is_column, values)) else None


def _check_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        msg = f"{name} must be an int, got {type(value).__name__} {value!r}"
        raise TypeError(msg)
    return operator.index(value)


@overload
def count_months(start: date, end: date) -> int: ...
@overload
def count_months(start: Column | date, end: Column | date) -> Any: ...
def count_months(start: Any, end: Any) -> Any:
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
    if _plain(start, end):
        if end < start:
            msg = f"end must not be before start, got start={start!r}, end={end!r}"
            raise ValueError(msg)
        return (end.year - start.year) * _MONTHS + (end.month - start.month) + 1
    if not (isinstance(start, date) and isinstance(end, date)) and (cols := _columns(start, end)):
        return cols.count_months(start, end)
    s, e, order = _pair(start, end)
    if order < 0:
        msg = f"end must not be before start, got start={start!r}, end={end!r}"
        raise ValueError(msg)
    # Where a DST shift at midnight sets the wall clock back across the start of a month,
    # the range still touches both months.
    return abs((e[0] - s[0]) * _MONTHS + (e[1] - s[1])) + 1


@overload
def months_between(start: date, end: date) -> int: ...
@overload
def months_between(start: Column | date, end: Column | date) -> Any: ...
def months_between(start: Any, end: Any) -> Any:
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
    if _plain(start, end):  # the same arithmetic as below, on the values themselves
        months = (end.year - start.year) * _MONTHS + (end.month - start.month)
        day = min(start.day, _dim(end.year, end.month))
        at = start.time() if type(start) is datetime else _MIDNIGHT
        until = end.time() if type(end) is datetime else _MIDNIGHT
        if end >= start:
            return months - ((day, at) > (end.day, until))
        return months + ((day, at) < (end.day, until))
    if not (isinstance(start, date) and isinstance(end, date)) and (cols := _columns(start, end)):
        return cols.months_between(start, end)
    s, e, order = _pair(start, end)
    if (order >= 0) != (e >= s):  # a DST shift set the wall clock back: under two hours
        return 0
    months = (e[0] - s[0]) * _MONTHS + (e[1] - s[1])
    # start + months lands in end's month, on day min(start.day, last day), start's time.
    day = min(s[2], _dim(e[0], e[1]))
    if order >= 0:
        if (day, s[3]) > (e[2], e[3]):
            months -= 1
    elif (day, s[3]) < (e[2], e[3]):
        months += 1
    return months


@overload
def add_months(d: D, n: int) -> D: ...
@overload
def add_months(d: Column | date, n: Column | int) -> Any: ...
def add_months(d: Any, n: Any) -> Any:
    """Return *d* moved by *n* months, clamped to the target month's last day.

    Keeps the type of *d* and its time, tzinfo and fold (Rails ``date >> n``;
    ``d + relativedelta(months=n)``). Not associative: adding 1 month twice to
    Jan 31 gives Mar 29, adding 2 months gives Mar 31, so step from a fixed anchor
    (``add_months(anchor, k)`` for k = 1, 2, ...) rather than chaining.

    Raises:
        TypeError: If *d* is not a date value, or *n* is not an int (bool and float,
            even ``1.0``, are refused).
        DateRangeError: If the result is outside years 1..9999 (a ValueError and an
            OverflowError).

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
    if (not isinstance(d, date) or hasattr(n, "__len__")) and (cols := _columns(d, n)):
        try:
            return cols.add_months(d, n)
        except OverflowError as exc:
            raise DateRangeError(str(exc)) from None
    _check_date("d", d)
    n = _check_int("n", n)
    total = d.year * _MONTHS + (d.month - 1) + n
    year, month0 = divmod(total, _MONTHS)
    if not MINYEAR <= year <= MAXYEAR:
        msg = f"add_months({d!r}, {n}) is outside years 1..9999 (year {year})"
        raise DateRangeError(msg)
    month = month0 + 1
    return d.replace(year=year, month=month, day=min(d.day, _dim(year, month)))


def iter_months(start: date, end: date) -> Iterator[date]:
    """Yield ``date(y, m, 1)`` for each calendar month the range [start, end] touches.

    Lazy, never skips a month (``rrule(MONTHLY)`` from the 31st does), and validates
    at call time, so bad input fails where the call is, not at the first ``next``.
    ``len(list(iter_months(s, e))) == count_months(s, e)``.

    Raises:
        TypeError, ValueError: As `count_months`.
        DateRangeError: If a month it would yield lies outside years 1..9999 (the end,
            on the start's wall clock, in year 10000).

    Examples:
        >>> from datetime import date
        >>> [d.isoformat() for d in iter_months(date(2024, 1, 31), date(2024, 4, 1))]
        ['2024-01-01', '2024-02-01', '2024-03-01', '2024-04-01']
    """
    count = count_months(start, end)
    s, e, _ = _pair(start, end)
    first = min(s, e)  # e before s on the wall clock only where a DST shift set it back
    last = first[0] * _MONTHS + first[1] - 1 + count - 1
    if first[0] < MINYEAR or last // _MONTHS > MAXYEAR:
        msg = (
            f"iter_months({start!r}, {end!r}) reaches outside years 1..9999 on the "
            "start's wall clock"
        )
        raise DateRangeError(msg)
    return _months_from(first[0], first[1], count)


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


@overload
def month_start(d: D) -> D: ...
@overload
def month_start(d: Column) -> Any: ...
def month_start(d: Any) -> Any:
    """Return the first moment of *d*'s month: day 1 (a datetime: at 00:00, fold 0).

    Keeps the type and tzinfo of *d*.

    Examples:
        >>> from datetime import date, datetime
        >>> month_start(date(2024, 2, 17))
        datetime.date(2024, 2, 1)
        >>> month_start(datetime(2024, 2, 17, 13, 30))
        datetime.datetime(2024, 2, 1, 0, 0)
    """
    if not isinstance(d, date) and (cols := _columns(d)):
        return cols.month_start(d)
    _check_date("d", d)
    if isinstance(d, datetime):
        moved = d.replace(day=1, hour=0, minute=0, second=0, microsecond=0, fold=0)
        return moved.replace(nanosecond=0) if hasattr(d, "nanosecond") else moved  # type: ignore[call-arg]
    return d.replace(day=1)


@overload
def month_end(d: D) -> D: ...
@overload
def month_end(d: Column) -> Any: ...
def month_end(d: Any) -> Any:
    """Return the last moment of *d*'s month.

    A date gives the last day. A datetime gives the last representable moment of
    that day, 23:59:59.999999 (a ``pandas.Timestamp`` 23:59:59.999999999), so
    ``month_start(d) <= d <= month_end(d)`` always holds (Rails ``end_of_month`` does
    the same). For a half-open range use
    ``add_months(month_start(d), 1)`` as the exclusive end instead.

    Examples:
        >>> from datetime import date, datetime
        >>> month_end(date(2024, 2, 17))
        datetime.date(2024, 2, 29)
        >>> month_end(datetime(2023, 2, 17, 13, 30))
        datetime.datetime(2023, 2, 28, 23, 59, 59, 999999)
    """
    if not isinstance(d, date) and (cols := _columns(d)):
        return cols.month_end(d)
    _check_date("d", d)
    last = _dim(d.year, d.month)
    if isinstance(d, datetime):
        moved = d.replace(day=last, hour=23, minute=59, second=59, microsecond=999999, fold=0)
        return moved.replace(nanosecond=999) if hasattr(d, "nanosecond") else moved  # type: ignore[call-arg]
    return d.replace(day=last)
