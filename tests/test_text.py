"""Tests for devutils.text: worked examples, every documented error, properties."""

from __future__ import annotations

import io
import pickle
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import regex
from hypothesis import assume, given
from hypothesis import strategies as st

from devutils.text import Engine, MappingKeyError, Replacer, is_word_char, multi_replace
from devutils.textsearch import Search
from devutils.textstream import MAX_CHUNK, StreamReplacer, check_chunk_size, replace_stream
from tests.text_reference import reference

DOCS = Path(__file__).resolve().parent.parent / "docs" / "text.md"


def test_ruby_gsub_idiom() -> None:
    gsubdict = {"ストロベリー": "strawberry", "パイナップル": "pineapple"}
    text = "ストロベリーパフェとパイナップルジュース"
    assert multi_replace(text, gsubdict) == "strawberryパフェとpineappleジュース"


def test_swap_is_not_rescanned() -> None:
    assert multi_replace("a b a b", {"a": "b", "b": "a"}) == "b a b a"
    assert multi_replace("abc", {"a": "abc", "b": "a"}) == "abcac"


@pytest.mark.parametrize(
    "mapping",
    [{"new": "old", "new york": "NYC"}, {"new york": "NYC", "new": "old"}],
    ids=["short-first", "long-first"],
)
def test_longest_key_wins_in_either_order(mapping: dict[str, str]) -> None:
    assert multi_replace("new york, new jersey", mapping) == "NYC, old jersey"


def test_many_keys_prefixes_both_orders() -> None:
    keys = {"a" * k: str(k) for k in range(1, 40)}
    assert multi_replace("a" * 50, keys) == "39" + "11"
    reversed_keys = dict(reversed(list(keys.items())))
    assert multi_replace("a" * 50, reversed_keys) == "3911"


@pytest.mark.parametrize("key", [".", "*", "a|b", "(x)", "\\", "\\1", "$", "^", "[a-z]", "+?"])
def test_metacharacters_are_literal(key: str) -> None:
    text = f"<{key}>x"
    assert multi_replace(text, {key: "K"}) == "<K>x"
    assert multi_replace("abc", {key: "K"}) == ("abc" if key not in "abc" else "K")


def test_backslash_in_value_is_literal() -> None:
    assert multi_replace("a", {"a": r"\1\n\\"}) == r"\1\n\\"


def test_empty_mapping_and_empty_text() -> None:
    assert multi_replace("unchanged", {}) == "unchanged"
    assert multi_replace("", {"a": "b"}) == ""
    assert Replacer({}).replace_count("x") == ("x", 0)


def test_callable_values_get_the_matched_text() -> None:
    assert multi_replace(
        "Hello WORLD", {"hello": str.upper, "world": str.lower}, ignore_case=True
    ) == ("HELLO world")


def test_callable_returning_non_str_is_an_error() -> None:
    with pytest.raises(TypeError, match=r"replacement for 'a' must return str, got int 1"):
        multi_replace("a", {"a": lambda _m: 1})  # type: ignore[dict-item, return-value]


def test_replace_count_and_call() -> None:
    replacer = Replacer({"cat": "dog", "dog": "cat"})
    assert replacer.replace_count("cat dog cat") == ("dog cat dog", 3)
    assert replacer("cat") == replacer.replace("cat") == "dog"


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        ("STRASSE", "straße", "X"),
        ("straße", "STRASSE", "X"),
        ("ΟΔΟΣ", "οδος", "X"),
        ("οδος", "ΟΔΟΣ", "X"),
        ("ﬁne", "FINE", "X"),
        ("Ǆ", "ǆ", "X"),
    ],
)
def test_ignore_case_uses_full_case_folding(text: str, key: str, expected: str) -> None:
    assert multi_replace(text, {key: "X"}, ignore_case=True) == expected


def test_ignore_case_multi_char_fold_never_matches_half_a_character() -> None:
    # "ß" folds to "ss": the key "s" must not match half of it.
    assert multi_replace("ßs", {"s": "z"}, ignore_case=True) == "ßz"
    assert multi_replace("aßb", {"ss": "S"}, ignore_case=True) == "aSb"


def test_ignore_case_conflicting_keys_are_named() -> None:
    with pytest.raises(
        ValueError, match=r"keys 'Apple' and 'APPLE' are equal when case is ignored"
    ):
        Replacer({"Apple": "x", "APPLE": "y"}, ignore_case=True)
    # The same value is no conflict.
    assert multi_replace("aPPle", {"Apple": "x", "APPLE": "x"}, ignore_case=True) == "x"


def test_whole_words_symbol_edges() -> None:
    mapping = {"C++": "cpp", ".NET": "dotnet"}
    text = "C++ and .NET, not C++11 or x.NET"
    assert multi_replace(text, mapping, whole_words=True) == "cpp and dotnet, not C++11 or x.NET"


def test_whole_words_falls_back_to_shorter_key() -> None:
    mapping = {"new": "old", "new york": "NYC"}
    assert multi_replace("new yorker", mapping, whole_words=True) == "old yorker"
    assert multi_replace("new york", mapping, whole_words=True) == "NYC"
    assert multi_replace("renew", mapping, whole_words=True) == "renew"


