"""devutils.dates on columns (devutils.datecolumns): numpy, pandas, polars, against the
scalar functions element by element."""

from __future__ import annotations

import subprocess
import sys
from datetime import date, datetime
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from devutils.datecolumns import is_column
from devutils.dates import (
    DateRangeError,
    add_months,
    count_months,
    month_end,
    month_start,
    months_between,
)

pl = pytest.importorskip("polars")

UNITS = ["D", "h", "m", "s", "ms", "us", "ns"]
ZONES = ["UTC", "America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kolkata"]
NS_PER = {"D": 86_400 * 10**9, "h": 3600 * 10**9, "m": 60 * 10**9, "s": 10**9}
NS_PER |= {"ms": 10**6, "us": 10**3, "ns": 1}
NAT = np.iinfo(np.int64).min  # NaT as an int64
LOW, HIGH = -2_208_988_800 * 10**9, 4_102_444_800 * 10**9  # 1900 .. 2100, in ns
DST_LOW, DST_HIGH = 1_698_000_000 * 10**9, 1_731_000_000 * 10**9  # 2023-10 .. 2024-11


def scalar(value: Any, unit: str) -> Any:
    """One numpy element as the scalar functions take it (None for NaT)."""
    if np.isnat(value):
        return None
    if unit == "D":
        return value.astype(date)
    if unit == "ns":
        return pd.Timestamp(value)
    return value.astype("datetime64[us]").astype(datetime)


def as_list(result: Any) -> list[Any]:
    values = result.to_list() if hasattr(result, "to_list") else list(result)
    return [None if v is None or pd.isna(v) else v for v in values]  # NaN, NaT, null


