"""Tests for devutils.text with ``ignore_case``, where characters fold to several (``ß`` ->
``ss``, ``ﬁ`` -> ``fi``, ``İ`` -> ``i̇``) or to another letter (``ς`` and ``Σ`` to small
sigma): placed at window edges, near each other and a key's length from either, so that a match
spans the seam between a stretch of text with one and a stretch without (issue #31).

Every way through a `Replacer` (``replace``, ``replace_count``, ``iter_matches``, streams)
must give what the brute-force `tests.text_reference.reference` gives.
"""

from __future__ import annotations

import functools
import io
import itertools
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import NamedTuple
from unittest import mock

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from devutils.text import Engine, Replacement, Replacer
from devutils.textstream import StreamReplacer, replace_stream
from tests.text_reference import reference

SIGMA = "\u03c3"
"""Small sigma, which final sigma (ς) and capital sigma (Σ) fold to."""
FOLDINGS = {
    "ß": "ss",
    "ẞ": "ss",
    "ﬁ": "fi",
    "ﬃ": "ffi",
    "İ": "i\u0307",
    "ŉ": "\u02bcn",
    "ΐ": "\u03b9\u0308\u0301",
    "ς": SIGMA,
    "Σ": SIGMA,
}
"""The characters placed in the texts, and their case folding."""
KEYS = ["ss", "s", "strasse", "fi", "ffi", "i\u0307", SIGMA, "\u02bcn", "\u03b9\u0308\u0301", "sss"]
"""Keys that those characters' foldings match, whole or as a part."""
FILLER = "strafieISN \u0307\u02bc-" + SIGMA
"""The other characters of the texts (and of drawn keys): the keys' own, a space, a hyphen."""
ENGINES: list[Engine] = ["auto", "automaton", "overlapping"]


class Case(NamedTuple):
    """A text, its mapping (every key's value the same for keys that fold alike), and how
    small the pieces it is searched in are (`small_pieces`)."""

    text: str
    mapping: Mapping[str, Replacement]
    window: int
    """`devutils.textsearch.WINDOW`: characters searched at a time."""
    gap: int = 0
    """``devutils.textsearch._PLAIN_GAP``: characters that fold to several and are farther
    apart than this are searched for the keys' spellings in pieces of their own."""


def small_pieces(case: Case) -> AbstractContextManager[object]:
    """Search in windows of `Case.window` characters and pieces cut at `Case.gap`."""
    return mock.patch.multiple(
        "devutils.textsearch", WINDOW=case.window, _PLAIN_GAP=case.gap, _LONG_KEYS=0
    )


def tagged(tag: str, matched: str) -> str:
    """A callable value (with its *tag* bound): the text matched, marked."""
    return f"<{tag}:{matched}>"


def spellings(key: str) -> list[str]:
    """*key*, upper-case, title-case, and with each folding in it spelled by its character."""
    spelled = [key, key.upper(), key.title()]
    spelled += [key.replace(folding, char) for char, folding in FOLDINGS.items() if folding in key]
    return spelled


def placed(filler: str, length: int, chars: dict[int, str]) -> str:
    """*filler* repeated to *length* characters, with ``chars[i]`` at each index ``i``."""
    text = list((filler * length)[:length])
    for index, char in chars.items():
        text[index] = char
    return "".join(text)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """Keys from `KEYS` and drawn ones; a text of their spellings (some with a character of
    `FOLDINGS` up to two characters before or after) and of `FILLER`; then up to five
    characters of `FOLDINGS` put at (or near, or a key's length from) a window's
    edge, the text's ends, the end of a spelling, or one put before."""
    drawn = st.text(st.sampled_from(FILLER + "".join(FOLDINGS)), min_size=1, max_size=4)
    keys = draw(st.lists(st.sampled_from(KEYS) | drawn, min_size=1, max_size=5))
    kind = draw(st.sampled_from(["plain", "callable", "mixed"]))
    values: dict[str, Replacement] = {}  # by folded key: keys that fold alike agree
    mapping: dict[str, Replacement] = {}
    for key in keys:
        folded = key.casefold()
        if folded not in values:
            plain = draw(st.sampled_from([f"[{folded}]", "X y", ""]))
            function = functools.partial(tagged, str(len(values)))
            use_plain = kind == "plain" or (kind == "mixed" and draw(st.booleans()))
            values[folded] = plain if use_plain else function
        mapping[key] = values[folded]
    longest = max(len(key.casefold()) for key in mapping)
    spelled = st.sampled_from(sorted({s for key in mapping for s in spellings(key)}))
    longest_spelled = st.sampled_from(
        sorted({s for key in mapping if len(key.casefold()) == longest for s in spellings(key)})
    )
    folding = st.sampled_from(sorted(FOLDINGS))
    gap = st.text(st.sampled_from(FILLER), max_size=2)
    before = st.tuples(longest_spelled | spelled, gap, folding)
    after = st.tuples(folding, gap, longest_spelled | spelled)
    near_a_key = (before | after).map("".join)  # a folding just after a key, or before one
    pieces = draw(st.lists(spelled | near_a_key | st.sampled_from(FILLER), max_size=20))
    text = list("".join(pieces))
    window = draw(st.integers(1, 12))
    anchors = [*range(0, len(text) + 1, window), len(text)]
    anchors += itertools.accumulate(len(piece) for piece in pieces)  # where a key may end
    near = [-longest - 1, -longest, 1 - longest, -2, -1, 0, 1, 2, longest - 1, longest, longest + 1]
    offsets = st.sampled_from(near) | st.integers(-2 * longest, 2 * longest)
    for _ in range(draw(st.integers(0, 5)) if text else 0):
        position = draw(st.sampled_from(anchors)) + draw(offsets)
        position = min(max(position, 0), len(text) - 1)
        text[position] = draw(folding)
        anchors.append(position)
    return Case("".join(text), mapping, window, draw(st.integers(0, 8)))


