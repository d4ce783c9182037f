"""Tests for devutils.messages: a value as an error message shows it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devutils.messages import describe, shown

_VALUES = st.one_of(
    st.text(), st.binary(), st.integers(), st.floats(), st.none(), st.lists(st.integers())
)


@given(_VALUES, st.integers(4, 200))
def test_a_value_is_its_type_and_its_repr_cut_to_the_limit(value: object, limit: int) -> None:
    shown = repr(value) if len(repr(value)) <= limit else repr(value)[: limit - 3] + "..."
    assert describe(value, limit) == f"{type(value).__name__} {shown}"
    assert len(describe(value, limit)) <= len(type(value).__name__) + 1 + limit


def test_the_default_limit_keeps_80_characters() -> None:
    assert describe("a" * 78) == "str '" + "a" * 78 + "'"
    assert describe("a" * 79) == "str '" + "a" * 76 + "..."


def test_a_bad_limit_is_named() -> None:
    with pytest.raises(TypeError, match="limit must be an int, got str '9'"):
        describe(1, "9")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="limit must be an int, got bool True"):
        describe(1, True)
    with pytest.raises(ValueError, match="limit must be at least 4, got 3"):
        describe(1, 3)


@given(_VALUES, st.integers(4, 200))
def test_shown_is_describe_without_the_type(value: object, limit: int) -> None:
    assert describe(value, limit) == f"{type(value).__name__} {shown(value, limit)}"


@given(st.integers(4301, 20_000), st.booleans())
def test_an_int_too_long_for_a_repr_is_shown_by_its_size(digits: int, negative: bool) -> None:
    # repr raised ValueError past 4,300 digits, so a message about such an int failed.
    value = (-1 if negative else 1) * 10 ** (digits - 1)
    expected = f"{'-' if negative else ''}<an int of about {digits} digits>"
    assert shown(value, limit=200) == expected


def test_a_repr_that_fails_is_shown_as_failed() -> None:
    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("boom")

    assert describe(Broken()) == "Broken <repr failed: RuntimeError>"
