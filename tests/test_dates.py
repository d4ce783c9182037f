"""Tests for devutils.dates: the issue's worked examples, every error, properties."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from dateutil.relativedelta import relativedelta
from hypothesis import assume, example, given
from hypothesis import strategies as st

from devutils.dates import (
    DateRangeError,
    add_months,
    count_months,
    days_in_month,
    iter_months,
    month_end,
    month_start,
    months_between,
)

NY = ZoneInfo("America/New_York")
DOCS = Path(__file__).resolve().parent.parent / "docs" / "dates.md"

# -- worked examples ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (date(2024, 1, 15), date(2024, 3, 5), 3),
        (date(2023, 12, 31), date(2024, 1, 1), 2),
        (date(2024, 5, 5), date(2024, 5, 5), 1),
        (date(1, 1, 1), date(9999, 12, 31), 119988),
        (datetime(2024, 1, 31, 23, 59), datetime(2024, 2, 1, 0, 0), 2),
        (date(2024, 1, 31), datetime(2024, 1, 31, 0, 0), 1),
    ],
)
def test_count_months_examples(start: date, end: date, expected: int) -> None:
    assert count_months(start, end) == expected


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (date(2024, 1, 31), date(2024, 2, 29), 1),
        (date(2024, 2, 29), date(2025, 2, 28), 12),
        (datetime(2024, 1, 31, 10), datetime(2024, 2, 29, 9), 0),
        (datetime(2024, 1, 31, 10), datetime(2024, 2, 29, 10), 1),
        (date(2024, 1, 15), date(2024, 1, 14), 0),
        (date(2024, 3, 31), date(2024, 2, 29), -1),
        (date(2024, 3, 1), date(2024, 1, 31), -1),
        (date(2024, 3, 1), date(2024, 1, 1), -2),
    ],
)
def test_months_between_examples(start: date, end: date, expected: int) -> None:
    assert months_between(start, end) == expected


@pytest.mark.parametrize(
    ("d", "n", "expected"),
    [
        (date(2024, 1, 31), 1, date(2024, 2, 29)),
        (date(2023, 1, 31), 1, date(2023, 2, 28)),
        (date(2024, 1, 31), 2, date(2024, 3, 31)),
        (date(2024, 3, 31), -1, date(2024, 2, 29)),
        (date(2024, 12, 15), 1, date(2025, 1, 15)),
        (date(2024, 1, 15), -13, date(2022, 12, 15)),
        (date(1, 1, 1), 0, date(1, 1, 1)),
    ],
)
def test_add_months_examples(d: date, n: int, expected: date) -> None:
    assert add_months(d, n) == expected


def test_add_months_is_not_associative() -> None:
    jan31 = date(2024, 1, 31)
    assert add_months(add_months(jan31, 1), 1) == date(2024, 3, 29)
    assert add_months(jan31, 2) == date(2024, 3, 31)


def test_add_months_keeps_type_time_tzinfo_and_fold() -> None:
    value = datetime(2024, 10, 31, 1, 30, 15, 7, tzinfo=NY, fold=1)
    result = add_months(value, 1)
    assert type(result) is datetime
    assert result == datetime(2024, 11, 30, 1, 30, 15, 7, tzinfo=NY, fold=1)
    assert (result.tzinfo, result.fold) == (NY, 1)

    class MyDate(date):
        pass

    assert type(add_months(MyDate(2024, 1, 31), 1)) is MyDate


def test_iter_months() -> None:
    months = list(iter_months(date(2024, 1, 31), date(2024, 5, 1)))
    assert months == [date(2024, m, 1) for m in range(1, 6)]
    assert list(iter_months(date(2023, 11, 5), date(2024, 2, 1)))[-2:] == [
        date(2024, 1, 1),
        date(2024, 2, 1),
    ]


def test_iter_months_validates_eagerly() -> None:
    with pytest.raises(ValueError, match="end must not be before start"):
        iter_months(date(2024, 2, 1), date(2024, 1, 1))  # no next() needed


def test_helpers() -> None:
    assert days_in_month(2024, 2) == 29
    assert days_in_month(1900, 2) == 28
    assert days_in_month(2000, 2) == 29
    assert days_in_month(2023, 4) == 30
    assert month_start(date(2024, 2, 29)) == date(2024, 2, 1)
    assert month_end(date(2024, 2, 1)) == date(2024, 2, 29)
    moment = datetime(2024, 2, 10, 12, tzinfo=NY)
    assert month_start(moment) == datetime(2024, 2, 1, tzinfo=NY)
    assert month_end(moment) == datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=NY)


# -- time zones ----------------------------------------------------------------------------


def test_aware_counts_in_the_starts_wall_clock() -> None:
    start = datetime(2024, 1, 15, 10, tzinfo=NY)
    end = datetime(2024, 1, 31, 20, tzinfo=NY)  # already February in UTC
    assert end.astimezone(UTC).month == 2
    assert count_months(start, end) == 1
    assert months_between(start, end) == 0


def test_aware_end_in_another_zone_is_converted() -> None:
    start = datetime(2024, 1, 15, 10, tzinfo=NY)
    end = datetime(2024, 2, 1, 0, 30, tzinfo=UTC)  # Jan 31 19:30 in New York
    assert count_months(start, end) == 1
    end_tokyo = datetime(2024, 2, 1, 12, tzinfo=ZoneInfo("Asia/Tokyo"))  # Jan 31 22:00 NY
    assert count_months(start, end_tokyo) == 1


def test_date_with_naive_datetime_is_midnight() -> None:
    assert months_between(date(2024, 1, 31), datetime(2024, 2, 29, 0, 0)) == 1
    assert months_between(datetime(2024, 1, 31, 0, 1), date(2024, 2, 29)) == 0


# -- errors --------------------------------------------------------------------------------

BAD_VALUES = [None, "2024-01-01", 20240101, 1.5, True, time(1, 2), timedelta(days=1)]


@pytest.mark.parametrize("bad", BAD_VALUES, ids=repr)
@pytest.mark.parametrize("function", [count_months, months_between])
def test_non_dates_are_type_errors(function: object, bad: object) -> None:
    assert callable(function)
    with pytest.raises(TypeError, match=r"start must be a datetime.date.*" + re.escape(repr(bad))):
        function(bad, date(2024, 1, 1))
    with pytest.raises(TypeError, match=r"end must be a datetime.date"):
        function(date(2024, 1, 1), bad)


@pytest.mark.parametrize("bad", BAD_VALUES, ids=repr)
def test_helpers_refuse_non_dates(bad: object) -> None:
    for function in (month_start, month_end):
        with pytest.raises(TypeError, match=r"d must be a datetime\.date"):
            function(bad)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match=r"d must be a datetime\.date"):
        add_months(bad, 1)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match=r"start must be a datetime\.date"):
        iter_months(bad, date(2024, 1, 1))  # type: ignore[arg-type]


def test_reversed_range_names_both_values() -> None:
    start, end = datetime(2024, 1, 1, 12), datetime(2024, 1, 1, 11)
    with pytest.raises(ValueError, match=r"start=datetime.datetime\(2024, 1, 1, 12, 0\), end="):
        count_months(start, end)


def test_naive_mixed_with_aware() -> None:
    aware = datetime(2024, 1, 1, tzinfo=UTC)
    with pytest.raises(TypeError, match="cannot mix a naive datetime and an aware datetime"):
        count_months(datetime(2024, 1, 1), aware)
    with pytest.raises(TypeError, match="cannot mix a date and an aware datetime"):
        months_between(date(2024, 1, 1), aware)
    with pytest.raises(TypeError, match="cannot mix an aware datetime and a date"):
        count_months(aware, date(2024, 2, 1))


@pytest.mark.parametrize("n", [1.0, 1.5, True, False, "1", None])
def test_add_months_refuses_non_int(n: object) -> None:
    with pytest.raises(TypeError, match=r"n must be an int, got " + re.escape(type(n).__name__)):
        add_months(date(2024, 1, 1), n)  # type: ignore[call-overload]


@pytest.mark.parametrize(
    ("d", "n"), [(date(9999, 12, 1), 1), (date(1, 1, 31), -1), (date(2024, 1, 1), 10**6)]
)
def test_add_months_overflow(d: date, n: int) -> None:
    with pytest.raises(OverflowError, match=r"outside years 1\.\.9999"):
        add_months(d, n)


@pytest.mark.parametrize(
    ("year", "month", "error"),
    [
        (2024, 13, ValueError),
        (2024, 0, ValueError),
        (0, 1, ValueError),
        (2024.0, 1, TypeError),
        (2024, True, TypeError),
    ],
)
def test_days_in_month_errors(year: object, month: object, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"year|month"):
        days_in_month(year, month)  # type: ignore[arg-type]


def test_pandas_nat_is_a_value_error() -> None:
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="start must be a real date, got NaT"):
        count_months(pd.NaT, date(2024, 1, 1))
    assert count_months(pd.Timestamp("2024-01-15"), pd.Timestamp("2024-03-05")) == 3
    assert add_months(pd.Timestamp("2024-01-31 10:00"), 1) == pd.Timestamp("2024-02-29 10:00")


# -- properties ----------------------------------------------------------------------------

dates = st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31))
datetimes = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59))


def brute_force_count(start: date, end: date) -> int:
    """The Rails snippet: every day of the range, distinct (year, month) pairs."""
    days = (end - start).days
    return len({((d := start + timedelta(days=i)).year, d.month) for i in range(days + 1)})


@given(start=dates, days=st.integers(0, 800))
def test_count_months_equals_brute_force(start: date, days: int) -> None:
    assume(start.toordinal() + days <= date.max.toordinal())
    end = start + timedelta(days=days)
    assert count_months(start, end) == brute_force_count(start, end)
    assert len(list(iter_months(start, end))) == count_months(start, end)


@given(start=st.one_of(dates, datetimes), end=st.one_of(dates, datetimes))
def test_months_between_equals_relativedelta(start: date, end: date) -> None:
    delta = relativedelta(end, start)
    assert months_between(start, end) == delta.years * 12 + delta.months


@given(d=st.one_of(dates, datetimes), n=st.integers(-120000, 120000))
def test_add_months_round_trip(d: date, n: int) -> None:
    try:
        moved = add_months(d, n)
    except OverflowError:
        assume(False)
        raise
    assert moved == d + relativedelta(months=n)
    assert months_between(d, moved) == n
    assert moved.day <= d.day
    assert days_in_month(moved.year, moved.month) >= moved.day


@given(start=dates, days=st.integers(0, 150_000))
def test_iter_months_matches_count(start: date, days: int) -> None:
    # end drawn as a span after start (up to about 4,900 months): two independent dates
    # were mostly further apart, and filtering them out failed Hypothesis' health check
    end = date.fromordinal(min(start.toordinal() + days, date.max.toordinal()))
    months = list(iter_months(start, end))
    assert len(months) == count_months(start, end)
    assert months[0] == month_start(start)
    assert months[-1] == month_start(end)
    assert all(add_months(months[0], k) == m for k, m in enumerate(months))


OFFSETS = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))


@given(
    start=st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31)),
    end=st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31)),
    zone_a=OFFSETS,
    zone_b=OFFSETS,
)
def test_aware_across_zones_is_the_starts_wall_clock(
    start: datetime, end: datetime, zone_a: timezone, zone_b: timezone
) -> None:
    aware_start, aware_end = start.replace(tzinfo=zone_a), end.replace(tzinfo=zone_b)
    wall_end = aware_end.astimezone(zone_a).replace(tzinfo=None)
    assert months_between(aware_start, aware_end) == months_between(start, wall_end)
    if wall_end >= start:
        assert count_months(aware_start, aware_end) == count_months(start, wall_end)


@given(start=dates, days=st.integers(0, 3000))
def test_docs_stdlib_count_months_agrees(start: date, days: int) -> None:
    assume(start.toordinal() + days <= date.max.toordinal())
    end = start + timedelta(days=days)
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), flags=re.S)
    (source,) = [b for b in blocks if "def count_months(" in b]
    namespace: dict[str, object] = {}
    exec(source, namespace)  # the copy-paste version printed in the docs
    function = namespace["count_months"]
    assert callable(function)
    assert function(start, end) == count_months(start, end)


@given(d=st.one_of(dates, datetimes))
def test_month_start_and_end_bracket_the_value(d: date) -> None:
    assert month_start(d) <= d <= month_end(d)
    assert count_months(month_start(d), month_end(d)) == 1


# -- the edges: DST folds, the ends of the calendar, nanoseconds ------------------------------

ZONES = [
    ZoneInfo(name)
    for name in (
        "America/New_York",
        "Europe/Berlin",
        "Australia/Lord_Howe",  # a half-hour shift
        "America/Santiago",  # shifts at midnight, so across a month's start
        "America/Havana",  # falls back from 01:00 to 00:00
    )
]
UTC_ZONE = ZoneInfo("UTC")


def transitions(zone: ZoneInfo, year: int) -> list[datetime]:
    """The instants (UTC) in *year* at which *zone*'s offset changes, found hour by hour."""
    moments = []
    hour = datetime(year, 1, 1, tzinfo=UTC_ZONE)
    while hour.year == year:
        if (hour + timedelta(hours=1)).astimezone(zone).utcoffset() != hour.astimezone(
            zone
        ).utcoffset():
            moments.append(hour + timedelta(hours=1))
        hour += timedelta(hours=1)
    return moments


