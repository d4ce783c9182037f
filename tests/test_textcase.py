"""Tests for devutils.textcase: `match_case` against the reference's preserve case."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devutils.textcase import match_case
from tests.text_reference import _case_like as case_like

# Cased and uncased letters, the two separators, a space, a letter whose title case
# differs from its upper case (ǆ: ǅ, Ǆ) and cased letters without an upper case (ĸ, ª).
_TEXTS = st.text(st.sampled_from("aAbBß1 \t-_ǆǅǄσςΣ中ĸª"), max_size=12)


@given(_TEXTS, _TEXTS)
def test_the_case_pattern_is_the_reference(matched: str, replacement: str) -> None:
    assert match_case(matched, replacement) == case_like(matched, replacement)


@pytest.mark.parametrize(
    ("matched", "replacement", "expected"),
    [
        ("HELLO", "goodbye", "GOODBYE"),
        ("Hello", "goodbye cruel world", "Goodbye Cruel World"),
        ("hello", "GoodBye", "GoodBye"),
        ("User_Id", "account_id", "Account_Id"),
        ("user-ID", "account-id", "account-ID"),
        ("A-b_C", "x-y_z", "x-y_z"),  # as many parts at both separators: as given
        ("Acme", "\u039f\u03a3", "\u039f\u03c2"),  # a final sigma (not U+03C3: lowered alone)
        ("Acme", "foo\tbar", "Foo\tBar"),  # words between any whitespace
        ("Acme", "\u4e2dz", "\u4e2dZ"),  # an uncased letter passed over
        # split at "-" only (the "_" counts differ), then a part at "_", as VS Code does
        ("a_x-Foo_BAR", "b-baz_qux", "b-Baz_QUX"),
        ("Hello", "", ""),
        # a first letter's title case, where it differs from its upper case (it gave SS, FI)
        ("Acme", "\u00dftra\u00dfe", "Sstra\u00dfe"),
        ("Acme", "\ufb01sh", "Fish"),
        ("Hello", "\u01c6ungla", "\u01c5ungla"),
        # a cased letter without an upper case is the first cased one, as str.title has it
        # (passed over as uncased, it gave "ĸAtak")
        ("Acme", "\u0138atak", "\u0138atak"),
        ("Acme", "\u00aab", "\u00aab"),
    ],
)
def test_examples_of_each_pattern(matched: str, replacement: str, expected: str) -> None:
    assert match_case(matched, replacement) == expected


def test_each_argument_must_be_a_str() -> None:
    with pytest.raises(TypeError, match="matched must be a str, got int 1"):
        match_case(1, "a")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="replacement must be a str, got NoneType None"):
        match_case("a", None)  # type: ignore[arg-type]
