"""Tests for devutils.textsearch and devutils.textengines: every engine of `Search`, on a
piece of a text, against a brute force, in the text's own positions; and the marking of
word gaps against its definition."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any
from unittest import mock

import ahocorasick_rs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from devutils.textengines import (
    Automaton,
    FoldsLonger,
    Found,
    Overlapping,
    OverlappingOnly,
    Pattern,
    folding_positions,
    holds_internal,
    is_word_char,
    marked_cut,
    unmark,
    unmarked_length,
)
from devutils.textengines import _mark_words as mark_words
from devutils.textsearch import Engine, Match, Search

# Few characters, so that keys occur and overlap: letters, a space, a hyphen, "ß" (folds
# to "ss"), a combining acute accent (a word character that stdlib `re` does not count).
_ALPHABET = "abAB -ß\u0301"
_TEXTS = st.text(st.sampled_from(_ALPHABET), max_size=30)
_ENGINES: list[Engine] = ["auto", "re", "automaton", "overlapping"]


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
) -> list[Match]:
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
        spans.append((start + position, start + position + length, index))
        position += length
    return spans


@given(_KEYS, st.data(), st.booleans())
def test_every_engine_finds_what_the_brute_force_finds(
    keys: list[str], data: st.DataObject, whole_words: bool
) -> None:
    text = data.draw(_text_of(keys))
    start = data.draw(st.integers(0, len(text)))
    stop = data.draw(st.integers(start, len(text)))
    for engine in _ENGINES:
        search = Search(keys, whole_words=whole_words, engine=engine)
        for begin, end in ((0, len(text)), (start, stop)):  # the whole text, and a piece
            expected = _brute_force(keys, text, begin, end, whole_words)
            assert list(search.finditer(text[:end], begin)) == expected, engine


@given(_KEYS, st.data(), st.booleans())
def test_ignore_case_engines_agree(keys: list[str], data: st.DataObject, whole_words: bool) -> None:
    keys = list({key.casefold(): key for key in reversed(keys)}.values())  # distinct folded
    text = data.draw(_text_of([key.upper() for key in keys] + keys))
    expected = list(
        Search(keys, whole_words=whole_words, ignore_case=True, engine="overlapping").finditer(text)
    )
    for engine in ("auto", "automaton"):
        search = Search(keys, whole_words=whole_words, ignore_case=True, engine=engine)
        assert list(search.finditer(text)) == expected, engine
    # Without a character that folds to several, the automaton always answers itself.
    automaton = Automaton(
        [key.casefold() for key in keys], whole_words=whole_words, ignore_case=True
    )
    found = None
    with contextlib.suppress(FoldsLonger, OverlappingOnly):
        found = [(start, end, key) for key, start, end in automaton.find(text, 0, len(text))]
    assert found in (expected, None)
    if len(text.casefold()) == len(text):
        assert found == expected


@pytest.mark.parametrize("window", [1, 2, 3, 7])
@pytest.mark.parametrize("whole_words", [False, True])
def test_matches_come_in_the_texts_positions_across_windows(window: int, whole_words: bool) -> None:
    keys = ["ab", "b", "abab", "a b"]
    text = "xabab b a b ab-b abb " * 4
    expected = _brute_force(keys, text, 3, len(text), whole_words)
    with mock.patch.multiple("devutils.textsearch", WINDOW=window, _LONG_KEYS=0):
        for engine in _ENGINES:
            search = Search(keys, whole_words=whole_words, engine=engine)
            assert list(search.finditer(text, 3)) == expected, engine


def test_a_text_handed_to_the_overlapping_engine_builds_its_automaton_once() -> None:
    # A key holding the marker character "\x02" hands every window to the overlapping
    # engine. Building its automaton per window cost a build of every key each time.
    keys = ["ab", "b", "a b", "b\x02"]
    text = "ab b\x02 b a b xab " * 40
    search = Search(keys, whole_words=True, engine="automaton")  # (not the re pattern)
    with (
        mock.patch.multiple("devutils.textsearch", WINDOW=8, _LONG_KEYS=0),
        mock.patch.object(ahocorasick_rs, "AhoCorasick", wraps=ahocorasick_rs.AhoCorasick) as built,
    ):
        found = list(search.finditer(text))
        assert list(search.finditer(text)) == found
    assert found == _brute_force(keys, text, 0, len(text), whole_words=True)
    assert built.call_count == 1


@pytest.mark.parametrize("ignore_case", [False, True])
def test_the_automaton_searches_a_text_between_its_markers(ignore_case: bool) -> None:
    # "\x02" and "\x03" mark word gaps inside the automaton's whole-word search; in the
    # text they are control characters, in no key and no word, so the automaton searches
    # the pieces between them and the overlapping engine (slow where keys overlap) never
    # sees the text. ("\udcff", a lone surrogate, splits the pieces too.)
    keys = ["a" * n for n in range(1, 30)] + ["ab", "b", "a b", "ß"]
    text = "aaaa\x02ab b\x03\x03a b\udcffaa\x02 ß \x02" * 5 + "a" * 100
    expected = _brute_force(keys, text, 0, len(text), whole_words=True)
    search = Search(keys, whole_words=True, ignore_case=ignore_case, engine="automaton")
    with mock.patch.object(Overlapping, "find", side_effect=AssertionError("overlapping")):
        assert list(search.finditer(text)) == expected
        assert list(search.finditer(text, 7)) == _brute_force(keys, text, 7, len(text), True)
        values = [f"<{i}>" for i in range(len(keys))]
        replacing = Search(keys, whole_words=True, ignore_case=ignore_case, replacements=values)
        joined: list[str] = []
        position = 0
        for start, end, key in expected:
            joined += (text[position:start], values[key])
            position = end
        assert replacing.subn(text) == ("".join(joined) + text[position:], len(expected))


def test_long_keys_widen_the_windows_so_little_is_searched_twice() -> None:
    # Each window is searched up to max_match_length + 1 characters past its end; with a
    # key longer than the window that overlap would be searched again and again.
    keys = ["x" * 5000, "ab"]
    text = "ab " * 100_000
    search = Search(keys, engine="automaton")
    searched: list[int] = []
    find = Automaton.find

    def counting(self: Automaton, text: str, start: int, stop: int) -> list[Found]:
        searched.append(stop - start)
        return find(self, text, start, stop)

    with mock.patch.object(Automaton, "find", counting):
        found = list(search.finditer(text))
    assert found == [(i, i + 2, 1) for i in range(0, len(text), 3)]
    assert len(searched) > 1  # (several windows)
    assert sum(searched) <= len(text) * 9 // 8


@pytest.mark.parametrize("engine", _ENGINES)
def test_a_whole_word_key_thousands_of_characters_long_is_found(engine: Engine) -> None:
    # (the trie-shaped `re` pattern took a Python call per character of a key)
    keys = ["ab c" * 1500, "ab", "y"]
    text = ("x " + keys[0] + " y ab ") * 3
    expected = _brute_force(keys, text, 0, len(text), whole_words=True)
    assert list(Search(keys, whole_words=True, engine=engine).finditer(text)) == expected


def test_a_key_over_a_thousand_characters_gets_the_automaton_that_builds_at_once() -> None:
    # ahocorasick_rs picks a DFA for up to 100 keys, and a DFA's build grows with the
    # square of a long repetitive key's length; such a key gets the contiguous NFA.
    with mock.patch.object(
        ahocorasick_rs, "AhoCorasick", wraps=ahocorasick_rs.AhoCorasick
    ) as built:
        long = Search(["ab" * 25_000, "b"], engine="automaton")
        Search(["a" * 1000, "b"], engine="automaton")
        overlapping = Search(["ab" * 25_000, "b"], engine="overlapping")
        text = "b " + "ab" * 25_000 + "b"
        assert list(long.finditer(text)) == list(overlapping.finditer(text))
    kinds = [call.kwargs.get("implementation") for call in built.call_args_list]
    nfa = ahocorasick_rs.Implementation.ContiguousNFA
    assert kinds == [nfa, None, nfa]
    assert list(long.finditer(text)) == [(0, 1, 1), (2, 50_002, 0), (50_002, 50_003, 1)]


def test_whole_word_keys_that_are_prefixes_of_one_another_hundreds_deep() -> None:
    # "a", "aa", ... nest the trie one group per key: deeper than `re` compiles, so
    # "auto" hands them to the automaton, and a forced "re" says it cannot take them.
    keys = ["a" * length for length in range(1, 501)]
    text = "a" * 300 + " " + "a" * 7 + " " + "a" * 600
    expected = [(0, 300, 299), (301, 308, 6)]
    assert _brute_force(keys, text, 0, len(text), whole_words=True) == expected
    assert list(Search(keys, whole_words=True).finditer(text)) == expected
    with pytest.raises(ValueError, match="engine 're' cannot compile these keys as whole words"):
        Search(keys, whole_words=True, engine="re")


def test_keys_fold_in_the_search_and_matches_name_the_given_keys() -> None:
    search = Search(["Straße", "S"], ignore_case=True)
    assert list(search.finditer("STRASSE s Straße ß")) == [(0, 7, 0), (8, 9, 1), (10, 16, 0)]
    assert search.max_match_length == len("strasse")


def joined(search: Search, text: str, replace: Callable[[int, str], str]) -> tuple[str, int]:
    """*text* with each of `finditer`'s matches replaced by ``replace(key, matched)``, and
    how many."""
    pieces, position, count = [], 0, 0
    for start, end, key in search.finditer(text):
        pieces += [text[position:start], replace(key, text[start:end])]
        position, count = end, count + 1
    return "".join(pieces) + text[position:], count


def _tagged(key: int, matched: str) -> str:
    return f"<{key}:{matched}>"


@given(
    _KEYS,
    st.data(),
    st.booleans(),
    st.booleans(),
    st.sampled_from(_ENGINES),
    st.integers(1, 9),
)
def test_subn_is_finditer_joined_with_the_values(
    keys: list[str],
    data: st.DataObject,
    whole_words: bool,
    ignore_case: bool,
    engine: Engine,
    window: int,
) -> None:
    if ignore_case:
        keys = list({key.casefold(): key for key in reversed(keys)}.values())
        engine = "auto" if engine == "re" else engine
    # values with the automaton's markers are replaced without the marked text
    values = data.draw(
        st.lists(st.text("xy\x02", max_size=2), min_size=len(keys), max_size=len(keys))
    )
    text = data.draw(_text_of(keys) | st.text(st.sampled_from(_ALPHABET), min_size=20))
    size = data.draw(st.sampled_from([window, 1 << 18]))
    with mock.patch.multiple("devutils.textsearch", WINDOW=size, _LONG_KEYS=0):
        search = Search(
            keys,
            whole_words=whole_words,
            ignore_case=ignore_case,
            engine=engine,
            replacements=values,
        )
        assert search.subn(text) == joined(search, text, lambda key, _: values[key])
        rendering = Search(
            keys,
            whole_words=whole_words,
            ignore_case=ignore_case,
            engine=engine,
            replacements=_tagged,
        )
        assert rendering.subn(text) == joined(rendering, text, _tagged)


def test_subn_on_texts_of_every_length_uses_the_fastest_engine_and_agrees() -> None:
    keys, values = ["new", "new york", "york"], ["old", "NYC", "YRK"]
    for whole_words in (False, True):
        search = Search(keys, whole_words=whole_words, replacements=values)
        rendering = Search(keys, whole_words=whole_words, replacements=_tagged)
        for text in ("new york, new", "new york, newyork " * 200, "cafe\u0301 new york " * 9):
            assert search.subn(text) == joined(search, text, lambda key, _: values[key])
            assert rendering.subn(text) == joined(rendering, text, _tagged)


def test_subn_needs_replacements() -> None:
    with pytest.raises(TypeError, match="subn needs a Search built with replacements"):
        Search(["a"]).subn("a")


def test_an_unknown_engine_is_named() -> None:
    with pytest.raises(
        ValueError, match="engine must be 'auto', 're', 'automaton' or 'overlapping', got 'exact'"
    ):
        Search(["a"], engine="exact")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="engine 're' does not fold case"):
        Search(["a"], ignore_case=True, engine="re")


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        # "ab" searched for "a" and "b"; [1]: "object of type 'int' has no len()"
        (lambda: Search("ab"), TypeError, "keys must be a sequence of str (a list or a tuple)"),
        (lambda: Search([1]), TypeError, "keys must be str, got int 1"),  # type: ignore[list-item]
        # ahocorasick_rs: "You passed in an empty string as a pattern"
        (lambda: Search(["", "a"]), ValueError, "keys must be non-empty and without lone"),
        (lambda: Search(["a\udc80"]), ValueError, "keys must be non-empty and without lone"),
        (lambda: Search(["a", "a"]), ValueError, "keys must be distinct, got 'a' twice"),
        (
            lambda: Search(["A", "a"], ignore_case=True),
            ValueError,
            "keys must be distinct, got 'a' (case-folded) twice",
        ),
        (lambda: Search(["a"], ignore_case="yes"), TypeError, "ignore_case must be a bool"),  # type: ignore[arg-type]
        (lambda: Search(["a"], whole_words=1), TypeError, "whole_words must be a bool"),  # type: ignore[arg-type]
        (lambda: Search(["a"], engine=None), TypeError, "engine must be 'auto', 're'"),  # type: ignore[arg-type]
        # an IndexError from subn
        (lambda: Search(["a", "b"], replacements=["x"]), ValueError, "replacements must be one"),
        (lambda: Search(["a"], replacements="x"), TypeError, "replacements must be a sequence"),
        (lambda: Search(["a"], replacements=[1]), TypeError, "replacements must be str, got int"),  # type: ignore[list-item]
        (lambda: Search(["a"]).finditer(b"abc"), TypeError, "text must be str, got bytes"),  # type: ignore[arg-type]
        (lambda: Search(["a"]).finditer("abc", 10), ValueError, "pos must be between 0 and"),
        (lambda: Search(["a"]).finditer("abc", -1), ValueError, "pos must be between 0 and"),
        (lambda: Search(["a"]).finditer("abc", 1.0), TypeError, "pos must be an int, got float"),  # type: ignore[arg-type]
        (lambda: Search(["a"], replacements=["b"]).subn(b"a"), TypeError, "text must be str"),  # type: ignore[arg-type]
    ],
)
def test_bad_arguments_are_named(
    call: Callable[[], object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        call()
    assert str(caught.value).startswith(message)


def test_no_keys_find_nothing() -> None:
    assert list(Search([]).finditer("abc")) == []
    assert Search([]).max_match_length == 0


@given(_TEXTS, st.booleans())
def test_word_gaps_are_marked_as_defined(text: str, word_before: bool) -> None:
    # Gap g (before text[g]) gets _END if text[g] is not a word character (or g is the
    # end), then _START if text[g - 1] is not one (or g is 0 and not word_before).
    marked = []
    for gap in range(len(text) + 1):
        if gap == len(text) or not is_word_char(text[gap]):
            marked.append("\x03")
        if (gap == 0 and not word_before) or (gap > 0 and not is_word_char(text[gap - 1])):
            marked.append("\x02")
        marked.append(text[gap : gap + 1])
    assert mark_words(text, word_before=word_before) == "".join(marked)


def test_examples_of_the_internal_characters() -> None:
    assert holds_internal(["a", "b\x02"])
    assert not holds_internal(["a", "ß", "\U0010fefe"])
    assert holds_internal(["\U0010ff00"])


# -- properties added for the standard ---

# The characters of the text engines' special cases: "ß", "ﬁ" and "İ" fold to several
# ("ss", "fi", "i" + U+0307), U+017F (long s) to one ("s"); "\x02" is one of the
# automaton's markers; "\udcff" (a lone surrogate, as surrogateescape gives) is in no
# key, and splits a text.
_FOLDING_ALPHABET = "abAB -ßsS\u017fﬁfiİ\u0301\x02"
_FOLDING_KEYS = st.lists(
    st.text(st.sampled_from(_FOLDING_ALPHABET), min_size=1, max_size=4), min_size=1, max_size=5
)


def _brute_force_found(
    keys: list[str], text: str, start: int, stop: int, whole_words: bool, ignore_case: bool
) -> list[Found]:
    """Leftmost-longest in ``text[start:stop]``, as ``(key_index, begin, end)`` in the
    piece's positions: at each position every end, longest first, the piece between
    compared (case-folded with *ignore_case*) with each key."""
    fold: Callable[[str], str] = str.casefold if ignore_case else str
    index = {key: i for i, key in enumerate(keys)}
    piece, found, position = text[start:stop], [], 0
    while position < len(piece):
        for end in range(len(piece), position, -1):
            key = fold(piece[position:end])
            if key not in index:
                continue
            if whole_words and (
                (start + position > 0 and is_word_char(text[start + position - 1]))
                or (end < len(piece) and is_word_char(piece[end]))
            ):
                continue
            found.append((index[key], position, end))
            position = end
            break
        else:
            position += 1
    return found


@given(_FOLDING_KEYS, st.data(), st.booleans(), st.booleans())
def test_the_overlapping_engine_finds_what_the_brute_force_finds(
    keys: list[str], data: st.DataObject, whole_words: bool, ignore_case: bool
) -> None:
    # The engine of last resort, for keys with markers and texts the automaton refuses:
    # with ignore_case it is given the keys case-folded, as `Search` gives them.
    keys = list(dict.fromkeys(key.casefold() if ignore_case else key for key in keys))
    pieces = [*keys, *(key.upper() for key in keys), *_FOLDING_ALPHABET, "\udcff"]
    text = data.draw(st.lists(st.sampled_from(pieces), max_size=12).map("".join))
    start = data.draw(st.integers(0, len(text)))
    stop = data.draw(st.integers(start, len(text)))
    engine = Overlapping(keys, whole_words=whole_words, ignore_case=ignore_case)
    for begin, end in ((0, len(text)), (start, stop)):
        expected = _brute_force_found(keys, text, begin, end, whole_words, ignore_case)
        assert engine.find(text, begin, end) == expected


@given(_KEYS, st.data(), st.booleans(), st.booleans(), st.sampled_from([None, None, 3, 12]))
def test_the_re_engine_finds_what_the_brute_force_finds_where_it_applies(
    keys: list[str],
    data: st.DataObject,
    whole_words: bool,
    by_regex: bool,
    shorter_than: int | None,
) -> None:
    # (a length limit only without whole words, as `Search` builds it; `regex` with or
    # without: without, it found only whole words)
    shorter_than = None if whole_words else shorter_than
    keys = list(dict.fromkeys([*keys, *(key[:-1] for key in keys if len(key) > 1)]))  # prefixes
    text = data.draw(_text_of(keys))
    start = data.draw(st.integers(0, len(text)))
    stop = data.draw(st.integers(start, len(text)))
    pattern = Pattern(keys, whole_words=whole_words, by_regex=by_regex, shorter_than=shorter_than)
    for begin, end in ((0, len(text)), (start, stop)):  # the whole text, and a piece
        applies = pattern.applies(text, begin, end)
        if shorter_than is not None:
            assert applies == (end - begin < shorter_than)
        elif not whole_words or by_regex or text.isascii():
            assert applies  # stdlib `re` is only unsure of words outside ASCII
        if applies:
            expected = _brute_force_found(keys, text, begin, end, whole_words, ignore_case=False)
            assert pattern.find(text, begin, end) == expected


@given(
    st.text(st.sampled_from("aßsSﬁİ \u0301\U0001f600"), max_size=20),
    st.data(),
    st.integers(0, 6),
)
def test_folding_positions_are_the_characters_that_fold_to_several(
    text: str, data: st.DataObject, most: int
) -> None:
    start = data.draw(st.integers(0, len(text)))
    stop = data.draw(st.integers(start, len(text)))
    found = [i for i in range(start, stop) if len(text[i].casefold()) > 1]
    assert folding_positions(text, start, stop, most) == (found if len(found) <= most else None)


@given(
    st.lists(
        st.text(st.sampled_from("a\x01\x02\x03\x04ß\U0010fefe\U0010ff00\U0010ff7f\U0010ffff")),
        max_size=4,
    )
)
def test_holds_internal_finds_a_marker_or_a_placeholder_in_any_key(keys: list[str]) -> None:
    internal = {"\x02", "\x03", *map(chr, range(0x10FF00, 0x110000))}
    assert holds_internal(keys) == any(char in internal for key in keys for char in key)


@given(_TEXTS, st.booleans())
def test_a_marked_text_gives_back_its_text_its_lengths_and_its_cuts(
    text: str, word_before: bool
) -> None:
    marked = mark_words(text, word_before=word_before)
    assert unmark(marked) == text
    for end in range(len(marked) + 1):
        assert unmarked_length(marked, end) == len(unmark(marked[:end]))
    for tail in range(len(text) + 1):
        # the first position where the text's last *tail* characters are all still ahead
        first = min(
            position
            for position in range(len(marked) + 1)
            if len(unmark(marked[:position])) == len(text) - tail
        )
        assert marked_cut(marked, tail) == first


ENGINE_FINDS: list[tuple[str, Callable[[Any, Any, Any], object]]] = [
    ("Pattern.find", Pattern(["cat"], whole_words=False).find),
    ("Pattern.applies", Pattern(["cat"], whole_words=True).applies),
    ("Automaton.find", Automaton(["cat"], whole_words=False, ignore_case=True).find),
    ("find_spelled", Automaton(["cat"], whole_words=False, ignore_case=True).find_spelled),
    ("find_marked", Automaton(["cat"], whole_words=True, ignore_case=False).find_marked),
    ("Overlapping.find", Overlapping(["cat"], whole_words=False, ignore_case=False).find),
    ("folding_positions", lambda text, start, stop: folding_positions(text, start, stop, 5)),
]


@pytest.mark.parametrize(("name", "find"), ENGINE_FINDS)
@pytest.mark.parametrize(
    ("text", "start", "stop", "error", "message"),
    [
        ("a cat", -1, 5, ValueError, "start and stop must be 0 <= start <= stop <= len"),
        ("a cat", 0, 6, ValueError, r"len\(text\) \(5\), got 0 and 6"),
        ("a cat", 3, 2, ValueError, "got 3 and 2"),
        ("a cat", 10**30, 5, ValueError, "got 1000000000000000000000000000000 and 5"),
        (None, 0, 5, TypeError, "text must be a str, got NoneType None"),
        (b"a cat", 0, 5, TypeError, "text must be a str, got bytes"),
        ("a cat", 0.0, 5, TypeError, "start must be an int, got float 0.0"),
        ("a cat", 0, True, TypeError, "stop must be an int, got bool True"),
    ],
)
def test_an_engine_refuses_what_names_no_piece_of_a_text(
    name: str,
    find: Callable[[Any, Any, Any], object],
    text: object,
    start: object,
    stop: object,
    error: type[Exception],
    message: str,
) -> None:
    # start -1 was read as a slice reads it (a wrong span, or nothing), 10**30 an
    # OverflowError, None an AttributeError or True (Pattern.applies)
    with pytest.raises(error, match=message):
        find(text, start, stop)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: marked_cut("ab", 5), ValueError, r"tail must be in 0..len\(marked\) \(2\)"),
        (lambda: marked_cut("\x02ab\x03\x02", 3), ValueError, "at most the length of marked's"),
        (lambda: marked_cut("ab", 0.5), TypeError, "tail must be an int, got float"),  # type: ignore[arg-type]
        (lambda: unmarked_length("abc", -1), ValueError, "end must be in 0..len"),  # was -1
        (lambda: unmark(None), TypeError, "marked must be a str, got NoneType"),  # type: ignore[arg-type]
        (lambda: folding_positions("Straße", 0, 6, "x"), TypeError, "most must be an int"),  # type: ignore[arg-type]
        (lambda: folding_positions("Straße", 0, 6, -1), ValueError, "most must be an int"),
    ],
)
def test_the_marked_piece_helpers_refuse_bad_positions(
    call: Callable[[], object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        call()


@given(st.text(alphabet="ab\x02\x03 ", max_size=12), st.data())
def test_marked_cut_and_unmarked_length_agree_with_the_unmarked_text(
    marked: str, data: st.DataObject
) -> None:
    # The reference: the text without its markers, counted by hand.
    text = unmark(marked)
    end = data.draw(st.integers(0, len(marked)))
    assert unmarked_length(marked, end) == len(unmark(marked[:end]))
    tail = data.draw(st.integers(0, len(text)))
    assert unmarked_length(marked, marked_cut(marked, tail)) == len(text) - tail
