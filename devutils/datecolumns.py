"""Month arithmetic on whole columns: numpy ``datetime64`` arrays, pandas Series and
DatetimeIndex, polars Series. Vectorized: no Python-level loop per element.

Call `devutils.dates`' functions (``count_months(start_column, end_column)``, ...): they
hand columns to this module, which gives the same results as they give element by
element. numpy is imported only when a column arrives; pandas and polars never by this
module itself (their objects bring them).

* A column holds dates or datetimes: numpy ``datetime64`` in units D, h, m, s, ms, us or ns
  (naive); pandas naive or in one time zone; polars ``Date`` or ``Datetime`` (naive or in
  one zone, in its own unit: a zoned pair is compared in the finer of its two). A
  single value on one side (a date, datetime, ``Timestamp`` or numpy ``datetime64``,
  naive or aware as the column is) is used for every row of the other.
* Missing values (NaT, null) give missing results: NaT for dates, and for counts NaN
  (numpy, pandas: then the result is float64, as pandas' own ``Series.dt.month`` does)
  or null (polars, whose integers have nulls). A single NaT (``pandas.NaT``,
  ``numpy.datetime64("NaT")``) is missing in every row.
* A result has the type of the first column given: a numpy array, a pandas Series with
  the same index (a DatetimeIndex gives an Index), a polars Series; an aware single
  value moved by a numpy column of n gives an object array of ``Timestamp`` objects.
* Errors name the first offending position (0-based, whatever a pandas index says):
  a reversed pair and a value outside years 1..9999 are ValueErrors, a result outside
  them (or outside what ``datetime64[ns]`` holds, for a column in ns) an OverflowError
  (`devutils.dates` raises its ``DateRangeError``), other types (a DataFrame, a list, a
  str beside a column) and mixed naive and aware columns TypeErrors naming the argument;
  a time zone that fails is a ValueError (TypeError for a wrong type) naming the
  argument whose zone it is.
"""

from __future__ import annotations

import functools
import operator
from datetime import date, datetime, timedelta
from typing import Any, NoReturn

from devutils.messages import describe, shown

__all__ = [
    "add_months",
    "count_months",
    "is_column",
    "month_end",
    "month_start",
    "months_between",
]