def test_whole_words_unicode_letters_are_word_characters() -> None:
    assert multi_replace("café cafébar", {"café": "X"}, whole_words=True) == "X cafébar"


def test_preserve_case() -> None:
    mapping = {"apple": "orange", "new york": "new jersey"}
    text = "apple Apple APPLE aPPle New York"
    expected = "orange Orange ORANGE orange New Jersey"
    assert multi_replace(text, mapping, ignore_case=True, preserve_case=True) == expected


@pytest.mark.parametrize(
    ("text", "key", "value", "expected"),
    [
        ("User_Id", "user_id", "account_id", "Account_Id"),
        ("USER_ID", "user_id", "account_id", "ACCOUNT_ID"),
        ("user_id", "user_id", "Account_ID", "Account_ID"),
        ("Foo-Bar", "foo-bar", "baz-qux", "Baz-Qux"),
        ("Foo-Bar", "foo-bar", "baz-qux-quux", "Baz-qux-quux"),  # parts differ: as a whole
        ("Foo_Bar-Baz", "foo_bar-baz", "a_b-c", "A_b-c"),  # both split: as a whole (title)
        ("Foo-Bar_Baz", "foo-bar_baz", "a-b_c_d", "A-B_c_d"),  # by "-" only, then as a whole
    ],
)
def test_preserve_case_part_by_part(text: str, key: str, value: str, expected: str) -> None:
    # VS Code's preserve case: the case of each `-` or `_` part, where both sides have as
    # many parts.
    got = multi_replace(text, {key: value}, ignore_case=True, preserve_case=True)
    assert got == expected == reference(text, {key: value}, ignore_case=True, preserve_case=True)


@given(
    parts=st.lists(st.sampled_from(["user", "User", "USER", "id", "Id", "uSer"]), min_size=1),
    separator=st.sampled_from("-_ "),
    value=st.lists(st.sampled_from(["account", "x", "Big", "a b"]), min_size=1),
)
def test_preserve_case_part_by_part_matches_reference(
    parts: list[str], separator: str, value: list[str]
) -> None:
    text = separator.join(parts)
    mapping = {text.lower(): separator.join(value)}
    expected = reference(text, mapping, ignore_case=True, preserve_case=True)
    assert multi_replace(text, mapping, ignore_case=True, preserve_case=True) == expected


def test_options_must_be_bool() -> None:
    with pytest.raises(TypeError, match="ignore_case must be a bool, got int 1"):
        Replacer({"a": "b"}, ignore_case=1)  # type: ignore[arg-type]


@pytest.mark.parametrize("option", ["ignore_case", "whole_words", "preserve_case"])
def test_options_are_checked_even_when_the_cache_holds_the_mapping(option: str) -> None:
    mapping = {"a": "x"}
    multi_replace("A", mapping, **{option: True})  # now cached (1 == True as a dict key)
    with pytest.raises(TypeError, match=f"{option} must be a bool, got int 1"):
        multi_replace("A", mapping, **{option: 1})  # type: ignore[arg-type]


def test_empty_key_is_refused() -> None:
    with pytest.raises(ValueError, match="mapping keys must be non-empty"):
        multi_replace("a", {"": "b"})


@pytest.mark.parametrize("key", [b"a", 1, ("a",), None])
def test_non_str_key_is_named(key: object) -> None:
    with pytest.raises(TypeError, match=re.escape(repr(key))):
        multi_replace("a", {key: "b"})  # type: ignore[dict-item]


def test_non_str_value_is_named() -> None:
    with pytest.raises(TypeError, match=r"value for key 'a' must be str or callable, got int 1"):
        multi_replace("a", {"a": 1})  # type: ignore[dict-item]