TRANSITIONS = [(zone, moment) for zone in ZONES for moment in transitions(zone, 2024)]


def count_reference(start: datetime, end: datetime) -> int:
    """count_months the slow way: the start zone's wall clock read every quarter hour from
    start to end, and at the end: the months it showed."""
    zone = start.tzinfo
    assert zone is not None
    utc_start, utc_end = start.astimezone(UTC_ZONE), end.astimezone(UTC_ZONE)
    months = set()
    moment = utc_start
    while moment < utc_end:
        wall = moment.astimezone(zone)
        months.add((wall.year, wall.month))
        moment += timedelta(minutes=15)
    end_wall = utc_end.astimezone(zone)
    months.add((end_wall.year, end_wall.month))
    return len(months)


def elapsed_reference(start: datetime, end: datetime) -> int:
    """months_between's rule walked a month at a time: the last n from 0 towards the end
    for which add_months(start, n) has not passed it, instants as Python converts them."""
    end_utc = end.astimezone(UTC)

    def at(k: int) -> datetime:
        return add_months(start, k).astimezone(UTC)

    n = 0
    if end_utc >= start.astimezone(UTC):
        while at(n + 1) <= end_utc:
            n += 1
    else:
        while at(n - 1) >= end_utc:
            n -= 1
    return n