_UNITS = ("D", "h", "m", "s", "ms", "us", "ns")
_FIRST_YEAR, _LAST_YEAR = 1, 9999
_EPOCH_YEAR = 1970
_MONTHS = 12
_CYCLE_DAYS = 146_097
"""Days in 400 Gregorian years, which hold 4800 months: the calendar repeats after it."""
_CYCLE_MONTHS = 4800
_NS_PER = {"D": 86_400 * 10**9, "h": 3_600 * 10**9, "m": 60 * 10**9, "s": 10**9}
_NS_PER |= {"ms": 10**6, "us": 10**3, "ns": 1}
_PER_DAY = {unit: _NS_PER["D"] // ns for unit, ns in _NS_PER.items()}
_DAY_ONE, _DAY_10000 = -719_162, 2_932_897
"""0001-01-01 and 10000-01-01 as days since 1970-01-01."""
_FIRST_MONTH = (_FIRST_YEAR - 1 - _EPOCH_YEAR) * _MONTHS
"""January of year 0 as months since 1970-01: the first month of `_calendar`'s starts."""
_INT64_LOW, _INT64_HIGH = -(2**63) + 1, 2**63 - 1
"""The values a datetime64 holds (units since the epoch), NaT aside: for datetime64[ns],
1677-09-21T00:12:43.145224193..2262-04-11T23:47:16.854775807."""
_NS_FIRST, _NS_LAST = divmod(_INT64_LOW, _NS_PER["D"]), divmod(_INT64_HIGH, _NS_PER["D"])
"""The first and last moment of datetime64[ns], as (days since 1970-01-01, ns since
midnight)."""
_NS_LIMITS = "1677-09-21T00:12:43.145224193..2262-04-11T23:47:16.854775807"


def is_column(value: object) -> bool:
    """Whether *value* is a numpy array, pandas Series or Index, or polars Series.

    Checks the type's module without importing any of them; for pandas, also the types
    it derives from (a ``RangeIndex`` is an ``Index``). A numpy array's subclass is none
    (a masked array's mask would be lost).

    Examples:
        >>> is_column([1, 2]), is_column("2024-01-01")
        (False, False)
    """
    kind = type(value)
    if kind.__module__.split(".")[0] in ("numpy", "polars"):
        return kind.__name__ in ("ndarray", "Series")
    return any(
        base.__module__.split(".")[0] == "pandas" and base.__name__ in ("Series", "Index")
        for base in kind.__mro__
    )


# -- columns in, columns out -------------------------------------------------------------


class _Column:
    """One input as numpy arrays: its wall clock (``datetime64``, NaT where missing), its
    instants (since the epoch, UTC, in the wall clock's unit; aware only), its zone, and
    how to give a result
    back in the input's own kind. A single value (a date, datetime, ``Timestamp``, numpy
    ``datetime64`` or NaT) stands *beside* a column, once for each of its rows, and gives
    results in that column's kind."""

    def __init__(self, name: str, value: Any, beside: Any = None) -> None:
        import numpy as np

        self.name = name
        self.kind = _kind(value)
        self.tz: Any = None
        self.instants: Any = None
        self.fold: Any = None  # a single aware value's own fold (a column's instants tell)
        self.single = False
        self.blank = False  # a single NaT: missing in every row, beside naive or aware
        self.original: Any = value
        if is_column(value):
            if self.kind.startswith("pandas"):
                self._from_pandas(value)
            elif self.kind == "polars":
                self._from_polars(value)
            else:
                self.wall = np.asarray(value)
        elif beside is not None and isinstance(value, date | np.datetime64):
            self.single = True
            self.kind, self.original = _kind(beside), beside
            self._from_single(value, len(beside))
        else:
            msg = f"{name} must be a date, a datetime or a column of them, got "
            raise TypeError(msg + f"{type(value).__name__} {value!r:.80}")
        self._check_dtype()

    def _from_pandas(self, value: Any) -> None:
        import pandas as pd

        index = pd.DatetimeIndex(value) if _is_datetime_pandas(value) else None
        if index is None:
            msg = f"{self.name} must hold datetimes, got a pandas column of {value.dtype}"
            raise TypeError(msg)
        if index.tz is not None:
            self.tz = index.tz
            self.instants = index.asi8  # (in the index's own unit)
            try:
                index = index.tz_localize(None)
            except pd.errors.OutOfBoundsDatetime:  # its wall clock past what the unit holds
                msg = f"{self.name} is outside what {index.dtype} holds on its wall clock"
                raise ValueError(msg) from None
        self.wall = index.to_numpy()

    def _from_polars(self, value: Any) -> None:
        import polars as pl

        dtype = value.dtype
        if dtype == pl.Date:
            self.wall = value.to_numpy()
            return
        if not isinstance(dtype, pl.Datetime):
            msg = f"{self.name} must hold dates or datetimes, got a polars column of {dtype}"
            raise TypeError(msg)
        if dtype.time_zone is None:
            self.wall = value.to_numpy()
            return
        # The wall clock from the instants by the zone rules every other step here uses
        # (polars' own differ: no DST after 2099, some zones' history before 1970)
        self.tz = dtype.time_zone
        utc = value.dt.convert_time_zone("UTC").dt.replace_time_zone(None).to_numpy()
        self.instants = utc.astype("int64")  # (in the column's own unit)
        self.wall = _wall_in(self.instants, self.tz, utc.dtype, self.name, zone_of=self.name)

    def _from_single(self, value: Any, length: int) -> None:
        import numpy as np

        if isinstance(value, np.datetime64):
            unit = np.datetime_data(value.dtype)[0]
            if unit in _UNITS:  # (datetime64 of 2D: in D)
                value = value.astype(f"datetime64[{unit}]")
            if not np.isnat(value) and unit not in _UNITS:
                msg = f"{self.name} must be a datetime64 in units {', '.join(_UNITS)}, got "
                raise TypeError(msg + f"{value.dtype} {value!r}")
            self.blank = bool(np.isnat(value))
            self.wall = np.full(length, value if unit in _UNITS else np.datetime64("NaT", "ns"))
            return
        if value != value:  # noqa: PLR0124 - pandas.NaT is a datetime that equals nothing
            self.blank = True
            self.wall = np.full(length, np.datetime64("NaT", "ns"))
            return
        offset = _utcoffset(self.name, value)
        naive: Any = value.replace(tzinfo=None) if isinstance(value, datetime) else value
        # a pandas Timestamp to the nanosecond; a datetime to the microsecond; a date a day
        stamp = naive.to_datetime64() if hasattr(naive, "to_datetime64") else np.datetime64(naive)
        self.wall = np.full(length, stamp)
        if offset is not None:  # its instant, as a zoned column's: since the epoch, UTC
            unit = _unit(self.wall)
            offset_ns = offset // timedelta(microseconds=1) * 1000
            instant = int(stamp.astype(np.int64)) - offset_ns // _NS_PER[unit]
            if not _INT64_LOW <= instant <= _INT64_HIGH:
                msg = f"{self.name} is outside what datetime64[{unit}] holds in UTC: "
                raise ValueError(msg + repr(value))
            self.tz, self.fold = value.tzinfo, value.fold
            self.instants = np.full(length, instant, dtype=np.int64)

    def _check_dtype(self) -> None:
        import numpy as np

        dtype = self.wall.dtype
        if dtype.kind != "M" or np.datetime_data(dtype)[0] not in _UNITS:
            msg = (
                f"{self.name} must hold datetime64 values in units {', '.join(_UNITS)}, got {dtype}"
            )
            raise TypeError(msg)
        unit, count = np.datetime_data(dtype)
        if count != 1 or not dtype.isnative:  # [2D] read as [D]; big-endian as native
            self.wall = self.wall.astype(f"datetime64[{unit}]")
        if self.wall.ndim != 1:
            msg = f"{self.name} must be one-dimensional, got shape {self.wall.shape}"
            raise ValueError(msg)
        self.unit = _unit(self.wall)
        self.missing = np.isnat(self.wall)
        self.split()
        if len(self.days) and (self.days.min() < _DAY_ONE or self.days.max() >= _DAY_10000):
            outside = (self.days < _DAY_ONE) | (self.days >= _DAY_10000)
            where = int(np.argmax(outside))
            at = "" if self.single else f" at position {where}"
            msg = f"{self.name} is outside years 1..9999{at}: "
            raise ValueError(msg + str(self.wall[where]))

    def split(self) -> None:
        """The calendar fields of the wall clock, by integer arithmetic (cheaper than
        numpy's own conversion to months): ``days`` since 1970-01-01 and ``months``
        since 1970-01 now, ``since_midnight`` (ns) and ``day`` of the month when asked;
        day 0 (1970-01-01) where missing."""
        import numpy as np

        self.values = self.wall.view(np.int64)
        if self.missing.any():
            self.values = np.where(self.missing, 0, self.values)
        self.days = self.values // _PER_DAY[self.unit] if self.unit != "D" else self.values
        months_of = _calendar()[0]
        if len(self.days) and self.days.min() >= 0 and self.days.max() < _CYCLE_DAYS:
            self.within = self.days  # 1970..2369: the table's own cycle (most data)
            self.months = months_of[self.within]
        else:
            cycles = self.days // _CYCLE_DAYS
            self.within = self.days - cycles * _CYCLE_DAYS
            self.months = cycles * _CYCLE_MONTHS + months_of[self.within]
        for name in ("since_midnight", "day"):  # computed again for this wall clock
            self.__dict__.pop(name, None)

    @functools.cached_property
    def since_midnight(self) -> Any:
        """Nanoseconds since midnight of each wall clock."""
        return (self.values - self.days * _PER_DAY[self.unit]) * _NS_PER[self.unit]

    @functools.cached_property
    def day(self) -> Any:
        """The day of the month of each wall clock."""
        return _calendar()[1][self.within]

    def to_unit(self, unit: str) -> None:
        """This column in *unit*, a finer one than its own: a zoned pair's instants are
        compared in the finer of their units.

        Raises:
            ValueError: If a value is outside what datetime64 of *unit* holds.
        """
        import numpy as np

        factor = _NS_PER[self.unit] // _NS_PER[unit]
        limit = _INT64_HIGH // factor
        for values in (self.values, np.where(self.missing, 0, self.instants)):
            outside = np.abs(values) > limit
            if outside.any():
                where = int(np.argmax(outside))
                at = "" if self.single else f" at position {where}"
                msg = f"{self.name} is outside what datetime64[{unit}] holds{at}: "
                raise ValueError(msg + str(self.wall[where]))
        nat = np.iinfo(np.int64).min
        self.wall = np.where(self.missing, nat, self.values * factor).view(f"datetime64[{unit}]")
        self.instants = np.where(self.missing, nat, self.instants * factor)
        self.unit = unit
        self.split()

    def give(self, result: Any, *, like: Any = None) -> Any:
        """*result* (a numpy array) as this input's kind: same index, same zone."""
        if self.kind == "polars":
            import polars as pl

            series = pl.Series(getattr(self.original, "name", ""), result)
            if result.dtype.kind == "f":  # counts: NaN where missing -> null
                series = series.fill_nan(None).cast(pl.Int64)
            return series
        if self.kind.startswith("pandas"):
            import pandas as pd

            if self.kind == "pandas-series":
                return pd.Series(result, index=self.original.index, name=like, copy=False)
            return pd.Index(result, name=like)
        return result


def _kind(value: Any) -> str:
    """What a result for *value* is given as: "pandas-series", "pandas-index", "polars" or
    "numpy" (anything else, a single value on its own included)."""
    module = type(value).__module__.split(".")[0]
    if module == "pandas":
        return "pandas-series" if type(value).__name__ == "Series" else "pandas-index"
    return "polars" if module == "polars" else "numpy"


def _unit(wall: Any) -> Any:
    """The unit of a datetime64 array ("D", "s", ..., "ns")."""
    import numpy as np

    return np.datetime_data(wall.dtype)[0]


def _is_datetime_pandas(value: Any) -> bool:
    import pandas as pd

    return bool(pd.api.types.is_datetime64_any_dtype(value.dtype))


def _as_columns(start: Any, end: Any) -> tuple[_Column, _Column]:
    if not (is_column(start) or is_column(end)):
        msg = f"start or end must be a column, got {type(start).__name__} and {type(end).__name__}"
        raise TypeError(msg)
    _check_same_index("start", start, "end", end)
    s, e = _Column("start", start, beside=end), _Column("end", end, beside=start)
    if len(s.wall) != len(e.wall):
        msg = f"start and end must have the same length, got {len(s.wall)} and {len(e.wall)}"
        raise ValueError(msg)
    for blank, other in ((s, e), (e, s)):  # a single NaT is missing beside any column
        if blank.blank and other.tz is not None:
            blank.wall = blank.wall.astype(other.wall.dtype)
            blank.tz, blank.instants, blank.unit = other.tz, other.instants * 0, other.unit
    if (s.tz is None) != (e.tz is None):
        kinds = ["aware" if c.tz is not None else "naive" for c in (s, e)]
        msg = f"cannot mix {kinds[0]} and {kinds[1]} values: start is {kinds[0]}, end is {kinds[1]}"
        raise TypeError(msg)
    if s.tz is not None and s.unit != e.unit:  # instants in the finer unit
        coarser, finer = sorted((s, e), key=lambda column: -_NS_PER[column.unit])
        coarser.to_unit(finer.unit)
    # The end on the start's wall clock, unless their zones are equal (a name is not enough:
    # two fixed offsets may both be called "EST").
    if s.tz is not None and not (s.tz is e.tz or s.tz == e.tz):
        e.wall = _wall_in(e.instants, s.tz, e.wall.dtype, "end")
        e.split()
    return s, e


def _check_same_index(first: str, a: Any, second: str, b: Any) -> None:
    """Refuse two pandas Series whose indexes differ: their rows are paired by position,
    where pandas would pair them by label."""
    if _kind(a) == _kind(b) == "pandas-series" and not a.index.equals(b.index):
        msg = (
            f"{first} and {second} must have the same index: their rows are paired by position,"
            f" not by label as pandas pairs them; align them first"
            f" ({first}, {second} = {first}.align({second}))"
        )
        raise ValueError(msg)


def _zone_failed(name: str, tz: Any, exc: Exception) -> NoReturn:
    """Raise a TypeError (a tzinfo answered with a wrong type) or a ValueError (any other
    failure of the zone) that names the argument whose zone it is."""
    msg = f"{name}'s time zone {tz!r} failed: {exc}"
    if isinstance(exc, TypeError):
        raise TypeError(msg) from exc
    raise ValueError(msg) from exc


def _utcoffset(name: str, value: date) -> timedelta | None:
    """*value*'s UTC offset (None: a date, or naive); a tzinfo that raises, or answers what
    Python refuses, is an error naming *name*."""
    if not isinstance(value, datetime) or value.tzinfo is None:
        return None
    try:
        return value.utcoffset()
    except Exception as exc:  # whatever the tzinfo raised, the caller sees the argument
        _zone_failed(name, value.tzinfo, exc)


def _wall_in(instants: Any, tz: Any, dtype: Any, name: str, zone_of: str = "start") -> Any:
    """The wall clocks of argument *name*'s *instants* (UTC, in the unit of *dtype*) in
    *tz*, the zone of argument *zone_of* (the start's, or *name*'s own)."""
    import numpy as np
    import pandas as pd

    try:
        index = _utc(instants, np.datetime_data(dtype)[0]).tz_convert(tz)
        wall = index.tz_localize(None).to_numpy()
    except pd.errors.OutOfBoundsDatetime:
        clock = "its" if zone_of == name else f"the {zone_of}'s"
        msg = f"{name} is outside what {dtype} holds on {clock} wall clock"
        raise ValueError(msg) from None
    except Exception as exc:  # a tzinfo pandas cannot use, or one that misbehaves
        _zone_failed(zone_of, tz, exc)
    return wall.astype(dtype)


def _utc(instants: Any, unit: str) -> Any:
    """*instants* (since the epoch, in *unit*) as a pandas DatetimeIndex in UTC."""
    import numpy as np
    import pandas as pd

    values = np.asarray(instants, dtype=np.int64).view(f"datetime64[{unit}]")
    return pd.DatetimeIndex(values).tz_localize("UTC")


def _order(s: _Column, e: _Column) -> Any:
    """-1, 0 or 1 per row as the end is before, at or after the start (instants)."""
    import numpy as np

    if s.instants is not None:  # (compared, not subtracted: 300 years of ns overflow)
        missing = s.missing | e.missing
        start, end = np.where(missing, 0, s.instants), np.where(missing, 0, e.instants)
        return (end > start).astype(np.int64) - (end < start).astype(np.int64)
    days = np.sign(e.days - s.days)
    return np.where(days == 0, np.sign(e.since_midnight - s.since_midnight), days)


def _reversed(s: _Column, e: _Column) -> Any:
    """Whether each end is before its start (False where missing)."""
    if s.instants is None and s.unit == e.unit:
        return e.wall < s.wall  # NaT compares False
    return (_order(s, e) < 0) & ~(s.missing | e.missing)


@functools.cache
def _calendar() -> tuple[Any, Any, Any]:
    """For each day of the 400-year cycle from 1970-01-01, its month (since 1970-01) and
    day of the month; and the first day (since 1970-01-01) of each month from year 0 to
    year 10000 (indexed from `_FIRST_MONTH`). Built once, from numpy's own calendar."""
    import numpy as np

    cycle = np.arange(_CYCLE_DAYS).astype("datetime64[D]")
    months = cycle.astype("datetime64[M]")
    day = (cycle - months.astype("datetime64[D]")).astype(np.int64) + 1
    span = np.arange(_FIRST_MONTH, (_LAST_YEAR + 2 - _EPOCH_YEAR) * _MONTHS + 1)
    starts = span.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)
    return months.astype(np.int64), day, starts