@pytest.mark.parametrize("text", [b"a", None, 1, ["a"]])
def test_non_str_text(text: object) -> None:
    with pytest.raises(TypeError, match="text must be str"):
        multi_replace(text, {"a": "b"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="text must be str"):
        Replacer({"a": "b"}).replace(text)  # type: ignore[arg-type]


@pytest.mark.parametrize("mapping", [[("a", "b")], "ab", None])
def test_non_mapping(mapping: object) -> None:
    with pytest.raises(TypeError, match="mapping must be a Mapping"):
        multi_replace("a", mapping)  # type: ignore[arg-type]


def test_multi_replace_sees_dict_mutation() -> None:
    mapping = {"a": "1"}
    assert multi_replace("ab", mapping) == "1b"
    mapping["b"] = "2"
    assert multi_replace("ab", mapping) == "12"
    mapping["a"] = "x"
    assert multi_replace("ab", mapping) == "x2"


def test_multi_replace_reuses_compiled_pattern() -> None:
    mapping = {"q1": "a", "q2": "b"}
    multi_replace("q1", mapping)
    builds = 0
    original = Replacer.__init__

    def counting(self: Replacer, *args: object, **kwargs: object) -> None:
        nonlocal builds
        builds += 1
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    with mock.patch.object(Replacer, "__init__", counting):
        for _ in range(5):
            assert multi_replace("q1 q2", mapping) == "a b"
        assert builds == 0
        other = {"x": "y"}
        assert multi_replace("x", other) == "y"
        assert multi_replace("q1", mapping) == "a"  # the earlier mapping is still cached
        assert builds == 1
        mapping["q1"] = "c"
        assert multi_replace("q1", mapping) == "c"
        assert builds == 2


def test_unhashable_callable_value_still_works() -> None:
    class Upper:
        __hash__ = None  # type: ignore[assignment]

        def __call__(self, matched: str) -> str:
            return matched.upper()

    assert multi_replace("ab", {"a": Upper()}) == "Ab"


def test_replacer_is_a_snapshot_and_immutable() -> None:
    mapping = {"a": "1"}
    replacer = Replacer(mapping)
    mapping["a"] = "2"
    assert replacer("a") == "1"
    with pytest.raises(AttributeError):
        replacer.x = 1  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        replacer.ignore_case = True  # type: ignore[misc]
    with pytest.raises(TypeError):
        replacer.mapping["a"] = "3"  # type: ignore[index]


@pytest.mark.parametrize("size", [2, 100])
@pytest.mark.parametrize("options", [{}, {"ignore_case": True}, {"whole_words": True}])
def test_pickle_round_trip(size: int, options: dict[str, bool]) -> None:
    mapping = {f"k{i}": f"v{i}" for i in range(size)} | {"new": "old", "new york": "NYC"}
    replacer = Replacer(mapping, **options)  # type: ignore[arg-type]
    clone = pickle.loads(pickle.dumps(replacer))
    text = "new york k1 K2 new"
    assert clone(text) == replacer(text)
    assert clone.mapping == replacer.mapping
    assert (clone.ignore_case, clone.whole_words) == (replacer.ignore_case, replacer.whole_words)


def test_process_pool() -> None:
    replacer = Replacer({f"w{i}": f"<{i}>" for i in range(200)})
    texts = [f"w{i} w{i + 1} w{i}x" for i in range(20)]
    with ProcessPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(replacer.replace, texts))
    assert results == [replacer(t) for t in texts]


def test_threads_share_one_replacer() -> None:
    replacer = Replacer({f"w{i}": f"<{i}>" for i in range(200)}, whole_words=True)
    text = " ".join(f"w{i}" for i in range(300)) * 10
    expected = replacer(text)
    results: list[str] = []

    def work() -> None:
        results.extend(replacer(text) for _ in range(20))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 80


ENGINES: list[Engine] = ["auto", "re", "automaton", "overlapping"]
CASELESS_ENGINES: list[Engine] = ["auto", "automaton", "overlapping"]  # "re" does not fold case

ALPHABET = "abAB sSß_-.é"
keys = st.text(ALPHABET, min_size=1, max_size=4)
# Filler keys that never occur push a mapping from the `re` engine to Aho-Corasick.
FILLER = {f"\x00{i}": "" for i in range(40)}


@st.composite
def mappings(draw: st.DrawFn) -> dict[str, str]:
    mapping = draw(st.dictionaries(keys, st.text(ALPHABET, max_size=3), max_size=8))
    if draw(st.booleans()):
        mapping |= FILLER
    return mapping


def replaced_by_matches(replacer: Replacer, text: str) -> str:
    pieces, position = [], 0
    for start, end, replacement in replacer.iter_matches(text):
        pieces += [text[position:start], replacement]
        position = end
    return "".join(pieces) + text[position:]


@given(
    text=st.text(ALPHABET, max_size=30),
    mapping=mappings(),
    whole_words=st.booleans(),
    name=st.sampled_from(ENGINES),
)
def test_matches_reference(
    text: str, mapping: dict[str, str], whole_words: bool, name: Engine
) -> None:
    expected = reference(text, mapping, whole_words=whole_words)
    replacer = Replacer(mapping, whole_words=whole_words, engine=name)
    assert replacer(text) == expected
    assert replacer.replace_count(text)[0] == expected
    assert replaced_by_matches(replacer, text) == expected
    assert multi_replace(text, mapping, whole_words=whole_words) == expected


def without_conflicts(mapping: dict[str, str]) -> dict[str, str]:
    """*mapping* with every key that folds like an earlier one given that one's value."""
    folded: dict[str, str] = {}
    for key, value in mapping.items():
        folded.setdefault(key.casefold(), value)
    return {key: folded[key.casefold()] for key in mapping}


@given(
    text=st.text(ALPHABET, max_size=30),
    mapping=mappings(),
    whole_words=st.booleans(),
    preserve_case=st.booleans(),
    name=st.sampled_from(CASELESS_ENGINES),
)
def test_ignore_case_matches_reference(
    text: str, mapping: dict[str, str], whole_words: bool, preserve_case: bool, name: Engine
) -> None:
    mapping = without_conflicts(mapping)
    options = {"ignore_case": True, "whole_words": whole_words, "preserve_case": preserve_case}
    expected = reference(text, mapping, **options)
    assert Replacer(mapping, **options, engine=name)(text) == expected
    functions = {key.casefold(): (lambda _m, v=value: v) for key, value in mapping.items()}
    with_callables = {key: functions[key.casefold()] for key in mapping}
    assert Replacer(with_callables, **options, engine=name)(text) == expected


# -- every script: Unicode's word characters, case folding, surrogates ------------------------

