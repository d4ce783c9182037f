"""Tests for devutils months."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.conftest import Cli


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["2024-01-15", "2024-03-05"], "3\n"),
        (["2024-01-31", "2024-02-29", "--elapsed"], "1\n"),
        (["2024-03-31", "2024-02-29", "--elapsed"], "-1\n"),
        (["2023-11-20", "2024-02-01", "--list"], "2023-11\n2023-12\n2024-01\n2024-02\n"),
        (["2024-01-15T10:00-05:00", "2024-01-31T20:00-05:00"], "1\n"),
        (["2024-01-31T10:00", "2024-02-29T09:00", "--elapsed"], "0\n"),
        (["2024-01", "2024-03"], "3\n"),  # a month is its first day
        (["2023-11", "2024-02", "--list"], "2023-11\n2023-12\n2024-01\n2024-02\n"),
        (["2024-01", "2024-03", "--elapsed"], "2\n"),
        (["2024-01", "2024-03-31"], "3\n"),
    ],
)
def test_months(args: list[str], expected: str, cli: Cli) -> None:
    result = cli(["months", *args])
    assert (result.status, result.text, result.err) == (0, expected, "")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["2024-02-30", "2024-03-01"], "START is not an ISO 8601 date or datetime: '2024-02-30'"),
        (["2024-01-01", "soon"], "END is not an ISO 8601"),
        (["2024-13", "2025-01"], "START is not an ISO 8601 date or datetime: '2024-13'"),
        (["2024-00", "2025-01"], "START is not an ISO 8601 date or datetime: '2024-00'"),
        # seven characters that are no YYYY-MM (it was "invalid literal for int()")
        (["1-01-01", "2024-01-01"], "START is not an ISO 8601 date or datetime: '1-01-01' (Inv"),
        (["\uff12\uff10\uff12\uff14-01", "2025-01"], "START is not an ISO 8601"),  # full-width
        # what Python 3.11's fromisoformat misreads: 10:00:00.5, 01:00 naive, 12:00 naive, a
        # separator of any character, a fraction's seventh digit dropped
        (["2024-01-31T10.5", "2024-02-29T10:15"], "START is not an ISO 8601 date or datetime"),
        (["2024-01-15+01:00", "2024-06-01"], "START is not an ISO 8601 date or datetime"),
        (["2024-01-31-12:00", "2024-02-29T06:00"], "START is not an ISO 8601 date or datetime"),
        (["2024-01-15", "2024-06-01x10:00"], "END is not an ISO 8601 date or datetime"),
        (["2024-01-31T10:00:00.0000005", "2024-02-29"], "START is not an ISO 8601"),
        (
            ["2024-03-01", "2024-01-01"],
            "END is before START, got START '2024-03-01', END '2024-01-01'",
        ),
        (
            ["2024-01-01T00:00+00:00", "2024-02-01"],
            "cannot mix an aware datetime and a date: START '2024-01-01T00:00+00:00', END",
        ),
        (["2024-01-01"], "the following arguments are required: END"),
        (["2024-01-01", "2024-02-01", "--list", "--elapsed"], "not allowed with argument"),
    ],
)
def test_months_errors(args: list[str], message: str, cli: Cli) -> None:
    result = cli(["months", *args])
    assert result.status == 2
    assert message in result.err
    assert result.err.count("\n") == 1
    assert result.out == b""


def test_a_list_past_year_9999_names_start_and_end_as_typed(cli: Cli) -> None:
    # The message showed both as Python objects: datetime.datetime(9999, 12, 31, ...).
    start, end = "9999-12-31T23:00+14:00", "9999-12-31T20:00-10:00"
    result = cli(["months", start, end, "--list"])
    assert (result.status, result.text) == (2, "")
    assert result.err == (
        f"devutils months: error: the months from START {start!r} to END {end!r} reach "
        "outside years 1..9999 on START's wall clock\n"
    )


@pytest.mark.parametrize(
    "start",
    [
        "2024-01-31T10:15",
        "2024-01-31 10:15:00",
        "20240131T1015",
        "2024-01-31T10:15:00,000000",
        "2024-W05-3T10:15",  # (Wednesday of week 5: 31 January)
        "2024-01-31T10",
    ],
)
def test_every_iso_spelling_of_a_datetime_is_taken(start: str, cli: Cli) -> None:
    result = cli(["months", "--elapsed", start, "2024-02-29T09:59"])
    assert (result.status, result.text) == (0, "0\n")  # (before ten on the 29th: not a month)
    assert cli(["months", "--elapsed", start, "2024-03-31T10:15"]).text == "2\n"
