"""Tests for devutils.limits: the shared bound is int64's, and its users take it from here."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devutils import batch
from devutils.cli import common
from devutils.limits import MAX_INT, MAX_SECONDS, check_seconds


def test_max_int_is_the_largest_int64() -> None:
    assert struct.unpack("<q", struct.pack("<q", MAX_INT)) == (MAX_INT,)
    with pytest.raises(struct.error):
        struct.pack("<q", MAX_INT + 1)


def test_the_library_and_the_command_line_use_the_one_bound() -> None:
    assert batch.MAX_INT is MAX_INT
    assert common.MAX_INT is MAX_INT


@given(st.one_of(st.floats(allow_nan=True), st.integers(-(10**30), 10**30)))
def test_check_seconds_takes_what_lies_in_a_day(value: float) -> None:
    if 0 < value <= MAX_SECONDS:
        assert check_seconds("delay", value) == float(value)
    else:  # nan, inf, 0, negative, past a day
        with pytest.raises(ValueError, match="delay must be a positive number of seconds"):
            check_seconds("delay", value)


@pytest.mark.parametrize("value", [True, "5", None, [1]])
def test_check_seconds_refuses_what_is_no_number(value: object) -> None:
    with pytest.raises(TypeError, match="delay must be a number of seconds"):
        check_seconds("delay", value)


def test_the_library_and_the_command_line_use_the_one_day() -> None:
    assert common.SECONDS_MAX == MAX_SECONDS


def test_check_seconds_names_an_int_past_4300_digits() -> None:
    # (its repr raised "Exceeds the limit (4300 digits)" while the message was built)
    with pytest.raises(ValueError, match=r"^timeout must be a positive .* got <an int of about"):
        check_seconds("timeout", 10**5000)