UNICODE_WORD = regex.compile(r"\w")
"""The definition whole_words promises (UTS #18 Annex C), straight from `regex`."""


def unicode_reference(text: str, mapping: Mapping[str, str], **options: bool) -> str:
    """`reference` with word characters decided by `regex` itself, not devutils."""
    fold: Callable[[str], str] = str.casefold if options.get("ignore_case") else str
    table = {fold(key): value for key, value in mapping.items()}
    whole = options.get("whole_words", False)

    def word(char: str) -> bool:
        return UNICODE_WORD.match(char) is not None

    longest = max(map(len, table), default=0)  # a match covers at most this many characters
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        for j in range(min(n, i + longest), i, -1):
            piece = fold(text[i:j])
            if piece in table and not (
                whole and ((i > 0 and word(text[i - 1])) or (j < n and word(text[j])))
            ):
                out.append(table[piece])
                i = j
                break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


# Devanagari, Bengali, Tamil, Thai, pointed Hebrew, Arabic with harakat, NFD Latin, Greek
# with final sigma, German, ligatures, a ZWJ family emoji, a lone surrogate, and the
# private-use characters the automaton uses internally.
SCRIPT_CHARS = (
    "हिन्दी भाषा"
    "বাংলা"
    "தமிழ்"
    "ภาษาไทย"
    "שָׁלוֹם"
    "مَرْحَبًا"
    "cafe\u0301"
    "ΟΔΟΣ οδός ς"
    "Straße STRASSE ẞ"
    "ﬁnd ﬀ ŉ İı"
    "👨\u200d👩\u200d👧 👍🏽"
    " .,-_½²Ⓐ‿"
    "\udcff\x02\x03\U0010fffd\U0010ff00"
)
script_text = st.text(st.sampled_from(sorted(set(SCRIPT_CHARS))), max_size=24)
script_keys = st.text(
    st.sampled_from(sorted(set(SCRIPT_CHARS) - {"\udcff"})), min_size=1, max_size=4
)


@st.composite
def script_mappings(draw: st.DrawFn) -> dict[str, str]:
    text = draw(script_text)
    # keys mostly drawn from the text itself, so that they occur
    pieces = st.integers(0, max(len(text) - 1, 0)).flatmap(
        lambda i: st.integers(i + 1, min(len(text), i + 4)).map(lambda j: text[i:j])
    )
    drawn = draw(st.lists(pieces if text else script_keys, max_size=5))
    drawn += draw(st.lists(script_keys, max_size=3))
    keys_ = [key for key in drawn if key and not any("\ud800" <= c <= "\udfff" for c in key)]
    mapping = {key: f"<{i}>" for i, key in enumerate(keys_)}
    if draw(st.booleans()):
        mapping |= FILLER
    return mapping