@given(
    transition=st.sampled_from(TRANSITIONS),
    before=st.integers(-180, 180),
    after=st.integers(-180, 24 * 60 * 40),
    other=st.sampled_from([None, *ZONES]),
)
def test_aware_pairs_around_dst_are_ordered_by_their_instants(
    transition: tuple[ZoneInfo, datetime], before: int, after: int, other: ZoneInfo | None
) -> None:
    zone, moment = transition
    start = (moment + timedelta(minutes=before)).astimezone(zone)  # its fold set as due
    end = (moment + timedelta(minutes=before + after)).astimezone(other or zone)
    assert months_between(start, end) == elapsed_reference(start, end)
    if after < 0:
        with pytest.raises(ValueError, match="end must not be before start"):
            count_months(start, end)
        with pytest.raises(ValueError, match="end must not be before start"):
            iter_months(start, end)
        assert months_between(start, end) <= 0
        return
    expected_count = count_reference(start, end)
    assert count_months(start, end) == expected_count
    assert len(list(iter_months(start, end))) == expected_count


# -- whole months by instants: the rule against dateutil --------------------------------------

LONDON = ZoneInfo("Europe/London")
DST_ZONES = [NY, LONDON, ZoneInfo("Australia/Lord_Howe"), ZoneInfo("Pacific/Chatham")]
FIXED_ZONES = [
    UTC_ZONE,
    UTC,
    timezone(timedelta(hours=5, minutes=45)),
    timezone(timedelta(hours=-9, minutes=-30)),
    timezone(timedelta(hours=14)),
]