def _month_starts(months: Any) -> Any:
    """The first day (since 1970-01-01) of each month (since 1970-01)."""
    return _calendar()[2][months - _FIRST_MONTH]


def _days_in_month(months: Any) -> Any:
    starts = _calendar()[2]
    return starts[months + 1 - _FIRST_MONTH] - starts[months - _FIRST_MONTH]


def _as_wall(days: Any, since_midnight: Any, unit: str, missing: Any) -> Any:
    """datetime64 values of *unit* from days since the epoch and ns since midnight."""
    import numpy as np

    values = days * _PER_DAY[unit] + since_midnight // _NS_PER[unit]
    return np.where(missing, np.iinfo(np.int64).min, values).view(f"datetime64[{unit}]")


def _name(start: Any, end: Any) -> Any:
    """The name both columns share (None if they differ); a single value has none."""
    names = {getattr(value, "name", None) for value in (start, end) if is_column(value)}
    return names.pop() if len(names) == 1 else None


def _counts(result: Any, missing: Any) -> Any:
    """Integer results, with NaN where an input was missing (then float64)."""
    import numpy as np

    if missing.any():
        return np.where(missing, np.nan, result)
    return result.astype(np.int64, copy=False)


# -- the functions -----------------------------------------------------------------------


def count_months(start: Any, end: Any) -> Any:
    """`devutils.dates.count_months` row by row.

    Examples:
        >>> import numpy as np
        >>> count_months(np.array(["2024-01-15", "2023-12-31"], dtype="datetime64[D]"),
        ...              np.array(["2024-03-05", "2024-01-01"], dtype="datetime64[D]"))
        array([3, 2])
    """
    import numpy as np

    s, e = _as_columns(start, end)
    missing = s.missing | e.missing
    reversed_ = _reversed(s, e)
    if reversed_.any():
        where = int(np.argmax(reversed_))
        msg = (
            f"end must not be before start, at position {where}: "
            f"start={s.wall[where]}, end={e.wall[where]}"
        )
        raise ValueError(msg)
    result = np.abs(e.months - s.months) + 1
    return s.give(_counts(result, missing), like=_name(start, end))


