"""Month arithmetic on whole columns: numpy ``datetime64`` arrays, pandas Series and
DatetimeIndex, polars Series. Vectorized: no Python-level loop per element.

Call `devutils.dates`' functions (``count_months(start_column, end_column)``, ...): they
hand columns to this module, which gives the same results as they give element by
element. numpy is imported only when a column arrives; pandas and polars never by this
module itself (their objects bring them).

* A column holds dates or datetimes: numpy ``datetime64`` in units D, h, m, s, ms, us or ns
  (naive); pandas naive or in one time zone; polars ``Date`` or ``Datetime`` (naive or in
  one zone). A date or naive datetime on one side is used for every row of the other.
* Missing values (NaT, null) give missing results: NaT for dates, and for counts NaN
  (numpy, pandas: then the result is float64, as pandas' own ``Series.dt.month`` does)
  or null (polars, whose integers have nulls).
* A result has the type of the first column given: a numpy array, a pandas Series with
  the same index (a DatetimeIndex gives an Index), a polars Series.
* Errors name the first offending position (0-based, whatever a pandas index says):
  a reversed pair and a value outside years 1..9999 are ValueErrors, a result of
  `add_months` outside them an OverflowError (`devutils.dates` raises its
  ``DateRangeError``), other types and mixed naive and aware columns TypeErrors.
"""

from __future__ import annotations

import functools
from datetime import date, datetime
from typing import Any

__all__ = [
    "add_months",
    "count_months",
    "is_column",
    "month_end",
    "month_start",
    "months_between",
]

_LIBRARIES = ("numpy", "pandas", "polars")
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


def is_column(value: object) -> bool:
    """Whether *value* is a numpy array, pandas Series or Index, or polars Series.

    Checks the type's module without importing any of them.

    Examples:
        >>> is_column([1, 2]), is_column("2024-01-01")
        (False, False)
    """
    kind = type(value)
    return kind.__module__.split(".")[0] in _LIBRARIES and kind.__name__ in (
        "ndarray",
        "Series",
        "DatetimeIndex",
        "Index",
    )


# -- columns in, columns out -------------------------------------------------------------


