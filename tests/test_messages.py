"""Tests for devutils.messages: a value as an error message shows it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devutils.messages import describe

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