@given(
    text=script_text,
    mapping=script_mappings(),
    whole_words=st.booleans(),
    ignore_case=st.booleans(),
)
def test_every_engine_agrees_with_the_unicode_reference(
    text: str, mapping: dict[str, str], whole_words: bool, ignore_case: bool
) -> None:
    if ignore_case:
        mapping = without_conflicts(mapping)
    options = {"whole_words": whole_words, "ignore_case": ignore_case}
    expected = unicode_reference(text, mapping, **options)
    for name in CASELESS_ENGINES if ignore_case else ENGINES:
        replacer = Replacer(mapping, **options, engine=name)
        assert replacer(text) == expected, name
        assert replaced_by_matches(replacer, text) == expected, name
        # texts past 2,000 characters go through the automaton in "auto"
        long_text = (text + " ") * (2001 // (len(text) + 1) + 1)
        assert replacer(long_text) == unicode_reference(long_text, mapping, **options), name


@given(
    text=st.text(st.sampled_from("ab .Aß\udcff"), min_size=8, max_size=60)
    | st.text(st.sampled_from(sorted(set(SCRIPT_CHARS))), min_size=8, max_size=60),
    mapping=script_mappings(),
    whole_words=st.booleans(),
    ignore_case=st.booleans(),
    window=st.integers(1, 9),
    data=st.data(),
)
def test_windows_of_a_long_text_join_seamlessly(
    text: str,
    mapping: dict[str, str],
    whole_words: bool,
    ignore_case: bool,
    window: int,
    data: st.DataObject,
) -> None:
    # A text longer than WINDOW is searched a window at a time; with tiny windows every
    # match straddles or touches an edge, and a "ß" or a surrogate lands in a later one.
    for _ in range(data.draw(st.integers(1, 4))):
        start = data.draw(st.integers(0, len(text) - 1))
        key = text[start : start + data.draw(st.integers(1, 5))]
        if key and not any("\ud800" <= char <= "\udfff" for char in key):
            mapping[key] = f"[{len(mapping)}]"
    if ignore_case:
        mapping = without_conflicts(mapping)
    options = {"whole_words": whole_words, "ignore_case": ignore_case}
    expected = unicode_reference(text, mapping, **options)
    with mock.patch.multiple("devutils.textsearch", WINDOW=window, _LONG_KEYS=0):
        for name in CASELESS_ENGINES if ignore_case else ENGINES:
            replacer = Replacer(mapping, **options, engine=name)
            assert replacer.replace_count(text)[0] == expected, name
            assert replaced_by_matches(replacer, text) == expected, name


@pytest.mark.parametrize(
    ("text", "mapping", "window", "expected"),
    [
        ("AAAAAAA", {"AA": "x"}, 1, "xxxA"),  # every match crosses a window's end
        ("....abcde......", {"abcde": "X", "de": "Y"}, 3, "....X......"),  # not "XcY"
        ("ab ab ß ab", {"AB": "x", "SS": "y"}, 2, "x x y x"),  # ß in a later window
    ],
)
def test_a_match_across_windows_is_taken_once(
    text: str, mapping: dict[str, str], window: int, expected: str
) -> None:
    with mock.patch.multiple("devutils.textsearch", WINDOW=window, _LONG_KEYS=0):
        for name in CASELESS_ENGINES:
            replacer = Replacer(mapping, ignore_case=True, engine=name)
            assert replacer(text) == expected, name
            assert replaced_by_matches(replacer, text) == expected, name


@pytest.mark.parametrize("window", [1, 2, 3, 5])
def test_whole_words_across_windows_of_the_marked_text(window: int) -> None:
    # The automaton replaces whole words in the text with its word gaps marked: the
    # windows' ends must still be counted in the text's own characters.
    text = "x y, x yy x-y x " * 5
    mapping = {"x": "1", "y": "2", "x y": "3"}
    expected = unicode_reference(text, mapping, whole_words=True)
    with mock.patch.multiple("devutils.textsearch", WINDOW=window, _LONG_KEYS=0):
        for name in ENGINES:
            replacer = Replacer(mapping, whole_words=True, engine=name)
            assert replacer(text) == expected, name
            assert replaced_by_matches(replacer, text) == expected, name


@pytest.mark.parametrize(
    ("text", "mapping", "expected"),
    [
        ("हिन्दी भाषा", {"ह": "X"}, "हिन्दी भाषा"),  # a vowel sign follows: inside a word
        ("हिन्दी भाषा", {"भाषा": "X"}, "हिन्दी X"),
        ("cafe\u0301 au lait", {"cafe": "X"}, "cafe\u0301 au lait"),  # NFD: é is e + accent
        ("cafe\u0301 au lait", {"cafe\u0301": "X"}, "X au lait"),
        ("👨\u200d👩\u200d👧", {"👩": "X"}, "👨\u200d👩\u200d👧"),  # ZWJ joins the sequence
        ("שָׁלוֹם עולם", {"ש": "X"}, "שָׁלוֹם עולם"),
    ],
)
def test_whole_words_never_split_marks_or_joined_sequences(
    text: str, mapping: dict[str, str], expected: str
) -> None:
    for name in ENGINES:
        assert Replacer(mapping, whole_words=True, engine=name)(text) == expected


def test_whole_words_decide_every_character_of_the_bmp_as_unicode_does() -> None:
    # Each character after and before a key: the key matches exactly where the character
    # is not a word character for `regex` (on every engine "auto" may pick).
    chars = [chr(code) for code in range(0x10000) if not 0xD800 <= code <= 0xDFFF]
    after = Replacer({"a": "X"}, whole_words=True)
    before = Replacer({"b": "Y"}, whole_words=True)
    wrong = [
        char
        for char in chars
        if after(f"a{char}") != ("a" if UNICODE_WORD.match(char) else "X") + char
        or before(f"{char}b") != char + ("b" if UNICODE_WORD.match(char) else "Y")
    ]
    assert wrong == []
    text = " ".join(f"a{char}" for char in chars)  # one long text: the automaton's turn
    expected = " ".join(("a" if UNICODE_WORD.match(c) else "X") + c for c in chars)
    assert after(text) == expected


def test_case_folding_is_full_and_never_splits_a_character() -> None:
    for name in CASELESS_ENGINES:
        fold = Replacer({"strasse": "X", "s": "Y", "οδος": "Z"}, ignore_case=True, engine=name)
        assert fold("Straße STRASSE ß s ΟΔΟΣ οδος") == "X X ß Y Z Z", name
        dotted = Replacer({"i": "X"}, ignore_case=True, engine=name)
        assert dotted("İ I \u0131") == "İ X \u0131", name


def test_a_few_multi_character_foldings_keep_the_fast_path() -> None:
    # one ß in a long text: the same answer as the overlapping engine, through the automaton
    keys = {f"w{i}": f"<{i}>" for i in range(100)} | {"strasse": "street", "s": "S"}
    text = "w1 Straße w2 s " * 2000
    auto = Replacer(keys, ignore_case=True)
    assert auto(text) == Replacer(keys, ignore_case=True, engine="overlapping")(text)


@pytest.mark.parametrize("name", ENGINES)
def test_lone_surrogates_pass_through(name: Engine) -> None:
    text = "a\udcffa b\udcff" * 300
    mapping = {"a": "x", "b": "y"} | FILLER
    expected = "x\udcffx y\udcff" * 300
    for whole_words in (False, True):
        replacer = Replacer(mapping, whole_words=whole_words, engine=name)
        assert replacer(text) == expected
        assert replacer(text[:40]) == expected[:40]


def test_a_key_with_a_lone_surrogate_is_refused() -> None:
    with pytest.raises(ValueError, match="lone surrogate at index 1"):
        Replacer({"a\udcff": "x"})


@pytest.mark.parametrize("marker", ["\x02", "\x03", "\U0010fffd", "\U0010ff00"])
@pytest.mark.parametrize("name", ENGINES)
def test_the_automatons_own_characters_in_text_keys_and_values(name: Engine, marker: str) -> None:
    mapping = {"a" + marker: marker, "b": marker + "c"}
    assert Replacer(mapping, whole_words=True, engine=name)(f"a{marker} b {marker}b") == (
        f"{marker} {marker}c {marker}{marker}c"
    )


def test_folding_never_changes_whether_a_character_is_a_word_character() -> None:
    # The automaton marks word boundaries before folding: this is why that is exact.
    changed = [
        c
        for c in map(chr, range(sys.maxunicode + 1))
        if not "\ud800" <= c <= "\udfff"
        and c.casefold() != c
        and any(is_word_char(f) != is_word_char(c) for f in c.casefold())
    ]
    assert changed == []


@given(text=st.text(ALPHABET, max_size=30), mapping=mappings())
def test_replace_count_counts_matches(text: str, mapping: dict[str, str]) -> None:
    marked = {key: f"\x01{i}\x02" for i, key in enumerate(mapping)}
    result, count = Replacer(marked).replace_count(text)
    assert count == result.count("\x01")
    assert Replacer(mapping).replace_count(text)[1] == count
    assert [s for s, _, _ in Replacer(mapping).iter_matches(text)] == sorted(
        s for s, _, _ in Replacer(mapping).iter_matches(text)
    )


@given(
    text=st.text(max_size=40),
    mapping=st.dictionaries(st.text(min_size=1, max_size=3), st.text(max_size=3), max_size=5),
)
def test_any_unicode_matches_reference(text: str, mapping: dict[str, str]) -> None:
    mapping = {k: v for k, v in mapping.items() if not any("\ud800" <= c <= "\udfff" for c in k)}
    assert multi_replace(text, mapping) == reference(text, mapping)


def _docs_stdlib_multi_replace() -> Callable[[str, Mapping[str, str]], str]:
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), flags=re.S)
    (source,) = [b for b in blocks if "def multi_replace(" in b]
    namespace: dict[str, object] = {}
    exec(source, namespace)  # the copy-paste version printed in the docs
    function = namespace["multi_replace"]
    assert callable(function)
    return function