def months_between(start: Any, end: Any) -> Any:
    """`devutils.dates.months_between` row by row.

    Examples:
        >>> import numpy as np
        >>> months_between(np.array(["2024-01-31", "2024-03-01"], dtype="datetime64[D]"),
        ...                np.array(["2024-02-29", "2024-01-31"], dtype="datetime64[D]"))
        array([ 1, -1])
    """
    import numpy as np

    s, e = _as_columns(start, end)
    if s.tz is not None:
        months = _elapsed_zoned(s, e)
    else:  # naive: the wall clocks are the instants
        forward = _order(s, e) >= 0
        s_time, e_time = s.since_midnight, e.since_midnight
        day = np.minimum(s.day, _days_in_month(e.months))
        later = (day > e.day) | ((day == e.day) & (s_time > e_time))
        earlier = (day < e.day) | ((day == e.day) & (s_time < e_time))
        months = e.months - s.months
        months = np.where(forward, months - later, months + earlier)
    return s.give(_counts(months, s.missing | e.missing), like=_name(start, end))


def _elapsed_zoned(s: _Column, e: _Column) -> Any:
    """`devutils.dates`' rule for aware values, row by row: from the months between the
    wall clocks, step back while ``add_months(start, n)`` is past the end, then on while
    ``add_months(start, n + 1)`` is not (instants; "past" is "before" where the end is
    before the start)."""
    import numpy as np

    missing = s.missing | e.missing
    step = np.where(_order(s, e) >= 0, 1, -1)
    months = e.months - s.months
    months = np.where(months * step < 0, 0, months)  # the wall clock set back (DST)

    def passed(k: Any) -> Any:  # add_months(start, k) lies beyond the end, going by step
        return _beyond(s, e, k) * step > 0

    back = (months != 0) & passed(months) & ~missing
    while back.any():
        months = months - np.where(back, step, 0)
        back = (months != 0) & passed(months) & ~missing
    on = ~passed(months + step) & ~missing
    while on.any():
        months = months + np.where(on, step, 0)
        on = ~passed(months + step) & ~missing
    return months