class _Column:
    """One input as numpy arrays: its wall clock (``datetime64``, NaT where missing), its
    instants (ns since the epoch, UTC; aware only), its zone, and how to give a result
    back in the input's own kind."""

    def __init__(self, name: str, value: Any, length: int | None = None) -> None:
        import numpy as np

        self.name = name
        self.kind = "numpy"
        self.tz: Any = None
        self.instants: Any = None
        self.original: Any = value
        module = type(value).__module__.split(".")[0]
        if module == "pandas":
            self._from_pandas(value)
        elif module == "polars":
            self._from_polars(value)
        elif module == "numpy":
            self.wall = np.asarray(value)
        elif isinstance(value, date) and length is not None:  # one value for every row
            self._from_scalar(value, length)
        else:
            msg = f"{name} must be a date, a datetime or a column of them, got "
            raise TypeError(msg + f"{type(value).__name__} {value!r:.80}")
        self._check_dtype()

    def _from_pandas(self, value: Any) -> None:
        import pandas as pd

        self.kind = "pandas-series" if isinstance(value, pd.Series) else "pandas-index"
        index = pd.DatetimeIndex(value) if _is_datetime_pandas(value) else None
        if index is None:
            msg = f"{self.name} must hold datetimes, got a pandas column of {value.dtype}"
            raise TypeError(msg)
        if index.tz is not None:
            self.tz = index.tz
            self.instants = index.as_unit("ns").asi8
            index = index.tz_localize(None)
        self.wall = index.to_numpy()

    def _from_polars(self, value: Any) -> None:
        import polars as pl

        self.kind = "polars"
        dtype = value.dtype
        if dtype == pl.Date:
            self.wall = value.to_numpy()
            return
        if not isinstance(dtype, pl.Datetime):
            msg = f"{self.name} must hold dates or datetimes, got a polars column of {dtype}"
            raise TypeError(msg)
        if dtype.time_zone is not None:
            self.tz = dtype.time_zone
            utc = value.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
            self.instants = utc.dt.cast_time_unit("ns").to_numpy().astype("int64")
            value = value.dt.replace_time_zone(None)
        self.wall = value.to_numpy()

    def _from_scalar(self, value: date, length: int) -> None:
        import numpy as np

        if isinstance(value, datetime) and value.utcoffset() is not None:
            import pandas as pd  # an aware value next to a zoned pandas column

            self._from_pandas(pd.DatetimeIndex([pd.Timestamp(value)] * length))
            self.kind = "numpy"
            return
        naive: Any = value.replace(tzinfo=None) if isinstance(value, datetime) else value
        # a pandas Timestamp to the nanosecond; a datetime to the microsecond; a date a day
        stamp = naive.to_datetime64() if hasattr(naive, "to_datetime64") else np.datetime64(naive)
        self.wall = np.full(length, stamp)

    def _check_dtype(self) -> None:
        import numpy as np

        dtype = self.wall.dtype
        if dtype.kind != "M" or np.datetime_data(dtype)[0] not in _UNITS:
            msg = (
                f"{self.name} must hold datetime64 values in units {', '.join(_UNITS)}, got {dtype}"
            )
            raise TypeError(msg)
        if self.wall.ndim != 1:
            msg = f"{self.name} must be one-dimensional, got shape {self.wall.shape}"
            raise ValueError(msg)
        self.unit = _unit(self.wall)
        self.missing = np.isnat(self.wall)
        self.split()
        if len(self.days) and (self.days.min() < _DAY_ONE or self.days.max() >= _DAY_10000):
            outside = (self.days < _DAY_ONE) | (self.days >= _DAY_10000)
            where = int(np.argmax(outside))
            msg = f"{self.name} is outside years 1..9999 at position {where}: "
            raise ValueError(msg + str(self.wall[where]))

    def split(self) -> None:
        """The calendar fields of the wall clock, by integer arithmetic (numpy's own
        conversion to months costs 5x as much): ``days`` since 1970-01-01 and ``months``
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


def _unit(wall: Any) -> Any:
    """The unit of a datetime64 array ("D", "s", ..., "ns")."""
    import numpy as np

    return np.datetime_data(wall.dtype)[0]


def _is_datetime_pandas(value: Any) -> bool:
    import pandas as pd

    return bool(pd.api.types.is_datetime64_any_dtype(value.dtype))


def _pair(start: Any, end: Any) -> tuple[_Column, _Column]:
    first = start if is_column(start) else end
    length = len(first)
    s, e = _Column("start", start, length), _Column("end", end, length)
    if len(s.wall) != len(e.wall):
        msg = f"start and end must have the same length, got {len(s.wall)} and {len(e.wall)}"
        raise ValueError(msg)
    if (s.tz is None) != (e.tz is None):
        kinds = ["aware" if c.tz is not None else "naive" for c in (s, e)]
        msg = f"cannot mix {kinds[0]} and {kinds[1]} values: start is {kinds[0]}, end is {kinds[1]}"
        raise TypeError(msg)
    if s.tz is not None and str(s.tz) != str(e.tz):  # the end on the start's wall clock
        e.wall = _wall_in(e.instants, s.tz, e.wall.dtype)
        e.split()
    return s, e


def _wall_in(instants: Any, tz: Any, dtype: Any) -> Any:
    import pandas as pd

    index = pd.DatetimeIndex(pd.to_datetime(instants, unit="ns", utc=True)).tz_convert(tz)
    return index.tz_localize(None).to_numpy().astype(dtype)


def _order(s: _Column, e: _Column) -> Any:
    """-1, 0 or 1 per row as the end is before, at or after the start (instants)."""
    import numpy as np

    if s.instants is not None:
        missing = s.missing | e.missing
        return np.sign(np.where(missing, 0, e.instants) - np.where(missing, 0, s.instants))
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
    names = {getattr(start, "name", None), getattr(end, "name", None)}
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

    s, e = _pair(start, end)
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

    s, e = _pair(start, end)
    forward = _order(s, e) >= 0
    s_time, e_time = s.since_midnight, e.since_midnight
    wall_forward = (e.days > s.days) | ((e.days == s.days) & (e_time >= s_time))
    months = e.months - s.months
    day = np.minimum(s.day, _days_in_month(e.months))
    later = (day > e.day) | ((day == e.day) & (s_time > e_time))
    earlier = (day < e.day) | ((day == e.day) & (s_time < e_time))
    months = np.where(forward, months - later, months + earlier)
    months = np.where(forward != wall_forward, 0, months)  # a DST shift set the clock back
    return s.give(_counts(months, s.missing | e.missing), like=_name(start, end))


def add_months(d: Any, n: Any) -> Any:
    """`devutils.dates.add_months` row by row; *n* an int or a column of ints.

    Examples:
        >>> import numpy as np
        >>> add_months(np.array(["2024-01-31", "2024-03-31"], dtype="datetime64[D]"), [1, -1])
        array(['2024-02-29', '2024-02-29'], dtype='datetime64[D]')
    """
    import numpy as np

    column = _Column("d", d, len(n) if hasattr(n, "__len__") else None)
    steps = _steps(n, len(column.wall))
    total = column.months + steps
    unit = column.unit
    low, high, limits = _month_range(unit)
    outside = ((total < low) | (total > high)) & ~column.missing
    if outside.any():
        where = int(np.argmax(outside))
        given = n[where] if hasattr(n, "__len__") else n
        msg = (
            f"add_months is outside {limits} at position {where}: "
            f"{column.wall[where]} + {given} months"
        )
        raise OverflowError(msg)
    total = np.where(column.missing, 0, total)
    days = _month_starts(total) + np.minimum(column.day, _days_in_month(total)) - 1
    wall = _as_wall(days, column.since_midnight, unit, column.missing)
    return _give_wall(column, wall, fold=_folds(column))


def month_start(d: Any) -> Any:
    """`devutils.dates.month_start` row by row.

    Examples:
        >>> import numpy as np
        >>> month_start(np.array(["2024-02-17T13:30", "NaT"], dtype="datetime64[m]"))
        array(['2024-02-01T00:00',                'NaT'], dtype='datetime64[m]')
    """

    column = _Column("d", d)
    wall = _as_wall(_month_starts(column.months), 0, column.unit, column.missing)
    return _give_wall(column, wall, fold=None)


def month_end(d: Any) -> Any:
    """`devutils.dates.month_end` row by row: the last day, or for datetimes the last
    representable moment of it in the column's unit (23:59:59.999999999 in ns).

    Examples:
        >>> import numpy as np
        >>> month_end(np.array(["2024-02-17", "2023-02-01"], dtype="datetime64[D]"))
        array(['2024-02-29', '2023-02-28'], dtype='datetime64[D]')
    """
    import numpy as np

    column = _Column("d", d)
    following = _as_wall(_month_starts(column.months + 1), 0, column.unit, column.missing)
    return _give_wall(column, following - np.timedelta64(1, column.unit), fold=None)


def _steps(n: Any, length: int) -> Any:
    import numpy as np

    column = hasattr(n, "__len__") and not isinstance(n, str)
    if isinstance(n, bool) or not (column or hasattr(n, "__index__")):
        msg = f"n must be an int or a column of ints, got {type(n).__name__} {n!r:.80}"
        raise TypeError(msg)
    limit = (_LAST_YEAR + 1) * _MONTHS  # further is outside years 1..9999 anyway
    if not column:
        return np.full(length, max(-limit, min(limit, int(n))), dtype=np.int64)
    steps = np.asarray(n.to_numpy() if hasattr(n, "to_numpy") else n)
    if steps.dtype.kind not in "iu" or steps.ndim != 1:
        msg = f"n must hold ints, got a column of {steps.dtype}"
        raise TypeError(msg)
    if len(steps) != length:
        msg = f"d and n must have the same length, got {length} and {len(steps)}"
        raise ValueError(msg)
    return np.clip(steps, -limit, limit).astype(np.int64)


def _month_range(unit: str) -> tuple[int, int, str]:
    """The first and last month (since 1970-01) a result may fall in, and what sets them:
    years 1..9999, or for datetime64[ns] (which holds 1677-09-21..2262-04-11) its range."""
    import numpy as np

    if unit == "ns":
        info = np.iinfo(np.int64)
        ends = np.array([info.min + 1, info.max], dtype="datetime64[ns]").astype("datetime64[M]")
        first, last = (int(month) for month in ends.astype(np.int64))
        return first + 1, last - 1, f"{ends[0] + 1}..{ends[1] - 1}, what datetime64[ns] holds"
    low, high = (_FIRST_YEAR - _EPOCH_YEAR) * _MONTHS, (_LAST_YEAR - _EPOCH_YEAR + 1) * _MONTHS - 1
    return low, high, "years 1..9999"


def _folds(column: _Column) -> Any:
    """For an aware column: whether each value is the later of a repeated wall time
    (Python's ``fold``), which `add_months` keeps."""

    if column.tz is None:
        return None
    earliest, _ = _candidates(column.wall, column.tz)
    return (column.instants > earliest) & ~column.missing


def _candidates(wall: Any, tz: Any) -> tuple[Any, Any]:
    """The earliest and latest instant (ns, UTC) of each wall time in *tz*; for a time
    that a DST gap skips, the instants of the offsets before and after the gap."""
    import numpy as np
    import pandas as pd

    naive = pd.DatetimeIndex(wall.astype("datetime64[ns]"))
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
        after = naive.tz_localize(tz, ambiguous="NaT", nonexistent="shift_forward").asi8
        plain = naive.asi8
        before_offset = _offset_at(after - 1, tz)
        after_offset = _offset_at(after, tz)
        low = np.where(skipped, plain - before_offset, low)
        high = np.where(skipped, plain - after_offset, high)
    return low, high


def _offset_at(instants: Any, tz: Any) -> Any:
    """The UTC offset, in ns, of *tz* at each instant."""
    import pandas as pd

    aware = pd.DatetimeIndex(pd.to_datetime(instants, unit="ns", utc=True)).tz_convert(tz)
    return aware.tz_localize(None).asi8 - aware.tz_convert(None).asi8


def _give_wall(column: _Column, wall: Any, fold: Any) -> Any:
    """A result given as wall times, in *column*'s kind and zone (fold 0 where *fold* is
    None, else each row's)."""
    import numpy as np

    if column.tz is None:
        if column.kind == "polars":
            import polars as pl

            return pl.Series(column.original.name, wall)
        return column.give(wall, like=getattr(column.original, "name", None))
    earliest, latest = _candidates(wall, column.tz)
    instants = earliest if fold is None else np.where(fold, latest, earliest)
    import pandas as pd

    unit = _unit(column.wall)  # pandas and polars zoned columns: s, ms, us or ns
    index: Any = pd.DatetimeIndex(pd.to_datetime(instants, unit="ns", utc=True))
    index = index.tz_convert(column.tz).as_unit(unit)
    if column.kind == "polars":
        import polars as pl

        utc = index.tz_convert(None).to_numpy()
        series = pl.Series(column.original.name, utc).dt.replace_time_zone("UTC")
        return series.dt.convert_time_zone(str(column.tz)).dt.cast_time_unit(unit)
    name = getattr(column.original, "name", None)
    if column.kind == "pandas-series":
        return pd.Series(index, index=column.original.index, name=name)
    return index.rename(name)
