"""Tests for devutils.text: worked examples, every documented error, properties."""

from __future__ import annotations

import contextlib
import pickle
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devutils import text as text_module
from devutils.text import Replacement, Replacer, is_word_char, multi_replace

DOCS = Path(__file__).resolve().parent.parent / "docs" / "text.md"


# -- the simple reference --------------------------------------------------------------


def reference(
    text: str,
    mapping: Mapping[str, Replacement],
    *,
    ignore_case: bool = False,
    whole_words: bool = False,
    preserve_case: bool = False,
) -> str:
    """Leftmost-longest by brute force: at each position try every end, longest first."""
    fold: Callable[[str], str] = str.casefold if ignore_case else str
    table = {fold(key): value for key, value in mapping.items()}
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        for j in range(n, i, -1):
            piece = text[i:j]
            if fold(piece) not in table:
                continue
            if whole_words and (
                (i > 0 and is_word_char(text[i - 1])) or (j < n and is_word_char(text[j]))
            ):
                continue
            value = table[fold(piece)]
            result = value if isinstance(value, str) else value(piece)
            if preserve_case:
                if piece.isupper():
                    result = result.upper()
                elif piece.istitle():
                    result = " ".join(_title(word) for word in result.split(" "))
            out.append(result)
            i = j
            break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _title(word: str) -> str:
    cased = [i for i, c in enumerate(word) if c.lower() != c.upper()]
    if not cased:
        return word
    i = cased[0]
    return word[:i] + word[i].upper() + word[i + 1 :].lower()


# -- worked examples ---------------------------------------------------------------------


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


# -- options -----------------------------------------------------------------------------


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


def test_options_must_be_bool() -> None:
    with pytest.raises(TypeError, match="ignore_case must be a bool, got int 1"):
        Replacer({"a": "b"}, ignore_case=1)  # type: ignore[arg-type]


# -- errors ------------------------------------------------------------------------------


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


# -- caching, immutability, pickling, threads, processes -----------------------------------


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
    with pytest.raises(AttributeError, match="immutable"):
        replacer.x = 1
    with pytest.raises(TypeError):
        replacer.mapping["a"] = "3"  # type: ignore[index]


@pytest.mark.parametrize("size", [2, 100])
@pytest.mark.parametrize("options", [{}, {"ignore_case": True}, {"whole_words": True}])
def test_pickle_round_trip(size: int, options: dict[str, bool]) -> None:
    mapping = {f"k{i}": f"v{i}" for i in range(size)} | {"new": "old", "new york": "NYC"}
    replacer = Replacer(mapping, **options)
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


# -- properties against the reference ------------------------------------------------------

ENGINES = ["default", "regex", "automaton", "overlap"]


@contextlib.contextmanager
def engine(name: str) -> Iterator[None]:
    """Force every Replacer built inside to one engine (thresholds are read at build)."""
    with contextlib.ExitStack() as stack:
        if name in ("regex", "automaton"):
            stack.enter_context(mock.patch.object(text_module, "_SMALL", 0))
        if name == "regex":
            stack.enter_context(mock.patch.object(text_module, "_TRIE_MAX", 10**9))
        if name == "automaton":
            stack.enter_context(mock.patch.object(text_module, "_TRIE_MAX", 0))
            stack.enter_context(mock.patch.object(text_module, "_SHORT", 0))
        if name == "overlap":

            def overlap(self: Replacer, text: str) -> tuple[list[tuple[int, int, int]], str]:
                return self._find_overlapping(text), text

            stack.enter_context(mock.patch.object(Replacer, "_find", overlap))
            stack.enter_context(mock.patch.object(text_module, "_SHORT", 0))
        yield


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


@given(
    text=st.text(ALPHABET, max_size=30),
    mapping=mappings(),
    whole_words=st.booleans(),
    name=st.sampled_from(ENGINES),
)
def test_matches_reference(
    text: str, mapping: dict[str, str], whole_words: bool, name: str
) -> None:
    expected = reference(text, mapping, whole_words=whole_words)
    with engine(name):
        replacer = Replacer(mapping, whole_words=whole_words)
        assert replacer(text) == expected
        assert replacer.replace_count(text)[0] == expected
        pieces, position = [], 0
        for start, end, replacement in replacer.iter_matches(text):
            pieces += [text[position:start], replacement]
            position = end
        assert "".join(pieces) + text[position:] == expected
    assert multi_replace(text, mapping, whole_words=whole_words) == expected


@given(
    text=st.text(ALPHABET, max_size=30),
    mapping=mappings(),
    whole_words=st.booleans(),
    preserve_case=st.booleans(),
    name=st.sampled_from(ENGINES),
)
def test_ignore_case_matches_reference(
    text: str, mapping: dict[str, str], whole_words: bool, preserve_case: bool, name: str
) -> None:
    folded: dict[str, str] = {}
    for key, value in mapping.items():
        folded.setdefault(key.casefold(), value)
    mapping = {key: folded[key.casefold()] for key in mapping}  # no conflicting keys
    options = {"ignore_case": True, "whole_words": whole_words, "preserve_case": preserve_case}
    expected = reference(text, mapping, **options)
    with engine(name):
        assert Replacer(mapping, **options)(text) == expected
        functions = {fold: (lambda _m, v=value: v) for fold, value in folded.items()}
        with_callables = {key: functions[key.casefold()] for key in mapping}
        assert Replacer(with_callables, **options)(text) == expected


def test_fold_changes_word_constant_is_complete() -> None:
    changed = {
        chr(i)
        for i in range(sys.maxunicode + 1)
        if len(chr(i).casefold()) == 1 and is_word_char(chr(i)) != is_word_char(chr(i).casefold())
    }
    assert changed == {text_module._FOLD_CHANGES_WORD}


@pytest.mark.parametrize("name", ENGINES)
def test_marker_characters_in_text_keys_and_values(name: str) -> None:
    with engine(name):
        mapping = {"a\x02": "\x03", "b": "\x02c"}
        assert Replacer(mapping, whole_words=True)("a\x02 b \x02b") == "\x03 \x02c \x02\x02c"
        assert Replacer({"b": "X"}, whole_words=True)("\x02b\x03 b") == "\x02X\x03 X"


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