@given(text=st.text(ALPHABET, max_size=30), mapping=mappings())
def test_docs_stdlib_version_agrees(text: str, mapping: dict[str, str]) -> None:
    stdlib_multi_replace = _docs_stdlib_multi_replace()
    assert stdlib_multi_replace(text, mapping) == multi_replace(text, mapping)


# -- streams ----------------------------------------------------------------------------


@given(
    text=st.text(ALPHABET, max_size=60),
    mapping=mappings(),
    chunk_size=st.integers(1, 70),
    whole_words=st.booleans(),
    ignore_case=st.booleans(),
)
def test_stream_equals_whole_text(
    text: str, mapping: dict[str, str], chunk_size: int, whole_words: bool, ignore_case: bool
) -> None:
    if ignore_case:
        folded: dict[str, str] = {}
        for key, value in mapping.items():
            folded.setdefault(key.casefold(), value)
        mapping = {key: folded[key.casefold()] for key in mapping}
    replacer = Replacer(mapping, whole_words=whole_words, ignore_case=ignore_case)
    out = io.StringIO()
    count = replace_stream(replacer, io.StringIO(text), out, chunk_size=chunk_size)
    assert out.getvalue() == replacer.replace(text)
    assert count == replacer.replace_count(text)[1]


@given(
    pieces=st.lists(st.text(ALPHABET, max_size=8), max_size=10),
    mapping=mappings(),
    whole_words=st.booleans(),
)
def test_pieces_fed_in_any_sizes_give_the_whole_texts_result(
    pieces: list[str], mapping: dict[str, str], whole_words: bool
) -> None:
    replacer = Replacer(mapping, whole_words=whole_words)
    stream = StreamReplacer(replacer)
    out = "".join(stream.feed(piece) for piece in pieces) + stream.finish()
    text = "".join(pieces)
    assert out == replacer.replace(text)
    assert stream.count == replacer.replace_count(text)[1]
    # changed: some replacement differs from what it replaced ("abb" with ab -> a and
    # b -> bb comes back as "abb", yet changed).
    matches = replacer.iter_matches(text)
    assert stream.changed == any(value != text[start:end] for start, end, value in matches)


LINES = "ab \nß"