def _beyond(s: _Column, e: _Column, months: Any) -> Any:
    """-1, 0 or 1 per row as ``add_months(start, months)`` is before, at or after the end
    (instants). Its wall clock and the end's on the start's wall clock are in that order
    unless they lie within two days, the most two UTC offsets can differ: only those rows
    are read in the start's zone."""
    import numpy as np

    total = s.months + months
    days = _month_starts(total) + np.minimum(s.day, _days_in_month(total)) - 1
    gap = (days - e.days) * _NS_PER["D"] + (s.since_midnight - e.since_midnight)
    order = np.sign(gap)
    near = (np.abs(gap) < 2 * _NS_PER["D"]) & ~(s.missing | e.missing)
    if near.any():
        wall = _as_wall(days[near], s.since_midnight[near], s.unit, s.missing[near])
        first, second = _candidates(wall, s.tz, s.name)
        moved = np.where(_folds(s, near), second, first)
        order[near] = np.sign(moved - e.instants[near])
    return order


def add_months(d: Any, n: Any) -> Any:
    """`devutils.dates.add_months` row by row; *n* an int or a column of ints.

    Examples:
        >>> import numpy as np
        >>> add_months(np.array(["2024-01-31", "2024-03-31"], dtype="datetime64[D]"), [1, -1])
        array(['2024-02-29', '2024-02-29'], dtype='datetime64[D]')
    """
    import numpy as np

    _check_same_index("d", d, "n", n)
    column = _Column("d", d, beside=n if _is_steps(n) else None)
    steps = _steps(n, len(column.wall))
    total = column.months + steps
    low, high = (_FIRST_YEAR - _EPOCH_YEAR) * _MONTHS, (_LAST_YEAR - _EPOCH_YEAR + 1) * _MONTHS - 1
    outside = ((total < low) | (total > high)) & ~column.missing
    total = np.where(column.missing | outside, 0, total)
    days = _month_starts(total) + np.minimum(column.day, _days_in_month(total)) - 1
    outside |= _outside_ns(column, days, column.since_midnight)
    if outside.any():
        where = int(np.argmax(outside))
        given = int(_as_array(n)[where]) if _is_steps(n) else n
        limits = (
            f"{_NS_LIMITS}, what datetime64[ns] holds" if column.unit == "ns" else "years 1..9999"
        )
        msg = (
            f"add_months is outside {limits} at position {where}: "
            f"{column.wall[where]} + {shown(given)} months"
        )
        raise OverflowError(msg)
    wall = _as_wall(days, column.since_midnight, column.unit, column.missing)
    return _give_wall(column, wall, fold=_folds(column))