def expected_matches(
    text: str, mapping: Mapping[str, Replacement], **options: bool
) -> list[tuple[int, int, str]]:
    """The reference's ``(start, end, replacement)`` of each match: its matches found by
    giving every key a value that records what it matched (and leaves a NUL in the text);
    their replacements, by the reference on the text matched alone."""
    assert "\0" not in text
    matched: list[str] = []

    def record(piece: str) -> str:
        matched.append(piece)
        return "\0"

    marked = reference(text, dict.fromkeys(mapping, record), ignore_case=True, **options)
    matches, position, pieces = [], 0, iter(matched)
    for char in marked:
        if char == "\0":
            piece = next(pieces)
            value = reference(piece, mapping, ignore_case=True, **options)
            matches.append((position, position + len(piece), value))
            position += len(piece)
        else:
            position += 1
    assert position == len(text)
    return matches


@pytest.mark.parametrize(
    ("text", "mapping", "window", "expected"),
    [
        ("xxxxxxxßxx", {"ss": "y"}, 8, "xxxxxxxyxx"),  # the window's last character
        ("xxxxxxxxßx", {"ss": "y"}, 8, "xxxxxxxxyx"),  # the next window's first
        ("xxxxxStraße", {"strasse": "X"}, 8, "xxxxxX"),  # a match across the edge
        ("ßs sß", {"sss": "3", "ss": "2"}, 1, "3 3"),
        ("ﬃ ﬁ", {"ffi": "1", "fi": "2", "f": "3"}, 1, "1 2"),  # never half of a ligature
        ("İ i\u0307 I", {"i\u0307": "X"}, 1, "X X I"),
        ("ΣΔΣ ς", {SIGMA: "s"}, 1, "sΔs s"),
    ],
)
def test_worked_examples_at_window_edges(
    text: str, mapping: dict[str, str], window: int, expected: str
) -> None:
    assert reference(text, mapping, ignore_case=True) == expected
    with small_pieces(Case(text, mapping, window)):
        for engine in ENGINES:
            assert Replacer(mapping, ignore_case=True, engine=engine)(text) == expected, engine


SS = {"ss": "1", "s": "2", "sss": "3"}
STREET = {"strasse": "<street>", "ss": "<ss>"}


