"""devutils.dates on columns (devutils.datecolumns): numpy, pandas, polars, against the
scalar functions element by element."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given
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


@given(pairs(), st.sampled_from([2, 3, 7]), st.booleans())
def test_units_of_several_and_big_endian_arrays_read_as_their_values(
    drawn: tuple[Any, Any, str, str], count: int, big_endian: bool
) -> None:
    # The multiplier (datetime64[2D]) and the byte order were dropped: counts of 2-day
    # units read as days, swapped bytes read as other dates.
    starts, ends, s_unit, _ = drawn
    starts = starts.astype(f"datetime64[{count}{s_unit}]").astype(f"datetime64[{s_unit}]")
    odd = starts.astype(f"datetime64[{count}{s_unit}]")
    if big_endian:
        odd = odd.astype(odd.dtype.newbyteorder(">"))
    swapped_ends = ends.astype(ends.dtype.newbyteorder(">")) if big_endian else ends
    assert as_list(months_between(odd, swapped_ends)) == as_list(months_between(starts, ends))
    assert as_list(month_start(odd)) == as_list(month_start(starts))
    assert as_list(add_months(odd, 1)) == as_list(add_months(starts, 1))
    single = np.datetime64("2024-01-14", ("D", count))
    assert count_months(single, np.array(["2024-03-05"], dtype="datetime64[D]")).tolist() == [
        count_months(single.astype(date), date(2024, 3, 5))
    ]


def test_zones_with_the_same_name_but_other_offsets_are_not_taken_for_one() -> None:
    ahead, behind = timezone(timedelta(hours=1), "EST"), timezone(timedelta(hours=-5), "EST")
    start = datetime(2024, 1, 31, 23, 30, tzinfo=ahead)
    end = datetime(2024, 1, 31, 20, 0, tzinfo=behind)  # Feb 1, 02:00 on the start's clock
    assert count_months(start, end) == 2
    assert count_months(pd.Series([start]), end).tolist() == [2]
    assert count_months(pd.Series([start]), pd.Series([end])).tolist() == [2]


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


@pytest.mark.parametrize(
    "dtype",
    ["date32[pyarrow]", "timestamp[s][pyarrow]", "timestamp[ns, tz=Europe/Berlin][pyarrow]"],
)
def test_arrow_backed_pandas_columns_come_back_in_their_own_dtype(dtype: str) -> None:
    pytest.importorskip("pyarrow")
    stamps: Any = pd.Series(pd.to_datetime(np.array(["2024-01-31", "NaT"], dtype="datetime64[s]")))
    if "tz=" in dtype:
        stamps = stamps.dt.tz_localize("Europe/Berlin")
    column = stamps.astype(dtype)
    for result, first in (
        (add_months(column, 1), add_months(column[0], 1)),
        (month_start(column), month_start(column[0])),
        (month_end(column), month_end(column[0])),
        (add_months(pd.Index(column), 1), add_months(column[0], 1)),
    ):
        assert result.dtype == column.dtype  # (they came back as numpy datetime64)
        assert (result[0], pd.isna(result[1])) == (first, True)


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
    for nullable in (pd.Series([None], dtype="Int64"), pl.Series([None], dtype=pl.Int64)):
        with pytest.raises(
            TypeError, match=r"^n must hold ints, got a column of Int64 with nulls$"
        ):
            add_months(days, nullable)  # (it was named float64, numpy's view of it)
    with pytest.raises(TypeError, match="end must be a date, a datetime or a column of them"):
        count_months(days, "2024-01-01")  # type: ignore[call-overload]
    with pytest.raises(
        TypeError, match=r"start must hold datetime64 values .* got datetime64\[Y\]"
    ):
        count_months(days.astype("datetime64[Y]"), days)


def test_an_n_of_two_dimensions_or_a_frame_is_named_for_what_it_is() -> None:
    days = np.array(["2024-01-31", "2024-03-31"], dtype="datetime64[D]")
    # (both were "n must hold ints, got a column of int64", of ints)
    with pytest.raises(ValueError, match=r"^n must be one-dimensional, got shape \(2, 1\)$"):
        add_months(days, np.array([[1], [2]]))
    for frame, library in (
        (pd.DataFrame({"n": [1, 2]}), "pandas"),
        (pl.DataFrame({"n": [1, 2]}), "polars"),
    ):
        with pytest.raises(
            TypeError, match=f"^n must be .*, got a {library} DataFrame: give one column$"
        ):
            add_months(days, frame)  # type: ignore[arg-type]


def test_a_zoned_column_s_result_in_year_10000_in_utc_is_a_range_error() -> None:
    # 9999-12-31 20:00 in New York is 10000-01-01 in UTC: a pandas column cannot hold it
    # (it was "d's time zone ... failed")
    late = pd.DatetimeIndex(["9999-10-31 20:00"]).as_unit("us").tz_localize("America/New_York")
    with pytest.raises(DateRangeError, match="in year 10000 in UTC"):
        add_months(pd.Series(late), 2)
    assert add_months(pd.Series(late), 1)[0] == add_months(late[0], 1)


def test_a_dateutil_fixed_offset_beside_a_polars_n() -> None:
    dateutil_tz = pytest.importorskip("dateutil.tz")
    for zone, name in ((dateutil_tz.UTC, "UTC"), (dateutil_tz.tzoffset(None, 3600), "Etc/GMT-1")):
        start = datetime(2024, 1, 31, 12, tzinfo=zone)
        moved = add_months(start, pl.Series([1, 2]))  # ("unable to parse time zone: 'tzutc()'")
        assert moved.dtype.time_zone == name
        assert moved.to_list() == [add_months(start, 1), add_months(start, 2)]


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
        DateRangeError,
        match=r"outside 1677-09-21T00:12:43\.145224193\.\.2262-04-11T23:47:16\.854775807, "
        r"what datetime64\[ns\] holds at position 0",
    ):
        add_months(nanoseconds, 12 * 63)  # 2263: past what datetime64[ns] holds
    with pytest.raises(ValueError, match=r"outside years 1\.\.9999 at position 0"):
        count_months(np.array(["10000-01-01"], dtype="datetime64[D]"), days[:1])


def _ns(*values: str) -> Any:
    return np.array(values, dtype="datetime64[ns]")


def test_datetime64_ns_holds_its_first_and_last_months_to_the_nanosecond() -> None:
    first, last = _ns("1677-09-21T00:12:43.145224193"), _ns("2262-04-11T23:47:16.854775807")
    edges = _ns("2262-04-05", "1677-09-25")
    assert np.array_equal(add_months(edges, 0), edges)
    assert np.array_equal(add_months(_ns("2262-03-11T23:47:16.854775807"), 1), last)
    assert np.array_equal(add_months(_ns("1677-10-21T00:12:43.145224193"), -1), first)
    assert np.array_equal(month_end(_ns("2262-03-10")), _ns("2262-03-31T23:59:59.999999999"))
    assert np.array_equal(month_start(_ns("1677-10-22T08:00")), _ns("1677-10-01"))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: add_months(_ns("2262-03-12"), 1), "add_months is outside .* 2262-03-12"),
        (lambda: add_months(_ns("1677-10-21"), -1), "add_months is outside .* 1677-10-21"),
        (lambda: month_end(_ns("2024-01-01", "2262-04-10")), "month_end .* position 1: 2262-04-10"),
        (lambda: month_start(_ns("1677-09-22")), "month_start .* position 0: 1677-09-22"),
        (lambda: month_end(pd.Series(_ns("2262-04-10"))), "month_end .* 2262-04-10"),
        (lambda: month_end(pl.Series(_ns("2262-04-10"))), "month_end .* 2262-04-10"),
    ],
)
def test_a_result_past_what_datetime64_ns_holds_is_a_range_error(call: Any, message: str) -> None:
    # It wrapped around to the other end of the range (month_end in April 2262 gave 1677).
    with pytest.raises(DateRangeError, match=message):
        call()


NS_EDGE = 40 * NS_PER["D"]
NS_VALUES = (
    st.integers(-(2**63) + 1, -(2**63) + NS_EDGE)
    | st.integers(2**63 - 1 - NS_EDGE, 2**63 - 1)
    | st.integers(-(2**63) + 1, 2**63 - 1)
)


@given(value=NS_VALUES, n=st.integers(-3, 3))
def test_datetime64_ns_columns_equal_nanosecond_timestamps_to_the_ends_of_the_range(
    value: int, n: int
) -> None:
    column = np.array([value], dtype=np.int64).view("datetime64[ns]")
    stamp = pd.Timestamp(value, unit="ns")
    for function, args in ((add_months, (n,)), (month_start, ()), (month_end, ())):
        try:
            expected = function(stamp, *args)
        except DateRangeError:
            with pytest.raises(DateRangeError):
                function(column, *args)
            continue
        assert function(column, *args)[0] == expected.to_datetime64(), function.__name__


def test_zoned_columns_hold_what_their_unit_holds() -> None:
    # Zoned columns in microseconds (pandas' default unit from 3.0) past the ranges of
    # datetime64[ns]; their instants were taken in ns, and wrapped around.
    naive = np.array(["2262-03-20", "3000-01-31T10:00", "1000-05-31"], dtype="datetime64[us]")
    utc = pd.Series(naive).dt.tz_localize("UTC")
    for column in (utc, utc.dt.tz_convert("America/New_York"), utc.dt.as_unit("s")):
        later = column + pd.Timedelta(days=400)
        assert as_list(add_months(column, 1)) == [add_months(v, 1) for v in column]
        assert as_list(month_start(column)) == [month_start(v) for v in column]
        assert as_list(month_end(column)) == [month_end(v) for v in column]
        pairs = list(zip(column, later, strict=True))
        assert as_list(count_months(column, later)) == [count_months(*p) for p in pairs]
        assert as_list(months_between(column, later)) == [months_between(*p) for p in pairs]
        assert add_months(column, 1).dtype == column.dtype
    assert add_months(utc, 1)[0] == pd.Timestamp("2262-04-20", tz="UTC")
    assert month_end(utc)[1] == pd.Timestamp("3000-01-31 23:59:59.999999", tz="UTC")
    zoned = pl.Series([datetime(3000, 1, 31, 10)]).dt.replace_time_zone("Asia/Tokyo")
    assert add_months(zoned, 1).to_list() == [
        datetime(3000, 2, 28, 10, tzinfo=ZoneInfo("Asia/Tokyo"))
    ]
    # A zoned pair in two units is compared in the finer; one that unit cannot hold is named.
    assert as_list(count_months(utc.dt.as_unit("ms"), utc + pd.Timedelta(days=400))) == [14, 15, 15]
    nanoseconds = pd.Series(_ns("2262-04-01", "2262-04-01", "2262-04-01")).dt.tz_localize("UTC")
    with pytest.raises(
        ValueError, match=r"start is outside what datetime64\[ns\] holds at position 1"
    ):
        count_months(utc, nanoseconds)


def test_a_zero_dimensional_array_of_n_is_an_int() -> None:
    days = np.array(["2024-01-31"], dtype="datetime64[D]")
    assert add_months(date(2024, 1, 31), np.array(1)) == date(2024, 2, 29)
    assert np.array_equal(add_months(days, np.array(1)), np.array(["2024-02-29"], dtype="M8[D]"))
    with pytest.raises(TypeError, match="n must be an int"):
        add_months(date(2024, 1, 31), np.array(1.0))
    for not_an_int in (np.array(1.5), np.array(True)):  # (a column took int(n): 1)
        with pytest.raises(TypeError, match="n must be an int or a column of ints"):
            add_months(days, not_an_int)


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


# -- a single value beside a column ----------------------------------------------------------


def test_a_timestamp_or_nat_beside_a_pandas_column() -> None:
    starts = pd.Series(pd.to_datetime(["2024-01-31"]), index=["ann"], name="start")
    counts = count_months(starts, pd.Timestamp("2024-06-01"))
    assert isinstance(counts, pd.Series)
    assert (counts.tolist(), counts.index.tolist(), counts.name) == ([6], ["ann"], "start")
    missing = count_months(starts, pd.NaT)
    assert missing.dtype == "float64"
    assert missing.isna().tolist() == [True]
    assert months_between(pd.NaT, starts).isna().tolist() == [True]
    assert months_between(np.datetime64("NaT"), starts).isna().tolist() == [True]
    aware = starts.dt.tz_localize("America/New_York")
    assert count_months(aware, pd.NaT).isna().tolist() == [True]  # NaT fits beside a zone too


def test_a_timestamp_moved_by_a_column_of_n() -> None:
    moved = add_months(pd.Timestamp("2024-01-31"), np.array([1, 2]))
    assert moved.tolist() == [datetime(2024, 2, 29), datetime(2024, 3, 31)]
    assert add_months(pd.NaT, np.array([1, 2])).tolist() == [None, None]  # NaT, as rows give
    by_series = add_months(date(2024, 1, 31), pd.Series([1, 2], index=[7, 8]))
    assert by_series.index.tolist() == [7, 8]
    assert by_series.tolist() == [pd.Timestamp("2024-02-29"), pd.Timestamp("2024-03-31")]
    by_polars = add_months(date(2024, 1, 31), pl.Series("n", [1, 2]))
    assert by_polars.to_list() == [date(2024, 2, 29), date(2024, 3, 31)]


def test_an_aware_value_moved_by_columns_of_n() -> None:
    paris = datetime(2024, 3, 31, 2, 30, tzinfo=ZoneInfo("Europe/Paris"))  # skipped on 3-31
    expected = [add_months(paris, k) for k in (-1, 12)]
    as_objects = add_months(paris, np.array([-1, 12]))  # numpy holds no zones: objects
    assert as_objects.dtype == object
    assert as_objects.tolist() == expected
    assert add_months(paris, pd.Series([-1, 12])).tolist() == expected
    assert add_months(paris, pl.Series([-1, 12])).to_list() == expected
    india = datetime(2024, 1, 31, tzinfo=timezone(timedelta(hours=5, minutes=30)))
    with pytest.raises(ValueError, match=r"^d's time zone .* failed"):  # polars: whole hours
        add_months(india, pl.Series([1]))
    # +05:00:30 was floored to +05:00, which polars takes: a wall clock 30 s off, silently
    seconds = datetime(2024, 1, 31, tzinfo=timezone(timedelta(hours=5, seconds=30)))
    with pytest.raises(ValueError, match=r"^d's time zone .* failed"):
        add_months(seconds, pl.Series([1]))


def _polars_zoned(zone: str, utc: datetime, unit: str = "us") -> Any:
    return pl.Series("t", [utc], dtype=pl.Datetime(unit, "UTC")).dt.convert_time_zone(zone)


@pytest.mark.parametrize(
    ("zone", "start", "end"),
    [
        # polars' zone rules hold no DST after 2099, and differ from the tz database before
        # 1970 in some zones (Amsterdam's +00:19:32): its wall clock was read by those
        ("America/New_York", datetime(2100, 7, 1, 4, 30), datetime(2100, 8, 1, 3)),
        ("Europe/Amsterdam", datetime(1935, 7, 1, 12), datetime(1935, 9, 1, 11)),
    ],
)
def test_a_zoned_polars_column_is_read_by_the_zone_rules_the_scalars_use(
    zone: str, start: datetime, end: datetime
) -> None:
    # Compared as instants: polars' to_list() shows its own wall clock under a ZoneInfo.
    def instants(column: Any) -> list[datetime]:
        return list(column.dt.convert_time_zone("UTC").to_list())

    starts, ends = _polars_zoned(zone, start), _polars_zoned(zone, end)
    first = start.replace(tzinfo=UTC).astimezone(ZoneInfo(zone))
    last = end.replace(tzinfo=UTC).astimezone(ZoneInfo(zone))
    assert instants(add_months(starts, 0)) == [first]  # (moved an hour, or 19 min 32 s)
    assert instants(add_months(starts, 1)) == [add_months(first, 1)]
    assert instants(month_start(starts)) == [month_start(first)]
    assert instants(month_end(starts)) == [month_end(first)]
    assert count_months(starts, ends).to_list() == [count_months(first, last)]
    assert months_between(starts, ends).to_list() == [months_between(first, last)]


def test_a_zoned_polars_ns_column_past_its_wall_clock_is_refused() -> None:
    # 2262-04-12 05:00 in Tokyo is past datetime64[ns]: polars wrapped it to 1677
    late = _polars_zoned("Asia/Tokyo", datetime(2262, 4, 11, 20), "ns")
    with pytest.raises(ValueError, match=r"^d is outside what datetime64\[ns\] holds on its wall"):
        month_end(late)
    early = _polars_zoned("America/New_York", datetime(1677, 9, 21, 1), "ns")
    with pytest.raises(ValueError, match=r"^d is outside what datetime64\[ns\] holds on its wall"):
        month_start(early)


def test_a_numpy_datetime64_beside_a_column() -> None:
    ends = pl.Series("end", [date(2024, 3, 5), date(2025, 1, 1)])
    assert count_months(np.datetime64("2024-01-01"), ends).to_list() == [3, 13]
    assert months_between(np.datetime64("2024-01-31T10:00", "m"), ends).to_list() == [1, 11]
    with pytest.raises(
        TypeError, match=r"start must be a datetime64 in units D, .* got datetime64\[M\]"
    ):
        count_months(np.datetime64("2024-01", "M"), ends)
    with pytest.raises(ValueError, match=r"^start is outside years 1\.\.9999: 10000-01-01$"):
        count_months(np.datetime64("10000-01-01"), ends)


@pytest.mark.parametrize(
    "bad",
    [
        pd.DataFrame({"d": pd.to_datetime(["2024-01-31"])}),
        pl.DataFrame({"d": [date(2024, 1, 31)]}),
        [date(2024, 1, 31)],
        "2024-01-31",
        None,
        20240131,
    ],
    ids=lambda bad: type(bad).__name__,
)
def test_anything_else_beside_a_column_is_a_type_error(bad: object) -> None:
    column = pd.Series(pd.to_datetime(["2024-03-05"]))
    kind = type(bad).__name__
    with pytest.raises(TypeError, match=rf"^start must be a date, .* got {kind}\b"):
        count_months(bad, column)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match=rf"^end must be a date, .* got {kind}\b"):
        months_between(column, bad)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match=rf"^d must be a date, .* got {kind}\b"):
        add_months(bad, np.array([1]))  # type: ignore[call-overload]


class Raising(tzinfo):
    def utcoffset(self, dt: datetime | None) -> timedelta:
        raise RuntimeError("no offsets today")

    def dst(self, dt: datetime | None) -> timedelta:
        return timedelta(0)

    def tzname(self, dt: datetime | None) -> str:
        return "Raising"


class Fixed(Raising):  # utcoffset(None) is None, which pandas cannot convert with
    def utcoffset(self, dt: datetime | None) -> timedelta:
        return None if dt is None else timedelta(hours=1)  # type: ignore[return-value]


def test_a_misbehaving_zone_beside_a_column_is_named() -> None:
    column = pd.Series([pd.Timestamp("2024-03-01", tz="America/New_York")])
    with pytest.raises(ValueError, match=r"^start's time zone .* no offsets today"):
        count_months(datetime(2024, 1, 31, tzinfo=Raising()), column)
    with pytest.raises(ValueError, match=r"^end's time zone"):
        months_between(column, datetime(2024, 1, 31, tzinfo=Raising()))
    with pytest.raises(ValueError, match=r"^start's time zone"):
        months_between(datetime(2024, 1, 31, tzinfo=Fixed()), column)
    with pytest.raises(ValueError, match=r"^d's time zone"):
        add_months(datetime(2024, 1, 31, tzinfo=Fixed()), np.array([1]))


def test_zoned_columns_decide_the_last_month_by_instants() -> None:
    start = pd.Series([pd.Timestamp("2024-10-03 01:30", tz="America/New_York")])
    ends = pd.Series(pd.to_datetime(["2024-11-03 06:10", "2024-11-03 05:10"], utc=True))
    expected = [1, 0]  # 01:10 EST is 40 minutes past 01:30 EDT plus a month; 01:10 EDT is not
    assert months_between(start.repeat(2).reset_index(drop=True), ends).tolist() == expected
    assert months_between(start[0], ends).tolist() == expected
    in_new_york = pl.from_pandas(ends.dt.tz_convert("America/New_York"))
    assert months_between(start[0].to_pydatetime(), in_new_york).to_list() == expected


# -- the property: a single value beside a column, row by row ------------------------------------

SINGLE_LOW, SINGLE_HIGH = LOW // 1000, HIGH // 1000  # microseconds: 1900 .. 2100


def rows_of(column: Any) -> list[Any]:
    """The column's values as the scalar functions take them (None where missing)."""
    if isinstance(column, np.ndarray):
        return [scalar(v, np.datetime_data(column.dtype)[0]) for v in column]
    values = column.to_list() if isinstance(column, pl.Series) else list(column)
    return [None if v is None or v is pd.NaT else v for v in values]