def offset_changes(zone: ZoneInfo, year: int) -> list[datetime]:
    """The instants (UTC, to the minute) in *year* at which *zone*'s offset changes."""
    changes = []
    moment = datetime(year, 1, 1, tzinfo=UTC)
    step = timedelta(hours=6)
    while moment.year == year:
        low, high = moment, moment + step
        if low.astimezone(zone).utcoffset() != high.astimezone(zone).utcoffset():
            while high - low > timedelta(minutes=1):
                middle = low + (high - low) / 2
                same = middle.astimezone(zone).utcoffset() == low.astimezone(zone).utcoffset()
                low, high = (middle, high) if same else (low, middle)
            changes.append(high)
        moment += step
    return changes


CHANGES = [
    (zone, at) for zone in DST_ZONES for year in (1996, 2024) for at in offset_changes(zone, year)
]


@st.composite
def aware_pairs(draw: st.DrawFn, folds: st.SearchStrategy[int]) -> tuple[datetime, datetime]:
    """A start and an end such that ``add_months(start, k)`` lands within hours of a DST
    change of the start's zone (or any moment, for a fixed offset), and the end does too,
    written in the start's zone or another."""
    zone, moment = draw(st.sampled_from([*CHANGES, *((z, None) for z in FIXED_ZONES)]))
    if moment is None:
        naive = draw(st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2040, 1, 1)))
        moment = naive.replace(tzinfo=UTC)
    end_zone = draw(st.sampled_from([zone, *DST_ZONES, *FIXED_ZONES]))
    end = (moment + timedelta(minutes=draw(st.integers(-90, 90)))).astimezone(end_zone)
    near = (moment + timedelta(minutes=draw(st.integers(-90, 90)))).astimezone(zone)
    wall = add_months(near.replace(tzinfo=None), -draw(st.integers(-14, 14)))
    return wall.replace(tzinfo=zone, fold=draw(folds)), end


def relativedelta_on_instants(start: datetime, end: datetime) -> int:
    """relativedelta(end, start) in months, the end shown in the start's zone and compared
    with the start by instants: it carries an equal but distinct tzinfo, and Python
    compares two datetimes of distinct tzinfos through their UTC offsets (fold respected),
    those of one tzinfo by their wall clocks."""
    zone = start.tzinfo
    assert zone is not None
    twin = ZoneInfo.no_cache(zone.key) if isinstance(zone, ZoneInfo) else zone  # fixed: any
    delta = relativedelta(end.astimezone(zone).replace(tzinfo=twin), start)
    return delta.years * 12 + delta.months


ISSUE_PAIR = (datetime(2024, 10, 3, 1, 30, tzinfo=NY), datetime(2024, 11, 3, 6, 10, tzinfo=UTC))


@given(aware_pairs(folds=st.just(0)))
@example(ISSUE_PAIR)
def test_months_between_is_relativedelta_on_the_instants(pair: tuple[datetime, datetime]) -> None:
    # fold 0 starts: relativedelta moves the start with datetime + timedelta, which resets
    # fold, so from a fold-1 start it counts from the other occurrence (the next test)
    start, end = pair
    assert months_between(start, end) == relativedelta_on_instants(start, end)