def month_start(d: Any) -> Any:
    """`devutils.dates.month_start` row by row.

    Examples:
        >>> import numpy as np
        >>> month_start(np.array(["2024-02-17T13:30", "NaT"], dtype="datetime64[m]"))
        array(['2024-02-01T00:00',                'NaT'], dtype='datetime64[m]')
    """

    column = _Column("d", d)
    days = _month_starts(column.months)
    _check_ns("month_start", column, days, 0)
    wall = _as_wall(days, 0, column.unit, column.missing)
    return _give_wall(column, wall, fold=None)


def month_end(d: Any) -> Any:
    """`devutils.dates.month_end` row by row: the last day, or for datetimes the last
    representable moment of it in the column's unit (23:59:59.999999999 in ns).

    Examples:
        >>> import numpy as np
        >>> month_end(np.array(["2024-02-17", "2023-02-01"], dtype="datetime64[D]"))
        array(['2024-02-29', '2023-02-28'], dtype='datetime64[D]')
    """

    column = _Column("d", d)
    days = _month_starts(column.months + 1) - 1
    last = _PER_DAY[column.unit] - 1  # the day's last moment in the column's unit
    _check_ns("month_end", column, days, last * _NS_PER[column.unit])
    wall = _as_wall(days, last * _NS_PER[column.unit], column.unit, column.missing)
    return _give_wall(column, wall, fold=None)


def _steps(n: Any, length: int) -> Any:
    import numpy as np

    column = _is_steps(n)
    if type(n).__name__ == "DataFrame":  # (pandas', polars': columns, not one)
        library = type(n).__module__.split(".")[0]
        msg = f"n must be an int or a column of ints, got a {library} DataFrame: give one column"
        raise TypeError(msg)
    unordered = isinstance(n, set | frozenset | dict | bytes | bytearray)  # (no column)
    if isinstance(n, bool) or unordered or not (column or hasattr(n, "__index__")):
        msg = f"n must be an int or a column of ints, got {describe(n)}"
        raise TypeError(msg)
    limit = (_LAST_YEAR + 1) * _MONTHS  # further is outside years 1..9999 anyway
    if not column:
        return np.full(length, max(-limit, min(limit, _one_step(n))), dtype=np.int64)
    _check_no_bool(n)
    steps = _as_array(n)
    if steps.ndim != 1:
        msg = f"n must be one-dimensional, got shape {steps.shape}"
        raise ValueError(msg)
    if len(steps) != length:
        msg = f"d and n must have the same length, got {length} and {len(steps)}"
        raise ValueError(msg)
    if steps.dtype == object and all(type(step) is int for step in steps):  # past int64
        steps = np.array([max(-limit, min(limit, step)) for step in steps], dtype=np.int64)
    if steps.dtype.kind not in "iu" and len(steps):  # ([] is float64 in numpy)
        given = str(getattr(n, "dtype", steps.dtype))  # Int64 with nulls: float64 in numpy
        nulls = given != str(steps.dtype) and steps.dtype.kind == "f" and np.isnan(steps).any()
        msg = f"n must hold ints, got a column of {given}{' with nulls' if nulls else ''}"
        raise TypeError(msg)
    return np.clip(steps, -limit, limit).astype(np.int64)


def _check_no_bool(n: Any) -> None:
    """The TypeError of a list or tuple *n* that holds a bool (numpy reads ``[1, True]``
    as ints)."""
    import numpy as np

    if isinstance(n, list | tuple):
        for position, step in enumerate(n):
            if isinstance(step, bool | np.bool_):
                msg = f"n must hold ints, got {describe(step)} at position {position}"
                raise TypeError(msg)


def _as_array(column: Any) -> Any:
    """A column of n as a numpy array, by position (a Series' labels aside)."""
    import numpy as np

    return np.asarray(column.to_numpy() if hasattr(column, "to_numpy") else column)


