"""Tests for devutils.textsearch: each engine on a piece of a text against a brute force,
and the marked-text helpers against their definitions."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from devutils.textsearch import (
    AutomatonSearch,
    ExactSearch,
    PatternSearch,
    Span,
    holds_internal,
    is_word_char,
    marked_cut,
    unmark,
    unmarked_length,
)
from devutils.textsearch import mark_words as _mark_words

# Few characters, so that keys occur and overlap: letters, a space, a hyphen, "ß" (folds
# to "ss"), a combining acute accent (a word character that stdlib `re` does not count).
_ALPHABET = "abAB -ß\u0301"
_TEXTS = st.text(st.sampled_from(_ALPHABET), max_size=30)


def _text_of(keys: list[str]) -> st.SearchStrategy[str]:
    """Texts made of the keys and single characters, so that keys occur, overlap and
    touch."""
    pieces = st.one_of(st.sampled_from(keys), st.sampled_from(_ALPHABET))
    return st.lists(pieces, max_size=12).map("".join)


_KEYS = st.lists(
    st.text(st.sampled_from(_ALPHABET), min_size=1, max_size=4), min_size=1, max_size=5, unique=True
)


def _brute_force(
    keys: list[str], text: str, start: int, stop: int, whole_words: bool
) -> list[Span]:
    """Leftmost-longest in ``text[start:stop]``, a key at a time, position by position."""
    piece, spans, position = text[start:stop], [], 0
    while position < len(piece):
        fits = [
            (len(key), index)
            for index, key in enumerate(keys)
            if piece.startswith(key, position)
            and not (
                whole_words
                and (
                    (start + position > 0 and is_word_char(text[start + position - 1]))
                    or (
                        position + len(key) < len(piece)
                        and is_word_char(piece[position + len(key)])
                    )
                )
            )
        ]
        if not fits:
            position += 1
            continue
        length, index = max(fits)
        spans.append((index, position, position + length))
        position += length
    return spans


@given(_KEYS, st.data(), st.booleans())
def test_every_engine_finds_what_the_brute_force_finds(
    keys: list[str], data: st.DataObject, whole_words: bool
) -> None:
    text = data.draw(_text_of(keys))
    start = data.draw(st.integers(0, len(text)))
    stop = data.draw(st.integers(start, len(text)))
    exact = ExactSearch(keys, whole_words=whole_words, ignore_case=False, eager=True)
    automaton = AutomatonSearch(keys, whole_words=whole_words, ignore_case=False)
    pattern = PatternSearch(keys, whole_words=whole_words, unicode=True)
    stdlib = PatternSearch(keys, whole_words=whole_words, unicode=False)
    for begin, end in ((0, len(text)), (start, stop)):  # the whole text, and a piece
        expected = _brute_force(keys, text, begin, end, whole_words)
        assert exact.spans(text, begin, end) == expected
        assert automaton.spans(text, begin, end) in (expected, None)
        assert pattern.spans(text, begin, end) == expected
        if stdlib.exact_on(text, begin, end):
            assert stdlib.spans(text, begin, end) == expected


@given(_KEYS, st.data(), st.booleans())
def test_ignore_case_engines_agree(keys: list[str], data: st.DataObject, whole_words: bool) -> None:
    text = data.draw(_text_of([key.upper() for key in keys] + keys))
    exact = ExactSearch(keys, whole_words=whole_words, ignore_case=True, eager=False)
    expected = exact.spans(text, 0, len(text))
    found = AutomatonSearch(keys, whole_words=whole_words, ignore_case=True).spans(
        text, 0, len(text)
    )
    assert found in (expected, None)
    # Without a character that folds to several, the automaton always answers.
    if len(text.casefold()) == len(text):
        assert found == expected


@given(_TEXTS, st.booleans(), st.data())
def test_marked_text_helpers_match_their_definitions(
    text: str, word_before: bool, data: st.DataObject
) -> None:
    marked = _mark_words(text, word_before=word_before)
    assert unmark(marked) == text
    end = data.draw(st.integers(0, len(marked)))
    assert unmarked_length(marked, end) == len(unmark(marked[:end]))
    tail = data.draw(st.integers(0, len(text)))
    cut = marked_cut(marked, tail)
    # The first position whose text before it is all but the last *tail* characters.
    assert cut == min(
        p for p in range(len(marked) + 1) if unmarked_length(marked, p) == len(text) - tail
    )


def test_examples_of_the_internal_characters() -> None:
    assert holds_internal(["a", "b\x02"])
    assert not holds_internal(["a", "ß", "\U0010fefe"])
    assert holds_internal(["\U0010ff00"])