@given(aware_pairs(folds=st.integers(0, 1)), st.integers(-30, 30))
def test_months_between_meets_its_rule_for_every_fold(
    pair: tuple[datetime, datetime], months: int
) -> None:
    start, end = pair
    assert months_between(start, end) == elapsed_reference(start, end)
    assert months_between(start, add_months(start, months)) == months


def test_months_between_decides_the_last_month_by_instants() -> None:
    start = datetime(2024, 10, 3, 1, 30, tzinfo=NY)  # + 1 month: 01:30 EDT, 05:30 UTC
    end = datetime(2024, 11, 3, 6, 10, tzinfo=UTC)  # 01:10 EST, 40 minutes after it
    assert end.astimezone(NY).fold == 1
    assert months_between(start, end) == 1
    assert months_between(start, end.astimezone(NY)) == 1  # however the end is written
    assert relativedelta(end, start).months == 1  # dateutil on the two instants agrees
    assert months_between(start, datetime(2024, 11, 3, 5, 10, tzinfo=UTC)) == 0  # 01:10 EDT
    assert count_months(start, end) == 2


def test_months_between_keeps_the_starts_fold() -> None:
    later = datetime(2030, 11, 3, 1, 30, fold=1, tzinfo=NY)  # the second 01:30, EST
    earlier = add_months(later, -72)  # 2024-11-03 01:30 EST: repeated too, fold kept
    assert (earlier.fold, earlier.utcoffset()) == (1, timedelta(hours=-5))
    assert months_between(later, earlier) == -72
    assert months_between(earlier, later) == 72
    assert relativedelta_on_instants(later, earlier) == -71  # dateutil drops the fold
    first = datetime(2024, 11, 3, 1, 37, tzinfo=NY)  # EDT: 58 minutes before 01:35 EST
    assert months_between(datetime(2024, 11, 3, 1, 35, fold=1, tzinfo=NY), first) == 0


def test_a_clock_set_back_across_a_months_start() -> None:
    st_johns = ZoneInfo("America/St_Johns")  # 2009-11-01 00:01 NDT -> 2009-10-31 23:01 NST
    start = datetime(2009, 10, 1, tzinfo=st_johns)
    end = datetime(2009, 10, 31, 23, 30, fold=1, tzinfo=st_johns)  # after the shift
    assert add_months(start, 1).astimezone(UTC) < end.astimezone(UTC)
    assert months_between(start, end) == 1
    assert relativedelta_on_instants(start, end) == 0  # dateutil never steps forward
    before = datetime(2009, 11, 1, 0, 0, 30, tzinfo=st_johns)  # NDT, 29.5 minutes earlier
    assert (count_months(before, end), months_between(before, end)) == (2, 0)
    assert list(iter_months(before, end)) == [date(2009, 10, 1), date(2009, 11, 1)]


# -- a tzinfo that misbehaves is named -----------------------------------------------------


class Misbehaving(tzinfo):
    """A tzinfo whose utcoffset each subclass gets wrong its own way."""

    def dst(self, dt: datetime | None) -> timedelta:
        return timedelta(0)

    def tzname(self, dt: datetime | None) -> str:
        return type(self).__name__


class Flaky(Misbehaving):
    """Answers utcoffset with an hour and None in turn, starting with *first*."""

    def __init__(self, first: timedelta | None) -> None:
        self.answers = [first, None if first is not None else timedelta(hours=1)]
        self.calls = 0

    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        self.calls += 1
        return self.answers[self.calls % 2 - 1]


class Raising(Misbehaving):
    def utcoffset(self, dt: datetime | None) -> timedelta:
        raise RuntimeError("no offsets today")


class WrongType(Misbehaving):
    def utcoffset(self, dt: datetime | None) -> timedelta:
        return 3600  # type: ignore[return-value]


class DayLong(Misbehaving):
    def utcoffset(self, dt: datetime | None) -> timedelta:
        return timedelta(hours=24)


class OffsetOnly(tzinfo):
    """A fixed offset of an hour, with no dst(): the least a tzinfo may implement."""

    def utcoffset(self, dt: datetime | None) -> timedelta:
        return timedelta(hours=1)


def test_a_tzinfo_without_dst_is_read_by_its_offset() -> None:
    # reading its wall clock asked for dst(): NotImplementedError
    start = datetime(2024, 1, 1, tzinfo=UTC)
    end = datetime(2024, 1, 31, tzinfo=OffsetOnly())  # type: ignore[abstract]
    assert (count_months(start, end), months_between(start, end)) == (1, 0)
    assert list(iter_months(start, end)) == [date(2024, 1, 1)]
    zone = OffsetOnly()  # type: ignore[abstract]
    # as the start's zone too (its wall clock was asked for through dst())
    both = (datetime(2024, 1, 1, tzinfo=zone), datetime(2024, 3, 1, tzinfo=zone))
    assert (count_months(*both), months_between(*both)) == (3, 2)