def _one_step(n: Any) -> int:
    """*n*, an int (a 0-d array of ints is one; of floats or bools, not)."""
    msg = f"n must be an int or a column of ints, got {describe(n)}"
    if getattr(n, "dtype", None) is not None and n.dtype.kind not in "iu":
        raise TypeError(msg)
    try:
        return operator.index(n)
    except TypeError:
        raise TypeError(msg) from None


def _is_steps(n: Any) -> bool:
    """Whether *n* is a column of steps: a sequence, not a str, nor a 0-d array (an int)."""
    return hasattr(n, "__len__") and not isinstance(n, str) and getattr(n, "ndim", 1) != 0


def _outside_ns(column: _Column, days: Any, since_midnight: Any) -> Any:
    """Whether each result, *days* since 1970-01-01 and *since_midnight* ns, lies outside
    what *column*'s unit holds, where that is datetime64[ns] (the other units hold years
    1..9999 whole)."""
    import numpy as np

    if column.unit != "ns":
        return np.zeros(len(days), dtype=bool)
    (first_day, first_time), (last_day, last_time) = _NS_FIRST, _NS_LAST
    before = (days < first_day) | ((days == first_day) & (since_midnight < first_time))
    after = (days > last_day) | ((days == last_day) & (since_midnight > last_time))
    return (before | after) & ~column.missing


def _check_ns(function: str, column: _Column, days: Any, since_midnight: Any) -> None:
    """An OverflowError naming the first row whose result *function* cannot give in
    datetime64[ns] (`_outside_ns`)."""
    import numpy as np

    outside = _outside_ns(column, days, since_midnight)
    if outside.any():
        where = int(np.argmax(outside))
        msg = (
            f"{function} is outside {_NS_LIMITS}, what datetime64[ns] holds, at position "
            f"{where}: {column.wall[where]}"
        )
        raise OverflowError(msg)


def _folds(column: _Column, rows: Any = slice(None)) -> Any:
    """For an aware column: whether each value (of *rows*, a mask, or all) is the later of
    a repeated wall time (Python's ``fold``), which `add_months` keeps; a single value's
    own fold."""

    if column.tz is None:
        return None
    present = ~column.missing[rows]
    if column.fold is not None:
        return present & bool(column.fold)
    earliest, _ = _candidates(column.wall[rows], column.tz, column.name)
    return (column.instants[rows] > earliest) & present


def _candidates(wall: Any, tz: Any, name: str, what: str | None = None) -> tuple[Any, Any]:
    """The instants (UTC, in the unit of *wall*) of each wall time in *tz* (the zone of
    argument *name*) with fold 0 and with fold 1: the earlier and the later of a repeated
    time; for a time that a DST gap skips, those of the offsets before and after the gap
    (zoneinfo's rule).

    Raises:
        OverflowError: If an instant is outside what datetime64 of that unit holds (only
            datetime64[ns] is narrower than years 1..9999); *what* says what the wall
            times are, where they are not *name*'s own.
    """
    import numpy as np
    import pandas as pd

    try:
        return _fold_instants(wall, tz)
    except pd.errors.OutOfBoundsDatetime:
        unit = _unit(wall)
        where = what or f"{name} in its time zone"
        at = _first_outside(wall, tz)
        row = "" if at is None else f" at position {at}: {wall[at]}"
        msg = f"{where} is outside {_NS_LIMITS}, what datetime64[{unit}] holds{row}"
        raise OverflowError(msg) from None
    except NotImplementedError as exc:
        # pandas localizes through Python's datetime, which ends with year 9999: a wall
        # time late on 9999-12-31 in a zone behind UTC is an instant it cannot hold
        if len(wall) and (wall[~np.isnat(wall)] >= np.datetime64("9999-12-30")).any():
            where = what or f"{name} in its time zone"
            msg = f"{where} is in year 10000 in UTC, past what a zoned column holds here"
            raise OverflowError(msg) from None
        _zone_failed(name, tz, exc)
    except Exception as exc:  # a tzinfo pandas cannot use, or one that misbehaves
        _zone_failed(name, tz, exc)


def _first_outside(wall: Any, tz: Any) -> int | None:
    """The first position of *wall* whose instants in *tz* datetime64 cannot hold: one
    of the rows within a day of the ends, as no offset is a day or more."""
    import numpy as np
    import pandas as pd

    day = np.timedelta64(1, "D")
    limits = np.array([np.iinfo(np.int64).min + 1, np.iinfo(np.int64).max], wall.dtype)
    near = np.flatnonzero((wall < limits[0] + day) | (wall > limits[1] - day))
    for at in near:
        try:
            _fold_instants(wall[at : at + 1], tz)
        except pd.errors.OutOfBoundsDatetime:
            return int(at)
    return None