@st.composite
def columns(draw: st.DrawFn, unit: str, size: int, low: int = LOW, high: int = HIGH) -> Any:
    step = NS_PER[unit]
    values = draw(
        st.lists(st.integers(low // step, high // step) | st.none(), min_size=size, max_size=size)
    )
    return np.array(["NaT" if v is None else v for v in values], dtype=f"datetime64[{unit}]")


@st.composite
def pairs(draw: st.DrawFn) -> tuple[Any, Any, str, str]:
    size = draw(st.integers(0, 12))
    s_unit, e_unit = draw(st.sampled_from(UNITS)), draw(st.sampled_from(UNITS))
    return draw(columns(s_unit, size)), draw(columns(e_unit, size)), s_unit, e_unit


@given(pairs())
def test_numpy_columns_equal_the_scalar_functions(drawn: tuple[Any, Any, str, str]) -> None:
    starts, ends, s_unit, e_unit = drawn
    s_values = [scalar(v, s_unit) for v in starts]
    e_values = [scalar(v, e_unit) for v in ends]
    between = [
        None if s is None or e is None else months_between(s, e)
        for s, e in zip(s_values, e_values, strict=True)
    ]
    assert as_list(months_between(starts, ends)) == between
    ordered_s = np.where(starts <= ends, starts, ends) if s_unit == e_unit else starts
    ordered_e = np.where(starts <= ends, ends, starts) if s_unit == e_unit else ends
    if s_unit == e_unit:
        counts = [
            None if s is None or e is None else count_months(s, e)
            for s, e in zip(
                [scalar(v, s_unit) for v in ordered_s],
                [scalar(v, e_unit) for v in ordered_e],
                strict=True,
            )
        ]
        assert as_list(count_months(ordered_s, ordered_e)) == counts


@given(
    st.sampled_from(UNITS).flatmap(lambda u: st.tuples(st.just(u), columns(u, 8))),
    st.lists(st.integers(-2400, 2400), min_size=8, max_size=8),
)
def test_numpy_add_months_and_month_edges_equal_the_scalar_functions(
    drawn: tuple[str, Any], steps: list[int]
) -> None:
    unit, values = drawn
    if unit == "ns":  # datetime64[ns] and Timestamps hold 1677..2262 only
        steps = [step // 2 for step in steps]
    items = [scalar(v, unit) for v in values]
    added = [None if d is None else add_months(d, n) for d, n in zip(items, steps, strict=True)]
    assert [scalar(v, unit) for v in add_months(values, np.array(steps))] == added
    assert [scalar(v, unit) for v in month_start(values)] == [
        None if d is None else month_start(d) for d in items
    ]
    ends = [scalar(v, unit) for v in month_end(values)]
    for end, d in zip(ends, items, strict=True):  # the last moment in the column's unit
        if d is not None:
            expected = month_end(d)
            assert end <= expected
            assert end + pd.Timedelta(NS_PER[unit], "ns") > expected


@st.composite
def zoned(draw: st.DrawFn, size: int) -> Any:
    zone = draw(st.sampled_from(ZONES))
    values = draw(
        st.lists(st.integers(DST_LOW, DST_HIGH) | st.none(), min_size=size, max_size=size)
    )
    index = pd.to_datetime(np.array([NAT if v is None else v for v in values]), utc=True)
    return pd.Series(index).dt.tz_convert(zone)


@given(st.integers(0, 10).flatmap(lambda n: st.tuples(zoned(n), zoned(n))))
def test_zoned_pandas_columns_equal_the_scalar_functions(drawn: tuple[Any, Any]) -> None:
    starts, ends = drawn
    pairs_ = list(zip(starts, ends, strict=True))
    expected = [None if s is pd.NaT or e is pd.NaT else months_between(s, e) for s, e in pairs_]
    assert as_list(months_between(starts, ends)) == expected
    early = pd.Series(
        [min(s, e) if s is not pd.NaT and e is not pd.NaT else s for s, e in pairs_],
        dtype=starts.dtype,
    )
    late = pd.Series(
        [max(s, e) if s is not pd.NaT and e is not pd.NaT else e for s, e in pairs_],
        dtype=ends.dtype,
    )
    counts = [
        None if s is pd.NaT or e is pd.NaT else count_months(s, e)
        for s, e in zip(early, late, strict=True)
    ]
    assert as_list(count_months(early, late)) == counts
    for n in (1, -1, 13):
        assert as_list(add_months(starts, n)) == [
            None if d is pd.NaT else add_months(d, n) for d in starts
        ]
    assert as_list(month_start(starts)) == [None if d is pd.NaT else month_start(d) for d in starts]


def test_a_repeated_hour_keeps_its_fold_and_a_skipped_hour_its_offset() -> None:
    zone = "America/New_York"
    first = pd.Timestamp("2024-11-03 05:30", tz="UTC").tz_convert(zone)  # 01:30 EDT
    second = pd.Timestamp("2024-11-03 06:30", tz="UTC").tz_convert(zone)  # 01:30 EST
    skipped = pd.Timestamp("2024-02-10 02:30", tz=zone)  # + 1 month: 2024-03-10 02:30
    series = pd.Series([first, second, skipped])
    # 2019-11-03 01:30 happened twice too: each keeps its occurrence (its fold)
    assert add_months(series, -60).tolist() == [add_months(d, -60) for d in series]
    assert [d.fold for d in add_months(series, -60)[:2]] == [0, 1]
    assert add_months(series, 1).tolist() == [add_months(d, 1) for d in series]
    with pytest.raises(ValueError, match="end must not be before start, at position 0"):
        count_months(pd.Series([second]), pd.Series([first]))  # the same wall clock, earlier
    assert count_months(pd.Series([first]), pd.Series([second])).tolist() == [1]


def test_an_end_forty_minutes_later_on_a_wall_clock_set_back() -> None:
    zone = "America/New_York"
    start = pd.Timestamp("2024-11-03 05:50", tz="UTC").tz_convert(zone)  # 01:50 EDT
    end = pd.Timestamp("2024-11-03 06:30", tz="UTC").tz_convert(zone)  # 01:30 EST
    assert months_between(start, end) == 0
    assert months_between(pd.Series([start]), pd.Series([end])).tolist() == [0]
    assert months_between(pd.Series([end]), pd.Series([start])).tolist() == [0]
    assert count_months(pd.Series([start]), pd.Series([end])).tolist() == [1]


def test_pandas_results_keep_the_index_and_the_name() -> None:
    index = pd.Index(["a", "b"], name="id")
    starts = pd.Series(pd.to_datetime(["2024-01-15", "2024-02-29"]), index=index, name="d")
    ends = pd.Series(pd.to_datetime(["2024-03-05", "2025-02-28"]), index=index, name="d")
    counts = count_months(starts, ends)
    assert counts.index.equals(index)
    assert counts.name == "d"
    assert counts.tolist() == [3, 13]
    assert counts.dtype == "int64"
    assert add_months(starts, 1).index.equals(index)
    as_index = pd.DatetimeIndex(starts)
    assert list(months_between(as_index, pd.DatetimeIndex(ends))) == [1, 12]


def test_missing_values_give_missing_results() -> None:
    starts = pd.Series(pd.to_datetime(np.array(["2024-01-15", "NaT"], dtype="datetime64[ns]")))
    ends = pd.Series(pd.to_datetime(["2024-03-05", "2024-03-05"]))
    counts = count_months(starts, ends)
    assert counts.dtype == "float64"
    assert counts.isna().tolist() == [False, True]
    assert add_months(starts, 1).isna().tolist() == [False, True]
    column = pl.Series("d", [date(2024, 1, 31), None])
    assert count_months(column, pl.Series([date(2024, 3, 1)] * 2)).to_list() == [3, None]
    assert add_months(column, 1).to_list() == [date(2024, 2, 29), None]


def test_polars_columns() -> None:
    starts = pl.Series("start", [date(2024, 1, 31), date(2024, 2, 29)])
    ends = pl.Series("end", [datetime(2024, 2, 29, 9), datetime(2025, 2, 28)])
    assert months_between(starts, ends).to_list() == [1, 12]  # a date counts as midnight
    zoned_ = pl.Series("t", [datetime(2024, 3, 9, 2, 30)]).dt.replace_time_zone("Europe/Paris")
    assert add_months(zoned_, 1).to_list() == [add_months(zoned_.to_list()[0], 1)]
    assert month_end(starts).to_list() == [date(2024, 1, 31), date(2024, 2, 29)]


def test_a_scalar_on_one_side_is_used_for_every_row() -> None:
    ends = np.array(["2024-03-05", "2025-01-01"], dtype="datetime64[D]")
    assert count_months(date(2024, 1, 1), ends).tolist() == [3, 13]
    assert add_months(date(2024, 1, 31), np.array([1, 2])).tolist() == [
        date(2024, 2, 29),
        date(2024, 3, 31),
    ]


def test_a_reversed_pair_names_its_position() -> None:
    starts = np.array(["2024-01-01", "2024-05-01", "2024-09-01"], dtype="datetime64[D]")
    ends = np.array(["2024-02-01", "2024-04-01", "2024-08-01"], dtype="datetime64[D]")
    with pytest.raises(
        ValueError,
        match=r"end must not be before start, at position 1: start=2024-05-01, end=2024-04-01",
    ):
        count_months(starts, ends)


def test_bad_columns_are_refused_with_their_name() -> None:
    days = np.array(["2024-01-01"], dtype="datetime64[D]")
    with pytest.raises(TypeError, match=r"start must hold datetime64 values .* got int64"):
        count_months(np.array([1]), days)
    with pytest.raises(
        TypeError, match=r"start must hold datetimes, got a pandas column of (object|str)"
    ):
        count_months(pd.Series(["2024-01-01"]), days)
    with pytest.raises(ValueError, match="start and end must have the same length, got 1 and 2"):
        count_months(days, np.concatenate([days, days]))
    with pytest.raises(TypeError, match="cannot mix naive and aware values"):
        count_months(
            pd.Series(pd.to_datetime(["2024-01-01"])),
            pd.Series(pd.to_datetime(["2024-01-01"])).dt.tz_localize("UTC"),
        )
    with pytest.raises(TypeError, match="n must hold ints, got a column of float64"):
        add_months(days, np.array([1.0]))
    with pytest.raises(TypeError, match="end must be a date, a datetime or a column of them"):
        count_months(days, "2024-01-01")  # type: ignore[call-overload]
    with pytest.raises(
        TypeError, match=r"start must hold datetime64 values .* got datetime64\[Y\]"
    ):
        count_months(days.astype("datetime64[Y]"), days)


def test_results_outside_years_1_to_9999_are_the_modules_error() -> None:
    days = np.array(["9999-12-15", "0001-01-01"], dtype="datetime64[D]")
    with pytest.raises(
        DateRangeError, match=r"outside years 1\.\.9999 at position 0: 9999-12-15 \+ 1 months"
    ):
        add_months(days, 1)
    with pytest.raises(DateRangeError, match="at position 1"):
        add_months(days, np.array([0, -1]))
    with pytest.raises(DateRangeError):
        add_months(days, 10**30)
    nanoseconds = np.array(["2200-01-31"], dtype="datetime64[ns]")
    with pytest.raises(
        DateRangeError, match=r"outside 1677-10..2262-03, what datetime64\[ns\] holds"
    ):
        add_months(nanoseconds, 12 * 63)  # 2263: past what datetime64[ns] holds
    with pytest.raises(ValueError, match=r"outside years 1\.\.9999 at position 0"):
        count_months(np.array(["10000-01-01"], dtype="datetime64[D]"), days[:1])


def test_importing_dates_imports_no_column_library() -> None:
    code = (
        "import sys, devutils.dates, datetime as d\n"
        "devutils.dates.count_months(d.date(2024, 1, 1), d.date(2024, 2, 1))\n"
        "print(sorted({'numpy', 'pandas', 'polars'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_is_column_knows_the_column_types_only() -> None:
    days = ["2024-01-31", "2024-02-29"]
    columns = [
        np.array(days, dtype="datetime64[D]"),
        pd.Series(pd.to_datetime(days)),
        pd.DatetimeIndex(days),
        pd.Index([1, 2]),
        pl.Series(days).str.to_date(),
    ]
    assert all(is_column(column) for column in columns)
    scalars = [days, tuple(days), date(2024, 1, 31), np.datetime64("2024-01-31"), None, "x"]
    assert not any(is_column(value) for value in [*scalars, pd.Timestamp("2024-01-31")])