MISBEHAVING = [  # how to make the tzinfo, the error, what the message says ({side}: its name)
    (Raising, ValueError, r"^{side}'s tzinfo <.*> gave no UTC offset for .*: no offsets today$"),
    (WrongType, TypeError, r"^{side}'s tzinfo <.*> .* must return None or timedelta"),
    (DayLong, ValueError, r"^{side}'s tzinfo <.*> .* strictly between"),
    # None first: that side reads as naive, mixed with an aware other side
    (lambda: Flaky(None), TypeError, r"^cannot mix .*{side}=datetime\.datetime\(2024"),
]
FUNCTIONS = [count_months, months_between, iter_months]


@pytest.mark.parametrize(("make", "error", "message"), MISBEHAVING)
@pytest.mark.parametrize("function", FUNCTIONS)
def test_a_misbehaving_start_zone_is_named(
    make: Callable[[], tzinfo],
    error: type[Exception],
    message: str,
    function: Callable[..., object],
) -> None:
    start = datetime(2024, 1, 31, 10, tzinfo=make())
    with pytest.raises(error, match=message.format(side="start")):
        function(start, datetime(2024, 3, 1, tzinfo=NY))


@pytest.mark.parametrize(("make", "error", "message"), MISBEHAVING)
@pytest.mark.parametrize("function", FUNCTIONS)
def test_a_misbehaving_end_zone_is_named(
    make: Callable[[], tzinfo],
    error: type[Exception],
    message: str,
    function: Callable[..., object],
) -> None:
    end = datetime(2024, 3, 1, 10, tzinfo=make())
    with pytest.raises(error, match=message.format(side="end")):
        function(datetime(2024, 1, 31, tzinfo=NY), end)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_a_start_zone_that_answers_an_offset_then_none_is_named(
    function: Callable[..., object],
) -> None:
    start = datetime(2024, 1, 31, 10, tzinfo=Flaky(timedelta(hours=1)))  # was AssertionError
    with pytest.raises(ValueError, match=r"^start's tzinfo <.*> could not show .*2024, 3, 1"):
        function(start, datetime(2024, 3, 1, tzinfo=NY))


def test_an_end_zone_read_once_counts_with_the_offset_it_gave() -> None:
    def end() -> datetime:  # 2024-02-29 23:30 UTC, by the offset its tzinfo gives first
        return datetime(2024, 3, 1, 0, 30, tzinfo=Flaky(timedelta(hours=1)))

    assert count_months(datetime(2024, 1, 31, tzinfo=UTC), end()) == 2
    assert months_between(datetime(2024, 1, 29, 23, 31, tzinfo=UTC), end()) == 0
    assert months_between(datetime(2024, 1, 29, 23, 30, tzinfo=UTC), end()) == 1


def test_forty_minutes_across_a_repeated_hour() -> None:
    first = datetime(2024, 11, 3, 1, 50, tzinfo=NY)  # EDT
    later = datetime(2024, 11, 3, 1, 10, fold=1, tzinfo=NY)  # EST: 20 minutes later
    assert (count_months(first, later), months_between(first, later)) == (1, 0)
    with pytest.raises(ValueError, match="end must not be before start"):
        count_months(later, first)
    assert months_between(later, first) == 0


@pytest.mark.parametrize(
    ("start", "end", "count", "elapsed"),
    [
        # the end, on the start's wall clock, is in January of year 10000
        (
            datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=14))),
            datetime(9999, 12, 31, 20, tzinfo=timezone(timedelta(hours=-10))),
            2,
            0,
        ),
        (
            datetime(1, 1, 1, 2, tzinfo=timezone(timedelta(hours=-10))),
            datetime(1, 1, 2, 10, tzinfo=timezone(timedelta(hours=14))),
            1,
            0,
        ),
        (
            datetime(9999, 11, 30, 23, tzinfo=timezone(timedelta(hours=14))),
            datetime(9999, 12, 31, 22, tzinfo=timezone(timedelta(hours=-12))),
            3,
            1,
        ),
    ],
)
def test_pairs_near_the_ends_of_the_calendar(
    start: datetime, end: datetime, count: int, elapsed: int
) -> None:
    assert (count_months(start, end), months_between(start, end)) == (count, elapsed)


def test_an_end_in_year_0_on_the_starts_clock() -> None:
    start = datetime(1, 1, 1, 2, tzinfo=timezone(timedelta(hours=-10)))
    end = datetime(1, 1, 1, 1, tzinfo=timezone(timedelta(hours=14)))  # 0000-12-31 01:00 there
    assert months_between(start, end) == 0
    with pytest.raises(ValueError, match="end must not be before start"):
        count_months(start, end)


def test_months_past_year_9999_cannot_be_listed() -> None:
    start = datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=14)))
    end = datetime(9999, 12, 31, 20, tzinfo=timezone(timedelta(hours=-10)))
    with pytest.raises(DateRangeError, match=r"outside years 1\.\.9999"):
        iter_months(start, end)
    with pytest.raises(OverflowError):  # also an OverflowError, as datetime's own
        add_months(date(9999, 12, 1), 1)
    with pytest.raises(ValueError, match=r"outside years 1\.\.9999"):
        add_months(date(1, 1, 1), -1)