@given(
    pieces=st.lists(st.text(LINES, max_size=8), max_size=10),
    mapping=st.dictionaries(st.text(LINES, min_size=1, max_size=4), st.text(LINES, max_size=3)),
    whole_words=st.booleans(),
    ignore_case=st.booleans(),
)
def test_lines_come_back_whole_as_soon_as_their_line_break_is_fed(
    pieces: list[str], mapping: dict[str, str], whole_words: bool, ignore_case: bool
) -> None:
    assume(len({key.casefold() for key in mapping}) == len(mapping) or not ignore_case)
    replacer = Replacer(mapping, whole_words=whole_words, ignore_case=ignore_case)
    stream = StreamReplacer(replacer)
    given = out = ""
    for piece in pieces:
        given += piece
        out += stream.feed(piece)
        if not any("\n" in key for key in mapping):  # all lines fed so far are out
            whole = given[: given.rfind("\n") + 1]
            assert replacer.replace(given).startswith(out)
            assert len(out) >= len(replacer.replace(whole))
    out += stream.finish()
    assert out == replacer.replace(given)


@given(mapping=st.dictionaries(st.text(LINES, min_size=1, max_size=4), st.text(LINES, max_size=3)))
def test_spans_lines_is_whether_a_key_holds_a_line_break(mapping: dict[str, str]) -> None:
    assert Replacer(mapping).spans_lines == any("\n" in key for key in mapping)


def test_a_matcher_that_does_not_say_keeps_back_its_longest_match() -> None:
    class Plain:  # a Matcher without spans_lines: lines may be matched across
        max_match_length = 3

        def iter_matches(self, text: str, pos: int = 0) -> Iterator[tuple[int, int, str]]:
            return Replacer({"b\nc": "X"}).iter_matches(text, pos)

    stream = StreamReplacer(Plain())
    assert stream.feed("ab\n") == ""  # "b\n" may still become "b\nc"
    assert stream.feed("c") + stream.finish() == "aX"


class _Longest:
    def __init__(self, longest: Any) -> None:
        self.max_match_length: Any = longest

    def iter_matches(self, text: str, pos: int = 0) -> Iterator[tuple[int, int, str]]:
        return iter(())


def test_a_matcher_says_a_length_that_can_be() -> None:
    # -5 was an IndexError on the first feed; True was taken for 1
    with pytest.raises(ValueError, match=r"^replacer's max_match_length must be >= 0, got -5"):
        StreamReplacer(_Longest(-5))
    with pytest.raises(TypeError, match=r"^replacer must be a Replacer, got _Longest"):
        StreamReplacer(_Longest(True))
    stream = StreamReplacer(_Longest(0))
    assert stream.feed("abc") + stream.finish() == "abc"


def test_a_chunk_size_past_4300_digits_is_named_by_its_size() -> None:
    with pytest.raises(ValueError, match=r"^chunk_size must be at most .* got <an int of about"):
        replace_stream(Replacer({"a": "b"}), io.StringIO("a"), io.StringIO(), chunk_size=10**5000)


def test_chunk_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="chunk_size must be positive, got 0"):
        replace_stream(Replacer({"a": "b"}), io.StringIO("a"), io.StringIO(), chunk_size=0)


def test_chunk_size_has_an_upper_bound() -> None:
    replacer = Replacer({"a": "b"})
    out = io.StringIO()
    assert replace_stream(replacer, io.StringIO("aa"), out, chunk_size=MAX_CHUNK) == 2
    assert out.getvalue() == "bb"
    for size in (MAX_CHUNK + 1, 2**63 - 1, 2**73):
        with pytest.raises(
            ValueError, match=f"chunk_size must be at most {2**30} \\(MAX_CHUNK\\), got {size}$"
        ):
            replace_stream(replacer, io.StringIO("a"), io.StringIO(), chunk_size=size)


def test_stream_ends_are_checked() -> None:
    replacer = Replacer({"a": "b"})
    with pytest.raises(TypeError, match="reader must have a read\\(\\) method, got str 'abc'"):
        replace_stream(replacer, "abc", io.StringIO())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="writer must have a write\\(\\) method, got NoneType"):
        replace_stream(replacer, io.StringIO("a"), None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="reader must give str \\(open the file in text mode\\)"):
        replace_stream(replacer, io.BytesIO(b"a"), io.StringIO())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("mapping", "ignore_case", "key", "reason", "other"),
    [
        ({"a": "x", "": "y"}, False, "", "empty", None),
        ({"b\udcff": "y"}, False, "b\udcff", "surrogate", None),
        ({"Straße": "x", "STRASSE": "y"}, True, "STRASSE", "folds", "Straße"),
    ],
)
def test_a_refused_key_is_carried_by_the_error(
    mapping: dict[str, str], ignore_case: bool, key: str, reason: str, other: str | None
) -> None:
    with pytest.raises(MappingKeyError) as caught:
        Replacer(mapping, ignore_case=ignore_case)
    error = caught.value
    assert isinstance(error, ValueError)
    assert (error.key, error.reason, error.other) == (key, reason, other)
    clone = pickle.loads(pickle.dumps(error))
    assert (str(clone), clone.key, clone.reason, clone.other) == (str(error), key, reason, other)


def test_a_finished_stream_takes_no_more_text() -> None:
    # It went on: feed("xa"), finish(), feed("b"), finish() gave "xa" and "b", where the
    # whole text "xab" gives "xX".
    stream = StreamReplacer(Replacer({"ab": "X"}))
    assert stream.feed("xa") + stream.finish() == "xa"
    with pytest.raises(ValueError, match=r"feed\(\) after finish\(\)"):
        stream.feed("b")
    with pytest.raises(ValueError, match=r"finish\(\) after finish\(\)"):
        stream.finish()
    assert stream.count == 0