@st.composite
def naive_columns(draw: st.DrawFn, size: int) -> Any:
    library = draw(st.sampled_from(["numpy", "pandas", "polars"]))
    unit = draw(
        st.sampled_from({"numpy": UNITS, "pandas": UNITS[3:], "polars": ["D", "ms", "us"]}[library])
    )
    values = draw(columns(unit, size))
    if library == "pandas":
        return pd.Series(values, index=[f"r{i}" for i in range(size)])
    return pl.Series("rows", values) if library == "polars" else values


MINUTE = 60 * 10**9


@st.composite
def zoned_columns(draw: st.DrawFn, size: int) -> Any:
    """A pandas or polars column in a zone, in whole minutes (so ties with a single value)."""
    zone = draw(st.sampled_from(ZONES))
    minutes = st.integers(DST_LOW // MINUTE, DST_HIGH // MINUTE) | st.none()
    values = draw(st.lists(minutes, min_size=size, max_size=size))
    utc = pd.to_datetime(np.array([NAT if v is None else v * MINUTE for v in values]), utc=True)
    series = pd.Series(utc, index=[f"r{i}" for i in range(size)]).dt.tz_convert(zone)
    return pl.from_pandas(series) if draw(st.booleans()) else series


@st.composite
def naive_singles(draw: st.DrawFn) -> tuple[Any, Any]:
    """A single naive value and the scalar the scalar functions take for it (None: NaT)."""
    if draw(st.integers(0, 5)) == 0:
        return draw(
            st.sampled_from([pd.NaT, np.datetime64("NaT"), np.datetime64("NaT", "D")])
        ), None
    micros = draw(st.integers(SINGLE_LOW, SINGLE_HIGH))
    stamp = pd.Timestamp(micros, unit="us")
    kind = draw(st.sampled_from(["date", "datetime", "Timestamp", "datetime64"]))
    if kind == "datetime64":
        unit = draw(st.sampled_from(UNITS))
        value = np.array([micros * 1000 // NS_PER[unit]], dtype=f"datetime64[{unit}]")[0]
        return value, scalar(value, unit)
    value = {"date": stamp.date(), "datetime": stamp.to_pydatetime(), "Timestamp": stamp}[kind]
    return value, value


FIXED_OFFSETS = [timezone(timedelta(hours=h)) for h in (-10, 0, 5, 14)]


@st.composite
def aware_singles(draw: st.DrawFn) -> tuple[Any, Any]:
    """A single aware value, within the zoned columns' range, in a zone or at a whole-hour
    offset, with either fold (a fold-1 value keeps it through add_months)."""
    if draw(st.integers(0, 5)) == 0:
        nat = draw(st.sampled_from([pd.NaT, np.datetime64("NaT")]))
        return nat, None
    minutes = draw(st.integers(DST_LOW // 60 // 10**9, DST_HIGH // 60 // 10**9))
    zone = draw(st.sampled_from([*map(ZoneInfo, ZONES), *FIXED_OFFSETS]))
    value = datetime.fromtimestamp(minutes * 60, zone)
    if draw(st.booleans()):
        value = value.replace(fold=1)
    return (pd.Timestamp(value) if draw(st.booleans()) else value), value


def moments(values: list[Any]) -> list[Any]:
    """Values as comparable moments: a Timestamp and its UTC offset (None where missing)."""
    out: list[Any] = []
    for value in values:
        if value is None or pd.isna(value):
            out.append(None)
        else:
            stamp = pd.Timestamp(value)
            out.append((stamp, stamp.utcoffset()))
    return out


def expected_rows(function: Any, single: Any, rows: list[Any], single_first: bool) -> Any:
    """*function* applied row by row, None where either is missing; or the position of the
    first row whose pair it refuses (a reversed range)."""
    results: list[Any] = []
    for position, row in enumerate(rows):
        if single is None or row is None:
            results.append(None)
            continue
        try:
            results.append(function(single, row) if single_first else function(row, single))
        except ValueError:
            return position
    return results


def same_kind(result: Any, column: Any) -> bool:
    if isinstance(column, pd.Series):
        return isinstance(result, pd.Series) and result.index.equals(column.index)
    return type(result) is type(column) and len(result) == len(column)


@st.composite
def singles_beside_columns(draw: st.DrawFn) -> tuple[Any, Any, Any]:
    """A column (naive or zoned) and a single value that fits beside it, with the scalar
    the scalar functions take for that value (None: NaT)."""
    size = draw(st.integers(0, 4))
    if draw(st.booleans()):
        return (draw(zoned_columns(size)), *draw(aware_singles()))
    return (draw(naive_columns(size)), *draw(naive_singles()))


@given(
    drawn=singles_beside_columns(),
    single_first=st.booleans(),
    function=st.sampled_from([count_months, months_between]),
)
def test_a_single_value_beside_a_column_equals_the_scalar_function_row_by_row(
    drawn: tuple[Any, Any, Any], single_first: bool, function: Any
) -> None:
    column, single, as_scalar = drawn
    args = (single, column) if single_first else (column, single)
    expected = expected_rows(function, as_scalar, rows_of(column), single_first)
    if isinstance(expected, int):
        with pytest.raises(
            ValueError, match=f"end must not be before start, at position {expected}"
        ):
            function(*args)
        return
    result = function(*args)
    assert same_kind(result, column)
    assert as_list(result) == expected


@given(
    single=st.one_of(naive_singles(), aware_singles()),
    steps=st.lists(st.integers(-600, 600), max_size=4),
    library=st.sampled_from(["numpy", "pandas", "polars"]),
)
@example(  # polars holds no datetime64[h]: the result is in ms
    single=(np.datetime64("1970-01-01T00", "h"), datetime(1970, 1, 1)), steps=[], library="polars"
)
def test_a_single_value_moved_by_a_column_of_n_equals_add_months_row_by_row(
    single: tuple[Any, Any], steps: list[int], library: str
) -> None:
    value, as_scalar = single
    n = {
        "numpy": np.array(steps, dtype=np.int64),
        "pandas": pd.Series(steps, index=[f"r{i}" for i in range(len(steps))], dtype=np.int64),
        "polars": pl.Series("n", steps, dtype=pl.Int64),
    }[library]
    result = add_months(value, n)
    assert same_kind(result, n)
    values = result.to_list() if library == "polars" else list(result)
    expected = [None if as_scalar is None else add_months(as_scalar, k) for k in steps]
    assert moments(values) == moments(expected)


CHANGES_2024 = {  # when each zone's UTC offset changed in 2024
    "America/New_York": ["2024-03-10 07:00", "2024-11-03 06:00"],
    "Europe/London": ["2024-03-31 01:00", "2024-10-27 01:00"],
    "Australia/Lord_Howe": ["2024-04-06 15:00", "2024-10-05 15:30"],  # 30 minutes
    "Pacific/Chatham": ["2024-04-06 14:00", "2024-09-28 14:00"],
}


@st.composite
def pairs_around_changes(draw: st.DrawFn) -> tuple[Any, Any]:
    """Zoned start and end columns: each start a few months (either way) from a wall clock
    within 90 minutes of a DST change of its zone, each end within 90 minutes of it too,
    in the start's zone or UTC."""
    name = draw(st.sampled_from(sorted(CHANGES_2024)))
    zone = ZoneInfo(name)
    size = draw(st.integers(1, 4))
    starts, ends = [], []
    for _ in range(size):
        change = pd.Timestamp(draw(st.sampled_from(CHANGES_2024[name])), tz="UTC")
        near = (change + pd.Timedelta(minutes=draw(st.integers(-90, 90)))).tz_convert(zone)
        wall = add_months(near.to_pydatetime().replace(tzinfo=None), draw(st.integers(-3, 3)))
        starts.append(pd.Timestamp(wall.replace(tzinfo=zone, fold=draw(st.integers(0, 1)))))
        ends.append(change + pd.Timedelta(minutes=draw(st.integers(-90, 90))))
    end_column = pd.Series(ends)
    if draw(st.booleans()):
        end_column = end_column.dt.tz_convert(zone)
    return pd.Series(starts), end_column


@given(pairs_around_changes(), st.booleans())
def test_zoned_columns_decide_months_as_the_scalar_function_does(
    pair: tuple[Any, Any], polars: bool
) -> None:
    starts, ends = pair
    expected = [months_between(s, e) for s, e in zip(starts, ends, strict=True)]
    if polars:
        starts, ends = pl.from_pandas(starts), pl.from_pandas(ends)
    assert as_list(months_between(starts, ends)) == expected
    assert as_list(months_between(ends, starts)) == [
        months_between(e, s) for s, e in zip(*pair, strict=True)
    ]


def test_a_zoned_result_past_what_ns_holds_is_named_as_a_result() -> None:
    # 2262-04-11 23:00 in Bogota (UTC-5) is past the last nanosecond in UTC: the message
    # said "d in its time zone", where d was in range.
    d = pd.Series(_ns("2262-03-11T23:00")).dt.tz_localize("America/Bogota")
    with pytest.raises(DateRangeError, match="a result in d's time zone is outside"):
        add_months(d, 1)
    # ...and it named no row, where a naive column's names the first.
    d = pd.Series(_ns("2000-01-01", "2262-04-11T10:00", "2262-03-11T20:00"))
    with pytest.raises(
        DateRangeError,
        match=r"holds at position 2: 2262-04-11T20:00:00\.000000000$",
    ):
        add_months(d.dt.tz_localize("America/New_York"), np.array([0, -1, 1]))


def test_a_zoned_value_whose_wall_clock_is_past_ns_is_named() -> None:
    # 2262-04-11 20:00 UTC is 2262-04-12 10:00 at UTC+14, past datetime64[ns]: pandas'
    # OutOfBoundsDatetime came through, naming no argument.
    utc = pd.Series(_ns("2262-04-11T20:00")).dt.tz_localize("UTC")
    with pytest.raises(ValueError, match="start is outside what datetime64") as info:
        count_months(utc.dt.tz_convert("Etc/GMT-14"), utc)
    assert not isinstance(info.value, pd.errors.OutOfBoundsDatetime)


ODD_GAPS = {  # wall clocks a change skips, and for how long: not an hour, or not on the hour
    "Australia/Lord_Howe": ("2024-10-06 02:00", 30),
    "Asia/Kathmandu": ("1986-01-01 00:00", 15),
    "Pacific/Kiritimati": ("1979-10-01 00:00", 40),
    "America/St_Johns": ("2010-03-14 00:01", 60),
    "Pacific/Apia": ("2011-12-30 00:00", 24 * 60),
}


@given(
    st.sampled_from(sorted(ODD_GAPS)),
    st.floats(0, 1, exclude_max=True),
    st.sampled_from([-2, -1, 1, 2]),
    st.booleans(),
)
def test_a_result_in_a_gap_of_any_length_is_the_scalar_functions(
    name: str, into: float, n: int, polars: bool
) -> None:
    # pandas' shift_forward moves a skipped time by an hour, whatever the gap: a 30-minute
    # gap gave an instant 30 minutes off, Kathmandu's 15 minutes the month before.
    zone = ZoneInfo(name)
    first, minutes = ODD_GAPS[name]
    skipped = datetime.fromisoformat(first) + timedelta(minutes=int(into * minutes))
    start = pd.Timestamp(add_months(skipped, -n).replace(tzinfo=zone))
    column = pd.Series([start, pd.NaT, start])  # a NaT beside one raised OutOfBoundsDatetime
    expected = add_months(start, n)
    if polars:
        column = pl.from_pandas(column)
    moved = as_list(add_months(column, n))
    assert instants(moved) == instants([expected, None, expected])
    after = pd.Timestamp(skipped.replace(tzinfo=zone)) + pd.Timedelta(hours=1)
    first_of = as_list(month_start(pd.Series([after])))
    assert instants(first_of) == instants([month_start(after)])
    assert first_of[0] <= after  # never the month before


def instants(values: list[Any]) -> list[Any]:
    """Values as instants (UTC), None where missing: a time in a gap is shown at the
    offset before it by the scalar functions (zoneinfo's rule) and after it by a column,
    which holds only wall times that exist."""
    return [None if v is None or pd.isna(v) else pd.Timestamp(v).tz_convert("UTC") for v in values]


def test_zoned_ns_columns_centuries_apart_equal_the_scalar_functions() -> None:
    # The instants were subtracted: 300 years of nanoseconds overflow int64.
    starts = pd.Series(pd.DatetimeIndex(["1700-01-01", "2261-12-31"]).as_unit("ns"))
    ends = pd.Series(pd.DatetimeIndex(["2000-01-01", "1677-09-22"]).as_unit("ns"))
    starts, ends = starts.dt.tz_localize("UTC"), ends.dt.tz_localize("Asia/Tokyo")
    expected = [months_between(s, e) for s, e in zip(starts, ends, strict=True)]
    assert as_list(months_between(starts, ends)) == expected
    assert as_list(months_between(pl.from_pandas(starts), pl.from_pandas(ends))) == expected
    assert as_list(count_months(starts[:1], ends[:1])) == [count_months(starts[0], ends[0])]


def test_an_n_column_with_labels_is_read_by_position() -> None:
    # n[where] read a label: a KeyError, or another row's n in the message.
    d = pd.Series(pd.to_datetime(["2024-01-31", "2024-03-15"]), index=[10, 20])
    with pytest.raises(DateRangeError, match=r"at position 1: .* \+ 1000000 months"):
        add_months(d, pd.Series([1, 10**6], index=[10, 20]))
    with pytest.raises(DateRangeError, match=r"at position 1: .* \+ 1000000 months"):
        add_months(d, np.array([1, 10**6]))


@pytest.mark.parametrize(
    ("call", "names"),
    [
        (months_between, "start and end"),
        (count_months, "start and end"),
        (lambda s, e: add_months(s, pd.Series([1, 2], index=e.index)), "d and n"),
    ],
)
def test_two_series_with_different_indexes_are_refused(call: Any, names: str) -> None:
    # Paired by position, ann's start met bob's end: months_between gave {ann: 11, bob: -4}.
    starts = pd.Series(pd.to_datetime(["2024-01-01", "2024-06-01"]), index=["ann", "bob"])
    ends = pd.Series(pd.to_datetime(["2024-12-01", "2024-02-01"]), index=["bob", "ann"])
    with pytest.raises(ValueError, match=f"^{names} must have the same index: .* align them"):
        call(starts, ends)
    aligned = months_between(*starts.align(ends))
    assert aligned.to_dict() == {"ann": 1, "bob": 6}
    assert months_between(starts, ends.to_numpy()).to_dict() == {"ann": 11, "bob": -4}


@pytest.mark.parametrize("n", [{1, 2}, {1: 2}, b"\x01\x02", frozenset([1])])
def test_an_n_that_is_no_column_is_a_type_error(n: Any) -> None:
    # a set, a dict and bytes said "n must be one-dimensional, got shape ()"
    with pytest.raises(TypeError, match=r"^n must be an int or a column of ints, got "):
        add_months(np.array(["2024-01-31"], dtype="datetime64[D]"), n)


def test_a_list_of_n_past_int64_is_outside_the_years_as_one_n_is() -> None:
    # numpy holds 10**30 as an object: "n must hold ints, got a column of object"
    column = np.array(["2024-01-31", "2024-03-31"], dtype="datetime64[D]")
    with pytest.raises(DateRangeError, match=r"at position 0: 2024-01-31 \+ 10{30} months"):
        add_months(column, np.array([10**30, 1], dtype=object))
    with pytest.raises(DateRangeError, match=r"at position 1: 2024-03-31 \+ -10{30} months"):
        add_months(column, np.array([1, -(10**30)], dtype=object))
    with pytest.raises(DateRangeError):
        add_months(column, 10**30)


def test_an_empty_n_is_a_column_of_no_steps() -> None:
    # [] is float64 to numpy: "n must hold ints", beside an empty column or one of one row
    empty, no_steps = np.array([], dtype="datetime64[D]"), np.array([])
    assert no_steps.dtype == np.float64
    assert add_months(empty, no_steps).dtype == empty.dtype
    assert len(add_months(empty, no_steps)) == 0
    with pytest.raises(ValueError, match=r"^d and n must have the same length, got 1 and 0"):
        add_months(np.array(["2024-01-31"], dtype="datetime64[D]"), no_steps)


# -- properties added for the standard ---

_DAYS = st.lists(st.dates(date(1900, 1, 1), date(2100, 12, 31)), max_size=4)
_COLUMN_VALUES = st.one_of(
    _DAYS.map(lambda days: np.array(days, dtype="datetime64[D]")),
    st.lists(st.integers(-5, 5), max_size=4).map(lambda values: np.array(values, dtype=np.int64)),
    st.integers(-5, 5).map(np.array),  # (a 0-d array is an ndarray too)
    _DAYS.map(lambda days: pd.Series(pd.to_datetime(days), dtype="datetime64[ns]")),
    _DAYS.map(lambda days: pd.DatetimeIndex(days, dtype="datetime64[ns]")),
    st.lists(st.integers(-5, 5), max_size=4).map(lambda values: pd.Index(values, dtype="int64")),
    _DAYS.map(lambda days: pl.Series(days, dtype=pl.Date)),
    st.lists(st.integers(-5, 5), max_size=4).map(lambda values: pl.Series(values, dtype=pl.Int64)),
    st.integers(0, 4).map(pd.RangeIndex),  # (a DataFrame's default index; was no column)
)
_SINGLE_VALUES = st.one_of(
    _DAYS,
    _DAYS.map(tuple),
    st.dates(),
    st.datetimes(),
    st.dates().map(np.datetime64),
    st.datetimes(datetime(1900, 1, 1), datetime(2100, 1, 1)).map(pd.Timestamp),
    st.integers(-5, 5).map(np.int64),
    st.integers(),
    st.text(max_size=4),
    st.none(),
    st.sampled_from([pd.NaT, np.datetime64("NaT")]),
    _DAYS.map(lambda days: pd.DataFrame({"day": days})),
    _DAYS.map(lambda days: pl.DataFrame({"day": days})),
    _DAYS.map(lambda days: dict(enumerate(days))),
)


@given(_COLUMN_VALUES | _SINGLE_VALUES)
def test_is_column_says_which_values_are_a_column_type(value: Any) -> None:
    # the types the docstring names: a numpy array, a pandas Series or Index, a polars
    # Series; every other value (a DataFrame, a list, a scalar) is none
    assert is_column(value) == isinstance(value, np.ndarray | pd.Series | pd.Index | pl.Series)


def test_a_range_index_is_a_column_of_n_and_a_masked_array_is_none() -> None:
    # add_months(d, pd.Index(range(3))) said "n must be an int, got RangeIndex"
    moved = add_months(date(2024, 1, 31), pd.Index(range(3)))
    assert list(moved) == [
        pd.Timestamp(f"2024-{m:02d}-{d}") for m, d in ((1, 31), (2, 29), (3, 31))
    ]
    masked = np.ma.array(np.array(["2024-01-31"], dtype="datetime64[D]"), mask=[True])
    assert not is_column(masked)  # (its mask would be lost)


@given(
    st.lists(st.integers(-24, 24), min_size=1, max_size=6),
    st.data(),
    st.sampled_from([True, False, np.True_, np.False_]),
    st.sampled_from([list, tuple]),
)
def test_a_bool_among_the_ints_of_a_list_n_is_refused(
    steps: list[int], data: st.DataObject, flag: object, kind: type
) -> None:
    # numpy reads [1, True] as [1, 1]: a bool counted as a month
    days = np.array(["2024-01-31"] * (len(steps) + 1), dtype="datetime64[D]")
    position = data.draw(st.integers(0, len(steps)))
    given = kind([*steps[:position], flag, *steps[position:]])
    with pytest.raises(TypeError, match=rf"^n must hold ints, got .*{flag!r} at position "):
        add_months(days, given)
    assert list(add_months(days[1:], kind(steps))) == [
        np.datetime64(add_months(date(2024, 1, 31), step)) for step in steps
    ]