def test_pandas_timestamps_count_to_the_nanosecond() -> None:
    pd = pytest.importorskip("pandas")
    a = pd.Timestamp("2024-01-31 10:00:00.000000001")
    b = pd.Timestamp("2024-02-29 10:00:00")
    assert months_between(a, b) == 0  # a nanosecond short of a month
    assert months_between(pd.Timestamp("2024-01-31 10:00"), b) == 1
    assert month_end(a) == month_end(pd.Timestamp("2024-01-02 03:04:05.000000006"))
    assert month_end(a) == pd.Timestamp("2024-01-31 23:59:59.999999999")
    assert month_start(a) == pd.Timestamp("2024-01-01")
    assert month_start(a).nanosecond == 0
    zoned = pd.Timestamp("2024-11-03 01:50").tz_localize("America/New_York", ambiguous=True)
    later = pd.Timestamp("2024-11-03 01:10").tz_localize("America/New_York", ambiguous=False)
    assert count_months(zoned, later) == 1


@given(
    d=st.datetimes(min_value=datetime(1678, 1, 1), max_value=datetime(2261, 12, 1)),
    nanosecond=st.integers(0, 999),
)
def test_timestamps_bracket_their_month(d: datetime, nanosecond: int) -> None:
    pd = pytest.importorskip("pandas")
    stamp = pd.Timestamp(d).replace(nanosecond=nanosecond)
    assert month_start(stamp) <= stamp <= month_end(stamp)
    assert month_end(stamp) == month_end(pd.Timestamp(month_start(stamp)))


@given(
    d=st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
    unit=st.sampled_from(["s", "ms", "us"]),
)
def test_a_timestamp_ends_its_month_at_the_last_moment_of_its_unit(d: datetime, unit: str) -> None:
    # pandas 2.0 gave Timestamps units; from 3.0 most are in us, and may lie past the
    # years 1677..2262 that nanoseconds hold. month_end gave .999999999 by moving the
    # value to ns, which failed there.
    pd = pytest.importorskip("pandas")
    stamp = pd.Timestamp(d).as_unit(unit)
    start, end = month_start(stamp), month_end(stamp)
    assert (start.unit, end.unit) == (unit, unit)
    assert start <= stamp <= end
    assert start.to_pydatetime() == month_start(d)
    assert end.to_pydatetime() == month_end(d).replace(
        microsecond={"s": 0, "ms": 999_000, "us": 999_999}[unit]
    )


def test_a_nanosecond_timestamp_past_its_range_is_a_range_error() -> None:
    pd = pytest.importorskip("pandas")
    low = pd.Timestamp("1677-10-10").as_unit("ns")
    with pytest.raises(
        DateRangeError, match=r"add_months\(Timestamp\('1677-10-10 00:00:00'\), -1\)"
    ):
        add_months(low, -1)
    with pytest.raises(DateRangeError, match="month_start"):
        month_start(pd.Timestamp("1677-09-22").as_unit("ns"))
    with pytest.raises(DateRangeError, match="month_end"):
        month_end(pd.Timestamp("2262-04-10").as_unit("ns"))
    assert month_end(pd.Timestamp("2262-03-10").as_unit("ns")) == pd.Timestamp(
        "2262-03-31 23:59:59.999999999"
    )
    assert add_months(pd.Timestamp("3000-01-31 10:00").as_unit("us"), 1) == pd.Timestamp(
        "3000-02-28 10:00"
    )


def test_a_month_that_starts_in_a_dst_gap_starts_alike_in_every_unit() -> None:
    # Asuncion skipped 00:00-01:00 on 2017-10-01: in us the Timestamp came back as 00:00,
    # a wall time that does not exist there; in ns as 01:00, the instant's own.
    pd = pytest.importorskip("pandas")
    stamp = pd.Timestamp("2017-10-15 12:00", tz="America/Asuncion")
    starts = {unit: month_start(stamp.as_unit(unit)) for unit in ("s", "ms", "us", "ns")}
    assert {(start.hour, start.utcoffset()) for start in starts.values()} == {
        (1, timedelta(hours=-3))
    }
    assert {start.unit for start in starts.values()} == {"s", "ms", "us", "ns"}


PENDULUM_ZONES = ["America/Asuncion", "America/New_York", "Europe/London", "Australia/Lord_Howe"]