@given(case=cases(), whole_words=st.booleans(), preserve_case=st.booleans())
@example(case=Case(placed("s", 16, {7: "ß"}), SS, 8), whole_words=False, preserve_case=False)
@example(case=Case(placed("s", 16, {8: "ß"}), SS, 8), whole_words=False, preserve_case=False)
@example(case=Case(placed("s", 16, {9: "ß"}), SS, 8), whole_words=False, preserve_case=False)
@example(case=Case(placed("s-", 16, {7: "ß"}), SS, 8), whole_words=True, preserve_case=False)
@example(case=Case(placed("s ", 16, {8: "ẞ"}), SS, 8), whole_words=True, preserve_case=True)
# the longest key's length (7) from an edge: before it, after it, after the next
@example(
    case=Case(placed("strasse ", 40, {1: "ß", 15: "ß", 23: "ẞ"}), STREET, 8),
    whole_words=False,
    preserve_case=False,
)
@example(
    case=Case(placed("Strasse ", 40, {0: "ß", 16: "ß", 24: "ẞ"}), STREET, 8),
    whole_words=True,
    preserve_case=True,
)
# a match whose "ß" is in one window and the rest of it in the next, both ways
@example(case=Case("xx strasse xx straße", STREET, 7), whole_words=False, preserve_case=True)
@example(case=Case("xxxxxxx Straße xx", STREET, 12), whole_words=True, preserve_case=True)
# a match a key's length past a "ß", in text without one
@example(case=Case("xßxxxxxxSTRASSExxß", STREET, 4), whole_words=False, preserve_case=False)
@example(
    case=Case("ßßß ßs sß", {"ssss": "4", "sss": "3", "ss": "2"}, 1),
    whole_words=False,
    preserve_case=False,
)
@example(
    case=Case("oﬁce oﬃce office ﬁ ﬃ ffi FFI", {"fi": "1", "ffi": "2", "f": "3"}, 3),
    whole_words=False,
    preserve_case=True,
)
@example(
    case=Case("İi\u0307Iİ i İ", {"i\u0307": "dot", "i": "i"}, 2),
    whole_words=False,
    preserve_case=True,
)
@example(case=Case("ΣΔΣ σδς ς", {SIGMA: "s", "δσ": "ds"}, 2), whole_words=True, preserve_case=False)
@example(
    case=Case("ŉ\u02bcnŉ ΐ \u03b9\u0308\u0301ΐ", {"\u02bcn": "n", "\u03b9\u0308\u0301": "i"}, 1),
    whole_words=False,
    preserve_case=False,
)
# whole words: the longest key just before a "ß", or a word character between them
@example(case=Case("strasseß", STREET, 12), whole_words=True, preserve_case=False)
@example(case=Case("x strasseß", STREET, 12), whole_words=True, preserve_case=False)
@example(case=Case("x strasseaß", STREET, 12), whole_words=True, preserve_case=False)
@example(case=Case("x strasseaaß", STREET, 12), whole_words=True, preserve_case=False)
@example(case=Case("ß strasse", STREET, 12), whole_words=True, preserve_case=False)
@example(
    case=Case("xSTRAßE", {"strasse": functools.partial(tagged, "0"), "s": "2"}, 3),
    whole_words=False,
    preserve_case=True,
)
def test_every_way_through_a_replacer_equals_the_reference(
    case: Case, whole_words: bool, preserve_case: bool
) -> None:
    options = {"whole_words": whole_words, "preserve_case": preserve_case}
    expected = reference(case.text, case.mapping, ignore_case=True, **options)
    matches = expected_matches(case.text, case.mapping, **options)
    with small_pieces(case):
        for engine in ENGINES:
            replacer = Replacer(case.mapping, ignore_case=True, **options, engine=engine)
            assert replacer.replace(case.text) == expected, engine
            assert replacer.replace_count(case.text) == (expected, len(matches)), engine
            assert list(replacer.iter_matches(case.text)) == matches, engine


@given(case=cases(), chunk_size=st.integers(1, 12), whole_words=st.booleans())
@example(case=Case(placed("s", 24, {7: "ß", 8: "ß"}), SS, 8), chunk_size=4, whole_words=False)
@example(case=Case("xx Straße xx STRAẞE", STREET, 4), chunk_size=3, whole_words=True)
def test_streams_equal_the_reference(case: Case, chunk_size: int, whole_words: bool) -> None:
    expected = reference(case.text, case.mapping, ignore_case=True, whole_words=whole_words)
    count = len(expected_matches(case.text, case.mapping, whole_words=whole_words))
    with small_pieces(case):
        replacer = Replacer(case.mapping, ignore_case=True, whole_words=whole_words)
        out = io.StringIO()
        assert replace_stream(replacer, io.StringIO(case.text), out, chunk_size=chunk_size) == count
        assert out.getvalue() == expected
        stream = StreamReplacer(replacer)
        pieces = [case.text[i : i + chunk_size] for i in range(0, len(case.text), chunk_size)]
        assert "".join(stream.feed(piece) for piece in pieces) + stream.finish() == expected
        assert stream.count == count


@pytest.mark.parametrize(("char", "folding"), FOLDINGS.items())
def test_the_characters_fold_as_these_tests_assume(char: str, folding: str) -> None:
    assert char.casefold() == folding
    assert len(folding) > 1 or char in "ςΣ"
    assert any(folding in key for key in KEYS)
