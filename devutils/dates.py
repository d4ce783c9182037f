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
falls past year 9999 or before year 1; `months_between` decides each whole month by
instants too. ``pandas.Timestamp`` values count to the nanosecond. A tzinfo that fails
(raises, or answers ``utcoffset()`` wrongly or inconsistently) is a TypeError or
ValueError naming the argument.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Callable, Iterator
from datetime import MAXYEAR, MINYEAR, UTC, date, datetime, time, timedelta
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, TypeAlias, TypeVar, overload

from devutils.messages import describe, shown

if TYPE_CHECKING:
    import numpy
    import pandas
    import polars
    from pandas.api.typing import NaTType

    Column: TypeAlias = numpy.ndarray[Any, Any] | pandas.Series | pandas.Index | polars.Series
    Single: TypeAlias = date | numpy.datetime64 | NaTType
    """A single value beside a column, used for each of its rows."""

__all__ = [
    "DateOrderError",
    "DateRangeError",
    "MixedDatesError",
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


def _days_in_month(year: int, month: int) -> int:
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
    date arithmetic raises. ``function`` names the function that could not give it, and
    ``arguments`` holds what it was given.

    Examples:
        >>> add_months(date(9999, 12, 1), 1)
        Traceback (most recent call last):
        ...
        devutils.dates.DateRangeError: add_months(...) is outside years 1..9999 (year 10000)
        >>> try:
        ...     add_months(date(9999, 12, 1), 1)
        ... except DateRangeError as error:
        ...     print(error.function, error.arguments)
        add_months (datetime.date(9999, 12, 1), 1)
        >>> issubclass(DateRangeError, ValueError), issubclass(DateRangeError, OverflowError)
        (True, True)
    """

    def __init__(self, message: str, function: str, arguments: tuple[object, ...]) -> None:
        super().__init__(message)
        self.function = function
        self.arguments = arguments

    def __reduce__(self) -> tuple[type[DateRangeError], tuple[str, str, tuple[object, ...]]]:
        return type(self), (str(self), self.function, self.arguments)


class DateOrderError(ValueError):
    """*end* is before *start* where a closed range needs it not to be; ``start`` and
    ``end`` are the values given.

    Examples:
        >>> try:
        ...     count_months(date(2024, 3, 5), date(2024, 1, 15))
        ... except DateOrderError as error:
        ...     print(error.start, error.end)
        2024-03-05 2024-01-15
    """

    def __init__(self, start: object, end: object) -> None:
        super().__init__(f"end must not be before start, got start={start!r}, end={end!r}")
        self.start = start
        self.end = end

    def __reduce__(self) -> tuple[type[DateOrderError], tuple[object, object]]:
        return type(self), (self.start, self.end)  # (across processes too)


class MixedDatesError(TypeError):
    """*start* and *end* cannot be compared: an aware datetime beside a naive one or a
    date. ``kinds`` names what each is (``"an aware datetime"``, ``"a naive datetime"``,
    ``"a date"``).

    Examples:
        >>> from datetime import timezone
        >>> try:
        ...     count_months(date(2024, 1, 1), datetime(2024, 2, 1, tzinfo=timezone.utc))
        ... except MixedDatesError as error:
        ...     print(error.kinds)
        ('a date', 'an aware datetime')
    """

    def __init__(self, start: object, end: object, kinds: tuple[str, str]) -> None:
        super().__init__(f"cannot mix {kinds[0]} and {kinds[1]}: start={start!r}, end={end!r}")
        self.start = start
        self.end = end
        self.kinds = kinds

    def __reduce__(self) -> tuple[type[MixedDatesError], tuple[object, object, tuple[str, str]]]:
        return type(self), (self.start, self.end, self.kinds)


_NS = 1000  # nanoseconds in a microsecond
_DAY_NS = 86_400 * 10**9
_MICROSECOND = timedelta(microseconds=1)
_DAYS_BEFORE = (0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)
"""Days before each month (1-based) in a common year."""


class Wall(NamedTuple):
    """A wall-clock reading: its date, and the nanoseconds since its midnight. Compares
    as a tuple, so in time order."""

    year: int
    month: int
    day: int
    since_midnight: int


def _naive(value: date) -> datetime:
    """*value*'s wall clock as a plain naive datetime (microseconds; a date at midnight)."""
    if not isinstance(value, datetime):
        return datetime.combine(value, _MIDNIGHT)
    # (its fields, not timetuple(): that asks the tzinfo for dst(), which it may lack)
    fields = (value.year, value.month, value.day, value.hour, value.minute, value.second)
    return datetime(*fields, value.microsecond)


def _wall(value: date, nanosecond: int | None = None) -> Wall:
    if not isinstance(value, datetime):
        return Wall(value.year, value.month, value.day, 0)
    extra = getattr(value, "nanosecond", 0) if nanosecond is None else nanosecond
    microseconds = ((value.hour * 60 + value.minute) * 60 + value.second) * 10**6
    return Wall(
        value.year, value.month, value.day, (microseconds + value.microsecond) * _NS + extra
    )


def _instant(wall: Wall, offset: timedelta) -> int:
    """*wall* read at UTC *offset*, as nanoseconds since 0001-01-01T00:00Z; any year,
    0 and 10000 too, where a datetime cannot go."""
    year, month = wall.year, wall.month
    before = year - 1
    days = before * 365 + before // 4 - before // 100 + before // 400 + _DAYS_BEFORE[month]
    days += (month > _FEBRUARY and _is_leap(year)) + wall.day - 1
    return days * _DAY_NS + wall.since_midnight - offset // _MICROSECOND * _NS


def _zone_failed(name: str, zone: object, problem: str, exc: Exception | None = None) -> NoReturn:
    """Raise a TypeError (the tzinfo answered with a wrong type) or a ValueError (it failed
    in any other way) that names the argument whose tzinfo it is."""
    detail = f": {exc}" if exc is not None else ""
    msg = f"{name}'s tzinfo {zone!r} {problem}{detail}"
    if isinstance(exc, TypeError):
        raise TypeError(msg) from exc
    raise ValueError(msg) from exc


def _utcoffset(name: str, value: date) -> timedelta | None:
    """*value*'s UTC offset; None for a date, a naive datetime or a tzinfo that says so.
    A tzinfo that raises, or answers what Python refuses (not a timedelta, 24 h or more),
    is an error naming *name*."""
    if not isinstance(value, datetime) or value.tzinfo is None:
        return None
    try:
        return value.utcoffset()
    except Exception as exc:  # whatever the tzinfo raised, the caller sees the argument
        _zone_failed(name, value.tzinfo, f"gave no UTC offset for {value!r}", exc)


def _start_offset(start: datetime, probe: datetime) -> timedelta:
    """The UTC offset of *probe*, a datetime in the start's zone. The start is aware, so a
    tzinfo that answers None here answers inconsistently."""
    offset = _utcoffset("start", probe)
    if offset is None:
        problem = f"gave no UTC offset for {probe!r}, though start is aware"
        _zone_failed("start", start.tzinfo, problem)
    return offset


def _edge_offset(start: datetime, year: int) -> timedelta:
    """The start zone's UTC offset at the end of the calendar nearest *year*: it stands
    in for the offset of a wall clock past year 9999 or before year 1."""
    edge = datetime(MAXYEAR, 12, 31) if year > MINYEAR + 1 else datetime(MINYEAR, 1, 2)
    return _start_offset(start, edge.replace(tzinfo=start.tzinfo, fold=start.fold))


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
        inside = (over - timedelta(days=over.days)) // _MICROSECOND
        return Wall(year, month, day, inside * _NS + nanosecond)


def _in_zone_of(e: datetime, e_offset: timedelta, s: datetime) -> Wall:
    """*e*'s wall clock in *s*'s zone, as ``e.astimezone(s.tzinfo)`` shows it, also where
    that falls past year 9999 or before year 1. *e_offset* is e's UTC offset, read once."""
    naive = _naive(e)
    try:
        shown: object = (naive - e_offset).replace(tzinfo=UTC).astimezone(s.tzinfo)
    except OverflowError as exc:  # within a day of either end of the calendar
        if MINYEAR < naive.year < MAXYEAR:
            _zone_failed("start", s.tzinfo, f"could not show {e!r}", exc)
        return _shifted(e, _edge_offset(s, naive.year) - e_offset)
    except NotImplementedError as exc:  # a tzinfo without dst(), which fromutc asks
        if e.tzinfo is s.tzinfo:  # one zone: e's own wall clock (as e.astimezone gives)
            return _wall(e, getattr(e, "nanosecond", 0))
        _zone_failed("start", s.tzinfo, f"could not show {e!r}", exc)
    except Exception as exc:  # the start's tzinfo failed to convert from UTC
        _zone_failed("start", s.tzinfo, f"could not show {e!r}", exc)
    if not isinstance(shown, datetime):
        problem = f"showed {e!r} as {type(shown).__name__} {shown!r}, not a datetime"
        _zone_failed("start", s.tzinfo, problem, TypeError())
    return _wall(shown, getattr(e, "nanosecond", 0))


class _Pair(NamedTuple):
    """A start and an end read once for counting: their wall clocks (the end's on the
    start's wall clock where aware), the order of the end against the start (-1 before,
    0 at, 1 after; by instants where aware), and where aware the end's instant (ns since
    0001-01-01T00:00Z; None where naive: the wall clocks are the instants)."""

    start: Wall
    end: Wall
    order: int
    end_at: int | None


def _validated_pair(start: object, end: object) -> _Pair:
    s = _check_date("start", start)
    e = _check_date("end", end)
    s_offset, e_offset = _utcoffset("start", s), _utcoffset("end", e)
    if (s_offset is None) != (e_offset is None):
        first, second = (
            "an aware datetime"
            if offset is not None
            else ("a naive datetime" if isinstance(v, datetime) else "a date")
            for offset, v in ((s_offset, s), (e_offset, e))
        )
        raise MixedDatesError(start, end, (first, second))
    s_wall, e_wall = _wall(s), _wall(e)
    if (
        not isinstance(s, datetime)
        or not isinstance(e, datetime)
        or s_offset is None
        or e_offset is None
    ):  # both naive, as checked above
        return _Pair(s_wall, e_wall, (e_wall > s_wall) - (e_wall < s_wall), None)
    s_at, e_at = _instant(s_wall, s_offset), _instant(e_wall, e_offset)
    return _Pair(s_wall, _in_zone_of(e, e_offset, s), (e_at > s_at) - (e_at < s_at), e_at)


def _touched(start: object, end: object, pair: _Pair) -> int:
    """How many calendar months the range of *pair* touches on the start's wall clock."""
    if pair.order < 0:
        raise DateOrderError(start, end)
    # Where a DST shift at midnight sets the wall clock back across the start of a month,
    # the range still touches both months.
    months = (pair.end.year - pair.start.year) * _MONTHS + (pair.end.month - pair.start.month)
    return abs(months) + 1


def _wall_months(s: Wall, e: Wall) -> int:
    """The whole months from wall clock *s* to *e*, for naive values (the wall clocks are
    the instants): *s* moved by the months between them lands in e's month, on day
    min(s.day, last day), at s's time; one fewer if that is past *e*."""
    months = (e.year - s.year) * _MONTHS + (e.month - s.month)
    moved = (min(s.day, _days_in_month(e.year, e.month)), s.since_midnight)
    if e >= s:
        return months - (moved > (e.day, e.since_midnight))
    return months + (moved < (e.day, e.since_midnight))


def _moved_at(start: datetime, wall: Wall, months: int) -> int:
    """The instant of ``add_months(start, months)`` (*wall*: the start's wall clock): the
    moved wall clock read in the start's zone with its fold, also past year 9999 or
    before year 1, where a datetime cannot go."""
    year, month0 = divmod(wall.year * _MONTHS + wall.month - 1 + months, _MONTHS)
    month = month0 + 1
    moved = Wall(year, month, min(wall.day, _days_in_month(year, month)), wall.since_midnight)
    if not MINYEAR <= year <= MAXYEAR:
        return _instant(moved, _edge_offset(start, year))
    clock = (start.hour, start.minute, start.second, start.microsecond)
    probe = datetime(year, month, moved.day, *clock, start.tzinfo, fold=start.fold)
    return _instant(moved, _start_offset(start, probe))


def _elapsed(start: datetime, pair: _Pair, end_at: int) -> int:
    """The whole months from aware *start* to the end (instant *end_at*) of *pair*: n >= 0
    months have elapsed when ``add_months(start, n)`` is not after the end and
    ``add_months(start, n + 1)`` is; for an end before the start n <= 0, with "before"
    for "after". relativedelta's loop, run both ways from the wall clocks' months."""
    step = 1 if pair.order >= 0 else -1
    months = (pair.end.year - pair.start.year) * _MONTHS + (pair.end.month - pair.start.month)
    if months * step < 0:  # a DST shift set the wall clock back across a month's start
        months = 0

    def passed(k: int) -> bool:  # add_months(start, k) lies beyond the end, going by step
        return (_moved_at(start, pair.start, k) - end_at) * step > 0

    while months != 0 and passed(months):
        months -= step
    while not passed(months + step):
        months += step
    return months


def _both_plain(start: object, end: object) -> bool:
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
    if not isinstance(value, bool) and hasattr(value, "__index__"):
        with contextlib.suppress(TypeError):  # (a 0-d array of floats has __index__, and refuses)
            return operator.index(value)
    msg = f"{name} must be an int, got {describe(value)}"
    raise TypeError(msg)


@overload
def count_months(start: date, end: date) -> int: ...
@overload
def count_months(start: Column | Single, end: Column | Single) -> Any: ...
def count_months(start: Any, end: Any) -> Any:
    """Return how many calendar months contain a day of the closed range [start, end].

    O(1): ``(end.year - start.year) * 12 + (end.month - start.month) + 1``.

    Args:
        start: The first day (a `date` or `datetime`).
        end: The last day; not before *start* (time of day included).

    Raises:
        TypeError: If either is not a date value, or naive and aware values are mixed,
            or a tzinfo answers with a wrong type.
        ValueError: If *end* is before *start*, or either is ``pandas.NaT``, or a
            tzinfo fails.

    Examples:
        >>> from datetime import date
        >>> count_months(date(2024, 1, 15), date(2024, 3, 5))
        3
        >>> count_months(date(2023, 12, 31), date(2024, 1, 1))
        2
        >>> count_months(date(2024, 3, 5), date(2024, 1, 15))
        Traceback (most recent call last):
        ...
        devutils.dates.DateOrderError: end must not be before start, got start=...)
    """
    if _both_plain(start, end):
        if end < start:
            raise DateOrderError(start, end)
        return (end.year - start.year) * _MONTHS + (end.month - start.month) + 1
    if not (isinstance(start, date) and isinstance(end, date)) and (cols := _columns(start, end)):
        return _by_rows(cols.count_months, start, end)
    return _touched(start, end, _validated_pair(start, end))


@overload
def months_between(start: date, end: date) -> int: ...
@overload
def months_between(start: Column | Single, end: Column | Single) -> Any: ...
def months_between(start: Any, end: Any) -> Any:
    """Return the whole months elapsed from *start* to *end* (negative if *end* is earlier).

    A month has elapsed when *start* moved by `add_months` has not passed *end*, so
    ``months_between(d, add_months(d, n)) == n`` for every *d* and *n*. Time of day
    counts. O(1). For dates and naive datetimes that is exactly
    ``relativedelta(end, start).years * 12 + .months``. Aware values are moved on the
    start's wall clock (its zone and ``fold`` kept) and compared by instants, wherever
    *end* was written: ``relativedelta(end.astimezone(start.tzinfo), start)`` with its
    comparisons made on instants (docs/dates.md lists where dateutil differs).

    Raises:
        TypeError: If either is not a date value, or naive and aware values are mixed,
            or a tzinfo answers with a wrong type.
        ValueError: If either is ``pandas.NaT``, or a tzinfo fails.

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
        >>> from datetime import timezone
        >>> from zoneinfo import ZoneInfo
        >>> start = datetime(2024, 10, 3, 1, 30, tzinfo=ZoneInfo("America/New_York"))
        >>> months_between(start, datetime(2024, 11, 3, 6, 10, tzinfo=timezone.utc))
        1
    """
    if _both_plain(start, end):  # the same arithmetic as below, on the values themselves
        months = (end.year - start.year) * _MONTHS + (end.month - start.month)
        day = min(start.day, _days_in_month(end.year, end.month))
        at = start.time() if type(start) is datetime else _MIDNIGHT
        until = end.time() if type(end) is datetime else _MIDNIGHT
        if end >= start:
            return months - ((day, at) > (end.day, until))
        return months + ((day, at) < (end.day, until))
    if not (isinstance(start, date) and isinstance(end, date)) and (cols := _columns(start, end)):
        return _by_rows(cols.months_between, start, end)
    pair = _validated_pair(start, end)
    if pair.end_at is None:
        return _wall_months(pair.start, pair.end)
    return _elapsed(start, pair, pair.end_at)


@overload
def add_months(d: D, n: int) -> D: ...
@overload
def add_months(d: Column | Single, n: Column | int) -> Any: ...
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
    steps = hasattr(n, "__len__") and getattr(n, "ndim", 1) != 0  # (a 0-d array: an int)
    if (not isinstance(d, date) or steps) and (cols := _columns(d, n) if steps else _columns(d)):
        return _by_rows(cols.add_months, d, n)
    _check_date("d", d)
    n = _check_int("n", n)
    total = d.year * _MONTHS + (d.month - 1) + n
    year, month0 = divmod(total, _MONTHS)
    if not MINYEAR <= year <= MAXYEAR:
        msg = f"add_months({d!r}, {shown(n)}) is outside years 1..9999 (year {shown(year)})"
        raise DateRangeError(msg, "add_months", (d, n))
    month = month0 + 1
    try:
        return _replace(d, year=year, month=month, day=min(d.day, _days_in_month(year, month)))
    except ValueError as exc:  # a narrower type's range: a nanosecond Timestamp's, 1677..2262
        msg = f"add_months({d!r}, {shown(n)}) is outside what {type(d).__name__} holds: {exc}"
        raise DateRangeError(msg, "add_months", (d, n)) from None


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
    pair = _validated_pair(start, end)
    count = _touched(start, end, pair)
    first = min(pair.start, pair.end)  # the end first only where a DST shift set it back
    last = first.year * _MONTHS + first.month - 1 + count - 1
    if first.year < MINYEAR or last // _MONTHS > MAXYEAR:
        msg = (
            f"iter_months({start!r}, {end!r}) reaches outside years 1..9999 on the "
            "start's wall clock"
        )
        raise DateRangeError(msg, "iter_months", (start, end))
    return _months_from(first.year, first.month, count)


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
        msg = f"year must be in 1..9999, got {shown(year)}"
        raise ValueError(msg)
    if not 1 <= month <= _MONTHS:
        msg = f"month must be in 1..12, got {shown(month)}"
        raise ValueError(msg)
    return _days_in_month(year, month)


@overload
def month_start(d: D) -> D: ...
@overload
def month_start(d: Column) -> Any: ...
def month_start(d: Any) -> Any:
    """Return the first moment of *d*'s month: day 1 (a datetime: at 00:00, fold 0).

    Keeps the type and tzinfo of *d*.

    Raises:
        TypeError: If *d* is not a date value.
        DateRangeError: If the month's start is before what *d*'s type holds (a
            nanosecond ``Timestamp``, or a ``datetime64[ns]`` column, in September 1677).

    Examples:
        >>> from datetime import date, datetime
        >>> month_start(date(2024, 2, 17))
        datetime.date(2024, 2, 1)
        >>> month_start(datetime(2024, 2, 17, 13, 30))
        datetime.datetime(2024, 2, 1, 0, 0)
    """
    if not isinstance(d, date) and (cols := _columns(d)):
        return _by_rows(cols.month_start, d)
    _check_date("d", d)
    if isinstance(d, datetime):
        return _on_day("month_start", d, 1, last=False)
    return _replace(d, day=1)


@overload
def month_end(d: D) -> D: ...
@overload
def month_end(d: Column) -> Any: ...
def month_end(d: Any) -> Any:
    """Return the last moment of *d*'s month.

    A date gives the last day. A datetime gives the last representable moment of
    that day, 23:59:59.999999 (a ``pandas.Timestamp`` the last in its own unit:
    23:59:59.999999999 in ns), so ``month_start(d) <= d <= month_end(d)`` always holds
    (Rails ``end_of_month`` does the same). For a half-open range use
    ``add_months(month_start(d), 1)`` as the exclusive end instead.

    Raises:
        TypeError: If *d* is not a date value.
        DateRangeError: If the month's end is past what *d*'s type holds (a nanosecond
            ``Timestamp``, or a ``datetime64[ns]`` column, in April 2262).

    Examples:
        >>> from datetime import date, datetime
        >>> month_end(date(2024, 2, 17))
        datetime.date(2024, 2, 29)
        >>> month_end(datetime(2023, 2, 17, 13, 30))
        datetime.datetime(2023, 2, 28, 23, 59, 59, 999999)
    """
    if not isinstance(d, date) and (cols := _columns(d)):
        return _by_rows(cols.month_end, d)
    _check_date("d", d)
    last = _days_in_month(d.year, d.month)
    if isinstance(d, datetime):
        return _on_day("month_end", d, last, last=True)
    return _replace(d, day=last)


_LAST_OF_SECOND = {"s": (0, 0), "ms": (999_000, 0), "us": (999_999, 0), "ns": (999_999, 999)}
"""The microsecond and nanosecond of a second's last moment, in each unit of a
``pandas.Timestamp``."""


def _replace(d: Any, **fields: int) -> Any:
    """``d.replace(**fields)`` by `datetime.replace`'s own rule: a wall clock a DST gap
    skips stays as given (pendulum's ``replace`` moves it an hour back, into another day
    at midnight). A ``pandas.Timestamp`` keeps its own, which keeps its nanoseconds; as
    a Timestamp holds only times that exist, a wall clock a gap skips comes back as a
    column has it: the same instant, on the wall clock after the gap."""
    if hasattr(d, "nanosecond"):
        moved = d.replace(**fields)
        return moved if moved.tzinfo is None else moved.tz_convert(moved.tzinfo)
    return (datetime if isinstance(d, datetime) else date).replace(d, **fields)


def _on_day(function: str, d: datetime, day: int, *, last: bool) -> Any:
    """*d* on *day* of its month at 00:00 (fold 0), or with *last* at the last moment of
    that day its type holds: 23:59:59.999999, a ``pandas.Timestamp`` in its own unit
    (23:59:59.999999999 in ns, as pandas before 2.0 holds every Timestamp)."""
    unit = getattr(d, "unit", "ns") if hasattr(d, "nanosecond") else None
    microsecond, nanosecond = _LAST_OF_SECOND[unit or "us"] if last else (0, 0)
    hour, minute, second = (23, 59, 59) if last else (0, 0, 0)
    try:
        moved: Any = _replace(
            d, day=day, hour=hour, minute=minute, second=second, microsecond=microsecond, fold=0
        )
        if unit is None:
            return moved
        if unit == "ns":
            moved = moved.replace(nanosecond=nanosecond)
        return moved.as_unit(unit)  # (replace may refine it)
    except ValueError as exc:  # a nanosecond Timestamp's range, 1677-09-21..2262-04-11
        msg = f"{function}({d!r}) is outside what {type(d).__name__} holds: {exc}"
        raise DateRangeError(msg, function, (d,)) from None


def _by_rows(function: Callable[..., Any], *args: Any) -> Any:
    """*function*, one of `devutils.datecolumns`', on *args*: its OverflowError (a result
    outside what a column holds) is a `DateRangeError`."""
    try:
        return function(*args)
    except OverflowError as exc:
        raise DateRangeError(str(exc), function.__name__, args) from None