@given(
    st.datetimes(datetime(2000, 1, 1), datetime(2040, 1, 1)),
    st.sampled_from(PENDULUM_ZONES),
    st.integers(0, 1),
    st.integers(-30, 30),
)
@example(datetime(2023, 10, 15, 12), "America/Asuncion", 0, 0)  # Oct 1, 00:00 is skipped
@example(datetime(2024, 2, 10, 2, 30), "America/New_York", 0, 1)  # Mar 10, 02:30 is skipped
def test_pendulum_values_give_what_the_same_datetimes_give(
    wall: datetime, zone: str, fold: int, n: int
) -> None:
    # pendulum's own replace moves a skipped wall clock back an hour: month_start fell in
    # the month before, and months_between(d, add_months(d, 1)) was 0.
    pendulum: Any = pytest.importorskip("pendulum")
    plain = wall.replace(tzinfo=ZoneInfo(zone), fold=fold)
    value = pendulum.instance(plain).replace(fold=fold)
    functions: list[Callable[[Any], Any]] = [month_start, month_end, lambda d: add_months(d, n)]
    for function in functions:
        got, expected = function(value), function(plain)
        assert isinstance(got, pendulum.DateTime)
        assert (got.replace(tzinfo=None), got.fold) == (
            expected.replace(tzinfo=None),
            expected.fold,
        )
        assert got.utcoffset() == expected.utcoffset()
    assert months_between(value, add_months(value, n)) == n
    assert count_months(month_start(value), value) == 1


@given(
    st.datetimes(datetime(2000, 1, 1), datetime(2040, 1, 1)),
    st.sampled_from(PENDULUM_ZONES),
    st.integers(-30, 30),
    st.integers(-30, 30),
)
@example(datetime(2024, 2, 10, 2, 30), "America/New_York", 1, -1)  # Mar 10, 02:30 is skipped
@example(datetime(2024, 2, 10, 2, 30), "America/New_York", 1, 12)
@example(datetime(2024, 9, 6, 2, 10), "Australia/Lord_Howe", 1, 1)  # a 30-minute gap
def test_a_timestamp_in_a_dst_gap_comes_back_as_one_pandas_holds(
    wall: datetime, zone: str, n: int, k: int
) -> None:
    # A Timestamp moved onto a wall clock a gap skips kept that wall clock, which pandas
    # itself refuses to build; moved again, it came back an hour off: two months from
    # New York's 2024-02-10 02:30, one forward and one back, gave 03:30, and
    # months_between(d, add_months(d, -1)) was 0.
    pd = pytest.importorskip("pandas")
    stamp = pd.Timestamp(wall).tz_localize(zone, nonexistent="shift_forward")
    moved = add_months(stamp, n)
    expected = add_months(stamp.to_pydatetime(), n)
    assert moved.tz_convert(UTC).to_pydatetime() == expected.astimezone(UTC)  # its instant
    assert moved.tz_convert(zone).isoformat() == moved.isoformat()  # a wall clock that exists
    assert months_between(moved, add_months(moved, k)) == k


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: add_months(date(2024, 1, 1), 10**5000), DateRangeError, "add_months(datetime"),
        (lambda: add_months(date(2024, 1, 1), -(10**5000)), DateRangeError, "add_months(datetime"),
        (lambda: days_in_month(10**5000, 1), ValueError, "year must be in 1..9999, got <an int"),
        (lambda: days_in_month(2024, 10**5000), ValueError, "month must be in 1..12, got <an int"),
    ],
)
def test_an_int_past_4300_digits_is_named_not_a_repr_error(
    call: Callable[[], object], error: type[Exception], message: str
) -> None:
    # The message took the int's repr, which Python refuses past 4,300 digits: "Exceeds the
    # limit (4300 digits) for integer string conversion", naming no argument.
    with pytest.raises(error, match="^" + re.escape(message)) as caught:
        call()
    assert "digits" in str(caught.value)
    assert "integer string conversion" not in str(caught.value)


@given(st.dates(), st.dates(), st.integers(-200_000, 200_000))
def test_the_errors_carry_their_arguments_and_cross_processes(
    first: date, second: date, n: int
) -> None:
    # Across processes (a ProcessPoolExecutor hands errors back pickled), DateOrderError
    # and MixedDatesError could not be rebuilt: "missing 1 required positional argument".
    import pickle

    from devutils.dates import DateOrderError, MixedDatesError

    start, end = min(first, second), max(first, second)
    assume(start != end)
    with pytest.raises(DateOrderError) as order:
        count_months(end, start)
    assert (order.value.start, order.value.end) == (end, start)
    with pytest.raises(MixedDatesError) as mixed:
        count_months(start, datetime(end.year, end.month, end.day, tzinfo=UTC))
    assert mixed.value.kinds == ("a date", "an aware datetime")
    errors: list[Exception] = [order.value, mixed.value]
    if not 1 <= (start.year * 12 + start.month - 1 + n) // 12 <= 9999:
        with pytest.raises(DateRangeError) as outside:
            add_months(start, n)
        assert (outside.value.function, outside.value.arguments) == ("add_months", (start, n))
        errors.append(outside.value)
    for error in errors:
        again = pickle.loads(pickle.dumps(error))
        assert (type(again), str(again), again.__dict__) == (
            type(error),
            str(error),
            error.__dict__,
        )