@pytest.mark.parametrize("chunk", [b"", None, 0])
def test_replace_stream_refuses_a_reader_that_gives_no_str(chunk: object) -> None:
    # An empty non-str was taken as the end of the text: the rest was silently lost.
    class Reader:
        def __init__(self) -> None:
            self.chunks: list[object] = ["new ", chunk, "york"]

        def read(self, size: int) -> object:
            return self.chunks.pop(0) if self.chunks else ""

    with pytest.raises(TypeError, match="reader must give str"):
        replace_stream(Replacer({"new york": "NYC"}), Reader(), io.StringIO())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("pos", "error", "message"),
    [
        (4, ValueError, "pos must be between 0 and len(text) = 3, got 4"),
        (-1, ValueError, "pos must be between 0 and len(text) = 3, got -1"),
        pytest.param(
            10**5000,
            ValueError,
            "pos must be between 0 and len(text) = 3, got <an int of about",
            id="5001 digits",
        ),
        (True, TypeError, "pos must be an int, got bool True"),
        (1.0, TypeError, "pos must be an int, got float 1.0"),
    ],
)
def test_iter_matches_refuses_a_pos_outside_the_text(
    pos: Any, error: type[Exception], message: str
) -> None:
    # (past 4,300 digits the message took the int's repr, which Python refuses)
    with pytest.raises(error, match="^" + re.escape(message)):
        Replacer({"b": "x"}).iter_matches("abc", pos)
    assert list(Replacer({"b": "x"}).iter_matches("abc", 3)) == []


# -- properties added for the standard ---

_NOT_INTS = st.booleans() | st.floats() | st.text(max_size=3) | st.none() | st.just(b"8")


@given(
    st.integers(-3, 3)
    | st.integers(MAX_CHUNK - 3, MAX_CHUNK + 3)
    | st.integers(-(2**70), 2**70)
    | st.just(10**5000)
    | _NOT_INTS
)
def test_check_chunk_size_takes_exactly_the_ints_from_1_to_max_chunk(value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        with pytest.raises(TypeError, match=r"^chunk_size must be an int, got "):
            check_chunk_size(value)
    elif 1 <= value <= MAX_CHUNK:
        assert check_chunk_size(value) is value
    else:
        with pytest.raises(ValueError, match=r"^chunk_size must be (positive, got|at most) "):
            check_chunk_size(value)


class _Unshowable:
    """A callable value whose repr fails."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    def __call__(self, matched: str) -> str:
        return matched


_LONG = "k" * 10**6
_UNTYPED: Any = {"is_word_char": is_word_char, "Replacer": Replacer}
"""The functions, called with what their types refuse."""


@pytest.mark.parametrize(
    ("call", "error", "start"),
    [
        (
            lambda: _UNTYPED["is_word_char"](10**5000),
            TypeError,
            "char must be a str, got int <an int of",
        ),
        (
            lambda: _UNTYPED["is_word_char"](_Unshowable()),
            TypeError,
            "char must be a str, got _Unshowable",
        ),
        (lambda: is_word_char(_LONG), ValueError, "char must be one character, got 'kkk"),
        (
            lambda: multi_replace("x", {"A": _Unshowable(), "a": _Unshowable()}, ignore_case=True),
            MappingKeyError,
            "keys 'A' and 'a' are equal when case is ignored",
        ),
        (lambda: Replacer({_LONG + "\udc80": "x"}), MappingKeyError, "mapping keys must be"),
        (lambda: _UNTYPED["Replacer"]({_LONG: 1}), TypeError, "mapping value for key 'kkk"),
        (
            lambda: _UNTYPED["Replacer"]({_LONG: lambda m: 1})(_LONG),
            TypeError,
            "replacement for 'kkk",
        ),
        (lambda: Search([_LONG, _LONG]), ValueError, "keys must be distinct, got 'kkk"),
        (lambda: Search([_LONG + "\udc80"]), ValueError, "keys must be non-empty and"),
    ],
)
def test_an_error_message_names_any_value_in_a_line(
    call: Callable[[], object], error: type[Exception], start: str
) -> None:
    # Messages took the value's whole repr: a repr that raised replaced the error
    # (RuntimeError, or ValueError past 4,300 digits), and a long key made a message of a
    # million characters.
    with pytest.raises(error) as caught:
        call()
    assert str(caught.value).startswith(start)
    assert len(str(caught.value)) < 300


def test_multi_replace_never_reuses_an_equal_but_other_callable() -> None:
    class Tag:  # every Tag equals every other, but each wraps in its own tag
        def __init__(self, name: str) -> None:
            self.name = name

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Tag)

        def __hash__(self) -> int:
            return 0

        def __call__(self, matched: str) -> str:
            return f"<{self.name}>{matched}</{self.name}>"

    bold, italic = Tag("b"), Tag("i")
    for options in ({}, {"preserve_case": True}):
        assert multi_replace("a", {"a": bold}, **options) == "<b>a</b>"
        assert multi_replace("a", {"a": italic}, **options) == "<i>a</i>"
        assert multi_replace("a", {"a": bold}, **options) == "<b>a</b>"