def _fold_instants(wall: Any, tz: Any) -> tuple[Any, Any]:
    import numpy as np
    import pandas as pd

    naive = pd.DatetimeIndex(wall)
    length = len(naive)
    options = [
        naive.tz_localize(tz, ambiguous=np.full(length, flag), nonexistent="NaT").asi8
        for flag in (True, False)
    ]
    nat = np.iinfo(np.int64).min
    low = np.where(options[0] == nat, options[1], np.minimum(options[0], options[1]))
    high = np.where(options[0] == nat, options[1], np.maximum(options[0], options[1]))
    skipped = (low == nat) & ~np.isnat(naive.to_numpy())
    if skipped.any():  # zoneinfo's rule: fold 0 takes the offset before the gap
        plain = naive.asi8[skipped]
        before, after = _offsets_around(plain, tz, naive.unit)
        low[skipped] = plain - before
        high[skipped] = plain - after
    return low, high


def _offsets_around(wall: Any, tz: Any, unit: str) -> tuple[Any, Any]:
    """The UTC offsets of *tz* before and after the gap that skips each of the wall
    times *wall* (since the epoch, in *unit*): those a day and two hours either side of
    it, as UTC instants, where the transition lies (no offset is a day or more). Clipped
    to what the unit holds, as a transition never is that near its ends."""
    import numpy as np

    reach = 26 * _NS_PER["h"] // _NS_PER[unit]
    limit = np.iinfo(np.int64)
    earlier = np.maximum(wall, limit.min + 1 + reach) - reach
    later = np.minimum(wall, limit.max - reach) + reach
    return _offset_at(earlier, tz, unit), _offset_at(later, tz, unit)


def _offset_at(instants: Any, tz: Any, unit: str) -> Any:
    """The UTC offset of *tz* at each instant, both in *unit*."""
    aware = _utc(instants, unit).tz_convert(tz)
    return aware.tz_localize(None).asi8 - aware.tz_convert(None).asi8


def _give_wall(column: _Column, wall: Any, fold: Any) -> Any:
    """A result given as wall times, in *column*'s kind and zone (fold 0 where *fold* is
    None, else each row's)."""
    import numpy as np

    if column.tz is None:
        if column.kind == "polars":
            import polars as pl

            unit = _unit(wall)
            return pl.Series(column.original.name, wall.astype(f"datetime64[{_polars_unit(unit)}]"))
        return _in_arrow_dtype(
            column, column.give(wall, like=getattr(column.original, "name", None))
        )
    result = f"a result in {column.name}'s time zone"
    earliest, latest = _candidates(wall, column.tz, column.name, result)
    instants = earliest if fold is None else np.where(fold, latest, earliest)
    try:
        return _zoned(column, instants)
    except Exception as exc:  # a zone pandas or polars cannot use (polars: UTC-05:30)
        _zone_failed(column.name, column.tz, exc)


def _zoned(column: _Column, instants: Any) -> Any:
    """*instants* (UTC, in *column*'s unit) in *column*'s kind and zone."""
    import pandas as pd

    unit = column.unit  # pandas and polars zoned columns: s, ms, us or ns
    index: Any = _utc(instants, unit).tz_convert(column.tz)
    if column.kind == "polars":
        import polars as pl

        unit = _polars_unit(unit)
        utc = index.tz_convert(None).to_numpy().astype(f"datetime64[{unit}]")
        zoned = pl.Series(column.original.name, utc).dt.replace_time_zone("UTC")
        return zoned.dt.convert_time_zone(_polars_zone(column.tz))
    name = getattr(column.original, "name", None)
    if column.kind == "pandas-series":
        return _in_arrow_dtype(column, pd.Series(index, index=column.original.index, name=name))
    if column.kind == "numpy":  # an aware value beside a numpy n: numpy has no zones
        return index.to_numpy(dtype=object)
    return _in_arrow_dtype(column, index.rename(name))


def _in_arrow_dtype(column: _Column, result: Any) -> Any:
    """A pandas *result* of dates in its column's own dtype where that is an Arrow one
    (``date32[pyarrow]``, ``timestamp[us, tz=...][pyarrow]``): as the column came in."""
    dtype = None if column.single else getattr(column.original, "dtype", None)
    if type(dtype).__name__ == "ArrowDtype" and column.kind.startswith("pandas"):
        return result.astype(dtype)
    return result


def _polars_unit(unit: str) -> str:
    """The unit polars holds *unit* in: D (dates), ms, us or ns (h, m and s as ms)."""
    return "ms" if unit in ("h", "m", "s") else unit


def _polars_zone(tz: Any) -> str:
    """*tz* as polars names zones: an IANA key, or for a fixed offset "+02:00" (polars
    takes whole hours only). A fixed offset is a zone with an offset for no particular
    time, ``utcoffset(None)``: `datetime.timezone`, dateutil's ``tzutc`` and ``tzoffset``."""
    key = tz if isinstance(tz, str) else getattr(tz, "key", None)  # (a polars column's: str)
    if isinstance(key, str):
        return key
    offset = tz.utcoffset(None)
    if isinstance(offset, timedelta):
        sign = "-" if offset < timedelta(0) else "+"
        minutes, seconds = divmod(abs(offset) // timedelta(seconds=1), 60)
        hours, minutes = divmod(minutes, 60)
        shown_seconds = f":{seconds:02d}" if seconds else ""  # (which polars refuses too)
        return f"{sign}{hours:02d}:{minutes:02d}{shown_seconds}"
    return str(tz)
