"""Replace many strings in one pass: leftmost-longest, literal keys, never rescanned.

``multi_replace(text, {"a": "b", "b": "a"})`` swaps ``a`` and ``b``; chained
``str.replace`` cannot. At each position the longest key that matches wins, whatever
the mapping's order, matches never overlap, and replacement text is never scanned
again. Keys are literal text: regex metacharacters and backslashes mean themselves.

Engines (chosen per `Replacer`, all giving identical output):

* a few keys: a longest-first alternation compiled with `re`;
* many keys: an Aho-Corasick automaton (`ahocorasick_rs`, leftmost-longest);
* whole words, or case folding that changes a text's length (``"ß"`` -> ``"ss"``):
  every overlapping occurrence, filtered and resolved leftmost-longest in Python.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, Final

import ahocorasick_rs

from devutils import _stream
from devutils._stream import FileRefusedError, SupportsRead, SupportsWrite

__all__ = ["FileRefusedError", "Replacement", "Replacer", "is_word_char", "multi_replace"]

Replacement = str | Callable[[str], str]
"""A mapping value: the replacement text, or a function of the matched text."""

_SMALL: Final = 16
"""Mappings with at most this many keys (and no case folding) use a `re` alternation..."""
_SHORT: Final = 2000
"""...for texts shorter than this; longer texts use Aho-Corasick (measured in bench/)."""
_TRIE_MAX: Final = 500
"""Case-sensitive ``whole_words`` mappings up to this size use a trie-shaped `re`."""
_START: Final = "\x02"
_END: Final = "\x03"
"""Markers of the gaps where a whole word may start or end (see `_mark`)."""
_FOLD_CHANGES_WORD: Final = "\u0345"
"""The one character that case-folds to a single character of other word-ness."""

_CACHE_SIZE: Final = 32


def is_word_char(char: str) -> bool:
    """Return True if *char* is a word character for ``whole_words``.

    A word character is alphanumeric (`str.isalnum`, so any script's letters and
    digits) or the underscore: exactly what `re`'s Unicode ``\\w`` matches.

    Examples:
        >>> [is_word_char(c) for c in "a_9é語+ -"]
        [True, True, True, True, True, False, False, False]
    """
    return char.isalnum() or char == "_"


def _describe(value: object, limit: int = 80) -> str:
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{type(value).__name__} {text}"


def _check_flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        msg = f"{name} must be a bool, got {_describe(value)}"
        raise TypeError(msg)
    return value


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        msg = f"text must be str, got {_describe(text)}"
        raise TypeError(msg)
    return text


def _snapshot(mapping: object) -> dict[str, Replacement]:
    """Copy and validate a user's mapping."""
    if not isinstance(mapping, Mapping):
        msg = f"mapping must be a Mapping of str to str or callable, got {_describe(mapping)}"
        raise TypeError(msg)
    snapshot: dict[str, Replacement] = {}
    for key, value in mapping.items():
        if not isinstance(key, str):
            msg = f"mapping keys must be str, got {_describe(key)}"
            raise TypeError(msg)
        if not key:
            msg = "mapping keys must be non-empty, got ''"
            raise ValueError(msg)
        if not isinstance(value, str) and not callable(value):
            msg = f"mapping value for key {key!r} must be str or callable, got {_describe(value)}"
            raise TypeError(msg)
        snapshot[key] = value
    return snapshot


def _match_case(matched: str, replacement: str) -> str:
    """Give *replacement* the case pattern of *matched* (upper, title, else as given)."""
    if matched.isupper():
        return replacement.upper()
    if matched.istitle():
        return _TITLE_WORD.sub(_title_word, replacement)
    return replacement


_TITLE_WORD: Final = re.compile(r"\S+")


def _title_word(match: re.Match[str]) -> str:
    """Upper-case the first cased character of a word and lower-case the rest."""
    word = match.group()
    for index, char in enumerate(word):
        if char.lower() != char.upper():
            return word[:index] + char.upper() + word[index + 1 :].lower()
    return word


class Replacer:
    """A compiled, immutable set of replacements, applied in one pass.

    Build it once and call it on many texts: it is thread-safe, picklable (it
    pickles as its mapping and options and recompiles on load) and holds a
    snapshot of the mapping, so later changes to the dict do not affect it.

    Args:
        mapping: Keys are the literal strings to find; values are the replacement
            text or a function called with the matched text that returns it.
        ignore_case: Match with full Unicode case folding (``"STRASSE"`` matches
            ``"straße"``).
        whole_words: Match only where the characters before and after the match
            are not word characters (see `is_word_char`).
        preserve_case: Give the replacement the matched text's case pattern:
            all upper -> upper, title case -> title case, otherwise as given.

    Raises:
        TypeError: If *mapping* is not a Mapping, a key is not a str, a value is
            neither a str nor callable, or an option is not a bool.
        ValueError: If a key is empty, or (with *ignore_case*) two keys fold to
            the same text but map to different values.

    Examples:
        >>> swap = Replacer({"cat": "dog", "dog": "cat"})
        >>> swap("cat chases dog")
        'dog chases cat'
        >>> swap.replace_count("dogs and cats")
        ('cats and dogs', 2)
        >>> Replacer({"new": "old", "new york": "NYC"})("new york is new")
        'NYC is old'
        >>> Replacer({b"key": "value"})
        Traceback (most recent call last):
        ...
        TypeError: mapping keys must be str, got bytes b'key'
    """

    __slots__ = (
        "_ac",
        "_always_changes",
        "_by_key",
        "_callables",
        "_engine",
        "_ignore_case",
        "_keys",
        "_mapping",
        "_max_length",
        "_overlap_ac",
        "_pattern",
        "_plain",
        "_preserve_case",
        "_repl",
        "_stream_sentinels",
        "_values",
        "_whole_words",
    )

    _ac: ahocorasick_rs.AhoCorasick | None
    _always_changes: bool
    _max_length: int
    _plain: bool
    _stream_sentinels: tuple[str, str] | None
    _by_key: dict[str, Replacement]
    _callables: bool
    _engine: str
    _ignore_case: bool
    _keys: list[str]
    _mapping: Mapping[str, Replacement]
    _overlap_ac: ahocorasick_rs.AhoCorasick | None
    _pattern: re.Pattern[str] | None
    _preserve_case: bool
    _repl: Callable[[re.Match[str]], str]
    _values: list[Replacement]
    _whole_words: bool

    def __init__(
        self,
        mapping: Mapping[str, Replacement],
        *,
        ignore_case: bool = False,
        whole_words: bool = False,
        preserve_case: bool = False,
    ) -> None:
        init = object.__setattr__
        init(self, "_ignore_case", _check_flag("ignore_case", ignore_case))
        init(self, "_whole_words", _check_flag("whole_words", whole_words))
        init(self, "_preserve_case", _check_flag("preserve_case", preserve_case))
        snapshot = _snapshot(mapping)
        init(self, "_mapping", MappingProxyType(snapshot))
        init(self, "_by_key", snapshot)

        keys: list[str] = []
        values: list[Replacement] = []
        folded_index: dict[str, int] = {}
        if ignore_case:
            first_key: dict[str, str] = {}
            for key, value in snapshot.items():
                folded = key.casefold()
                if folded in folded_index:
                    other = first_key[folded]
                    if values[folded_index[folded]] != value:
                        msg = (
                            f"keys {other!r} and {key!r} are equal when case is ignored "
                            f"(both fold to {folded!r}) but map to different values "
                            f"{snapshot[other]!r} and {value!r}"
                        )
                        raise ValueError(msg)
                    continue
                folded_index[folded] = len(keys)
                first_key[folded] = key
                keys.append(folded)
                values.append(value)
        else:
            keys = list(snapshot)
            values = list(snapshot.values())
        init(self, "_keys", keys)
        init(self, "_values", values)
        init(self, "_callables", any(not isinstance(v, str) for v in values))
        init(self, "_pattern", None)
        init(self, "_ac", None)
        init(self, "_overlap_ac", None)
        if self._callables or preserve_case:
            init(self, "_repl", self._general)
        else:
            init(self, "_repl", _dict_repl(snapshot))  # type: ignore[arg-type]

        literal = not ignore_case
        if not keys:
            engine = "empty"
        elif whole_words and literal and len(keys) <= _TRIE_MAX:
            engine = "regex"
            body = _alternation(keys) if len(keys) <= _SMALL else _trie_pattern(keys)
            init(self, "_pattern", re.compile(rf"(?<!\w)(?:{body})(?!\w)"))
        elif whole_words:
            markers = (_START, _END)
            texts = [*keys, *(v for v in values if isinstance(v, str))]
            if any(m in t for t in texts for m in markers):
                engine = "overlap"
            else:
                engine = "marked"
                init(self, "_ac", _leftmost_longest([_mark_key(key) for key in keys]))
        elif literal and len(keys) <= _SMALL:
            engine = "small"
            init(self, "_pattern", re.compile(_alternation(keys)))
        else:
            engine = "ac"
            init(self, "_ac", _leftmost_longest(keys))
        init(self, "_engine", engine)
        init(self, "_max_length", max(map(len, keys), default=0))
        # Replacements are plain strings, used as they are: the fast paths apply.
        init(self, "_plain", not self._callables and not preserve_case)
        # Every match changes the text (no value equals the only text its key matches).
        init(
            self,
            "_always_changes",
            self._plain and not ignore_case and all(v != k for k, v in snapshot.items()),
        )
        init(self, "_stream_sentinels", None)

    # -- immutability and pickling -------------------------------------------------

    def __setattr__(self, name: str, value: object) -> None:
        msg = f"Replacer is immutable: cannot set {name!r}"
        raise AttributeError(msg)

    def __delattr__(self, name: str) -> None:
        msg = f"Replacer is immutable: cannot delete {name!r}"
        raise AttributeError(msg)

    def __reduce__(self) -> tuple[Callable[..., Replacer], tuple[object, ...]]:
        return (
            _rebuild,
            (dict(self._mapping), self._ignore_case, self._whole_words, self._preserve_case),
        )

    def __repr__(self) -> str:
        options = "".join(
            f", {name}=True"
            for name, on in (
                ("ignore_case", self._ignore_case),
                ("whole_words", self._whole_words),
                ("preserve_case", self._preserve_case),
            )
            if on
        )
        return f"Replacer(<{len(self._mapping)} keys>{options})"

    @property
    def mapping(self) -> Mapping[str, Replacement]:
        """A read-only view of the mapping this Replacer was built from."""
        return self._mapping

    @property
    def ignore_case(self) -> bool:
        """Whether keys match with full Unicode case folding."""
        return self._ignore_case

    @property
    def whole_words(self) -> bool:
        """Whether matches must not touch word characters on either side."""
        return self._whole_words

    @property
    def preserve_case(self) -> bool:
        """Whether replacements take the matched text's case pattern."""
        return self._preserve_case

    # -- replacing ------------------------------------------------------------------

    def __call__(self, text: str) -> str:
        """Same as `replace`."""
        return self.replace(text)

    def replace(self, text: str) -> str:
        """Return *text* with every match replaced, in one left-to-right pass.

        Raises:
            TypeError: If *text* is not a str, or a callable value returns a non-str.

        Examples:
            >>> Replacer({"a": "b", "b": "a"}).replace("abba")
            'baab'
        """
        pattern = self._pattern
        if (
            type(text) is str
            and pattern is not None
            and (self._engine == "regex" or len(text) < _SHORT)
        ):
            return pattern.sub(self._repl, text)
        return self.replace_count(text)[0]

    def replace_count(self, text: str) -> tuple[str, int]:
        """Return ``(new_text, number_of_replacements)``.

        Examples:
            >>> Replacer({"C++": "C#"}, whole_words=True).replace_count("C++ not C++11")
            ('C# not C++11', 1)
        """
        _check_text(text)
        engine = self._engine
        if engine == "empty":
            return text, 0
        if self._pattern is not None and (engine == "regex" or len(text) < _SHORT):
            return self._pattern.subn(self._repl, text)
        matches, haystack = self._find(text)
        if not matches:
            return text, 0
        return self._assemble(haystack, matches, marked=haystack is not text), len(matches)

    def _general(self, match: re.Match[str]) -> str:
        matched = match.group()
        return self._render(self._by_key[matched], matched)

    def _render(self, value: Replacement, matched: str) -> str:
        if not isinstance(value, str):
            result: object = value(matched)
            if not isinstance(result, str):
                msg = f"replacement for {matched!r} must return str, got {_describe(result)}"
                raise TypeError(msg)
            value = result
        if self._preserve_case:
            return _match_case(matched, value)
        return value

    def _find(self, text: str) -> tuple[list[tuple[int, int, int]], str]:
        """Return leftmost-longest ``(key_index, start, end)`` and the string they index.

        That string is *text*, or for the "marked" engine *text* with word-boundary
        markers inserted (see `_mark`), which `_assemble` removes again.
        """
        engine = self._engine
        if engine == "small" and self._ac is None:
            assert self._pattern is not None  # long text, few keys: Aho-Corasick is faster
            object.__setattr__(self, "_ac", _leftmost_longest(self._keys))
        automaton = self._ac
        if engine == "overlap" or automaton is None:
            return self._find_overlapping(text), text
        haystack = text
        if engine == "marked":
            if _START in text or _END in text or (self._ignore_case and _FOLD_CHANGES_WORD in text):
                return self._find_overlapping(text), text
            haystack = _mark(text)
        if not self._ignore_case:
            return automaton.find_matches_as_indexes(haystack), haystack
        folded = haystack.casefold()
        if len(folded) == len(haystack):
            # Every character folded to exactly one character: positions agree.
            return automaton.find_matches_as_indexes(folded), haystack
        return self._find_overlapping(text), text

    def _find_overlapping(self, text: str) -> list[tuple[int, int, int]]:
        """Resolve every overlapping occurrence leftmost-longest (exact, slower)."""
        automaton = self._overlap_ac
        if automaton is None:
            automaton = ahocorasick_rs.AhoCorasick(self._keys)
            object.__setattr__(self, "_overlap_ac", automaton)
        haystack = text
        origin: list[int] | None = None
        if self._ignore_case:
            haystack = text.casefold()
            if len(haystack) != len(text):
                # origin[i]: index in text of the character whose folding starts at
                # folded index i, or -1 inside a multi-character folding.
                origin = [-1] * (len(haystack) + 1)
                position = 0
                for index, char in enumerate(text):
                    origin[position] = index
                    position += len(char.casefold())
                origin[position] = len(text)
        whole = self._whole_words
        best: dict[int, tuple[int, int]] = {}
        for key_index, found_start, found_end in automaton.find_matches_as_indexes(
            haystack, overlapping=True
        ):
            start, end = found_start, found_end
            if origin is not None:
                start, end = origin[found_start], origin[found_end]
                if start < 0 or end < 0:
                    continue
            if whole and (
                (start > 0 and is_word_char(text[start - 1]))
                or (end < len(text) and is_word_char(text[end]))
            ):
                continue
            previous = best.get(start)
            if previous is None or end > previous[0]:
                best[start] = (end, key_index)
        chosen: list[tuple[int, int, int]] = []
        position = 0
        for start in sorted(best):
            if start >= position:
                end, key_index = best[start]
                chosen.append((key_index, start, end))
                position = end
        return chosen

    def _assemble(self, haystack: str, matches: list[tuple[int, int, int]], *, marked: bool) -> str:
        values = self._values
        pieces: list[str] = []
        append = pieces.append
        position = 0
        if not self._callables and not self._preserve_case:
            for key_index, start, end in matches:
                append(haystack[position:start])
                append(values[key_index])  # type: ignore[arg-type]
                position = end
            append(haystack[position:])
            result = "".join(pieces)
            return _unmark(result) if marked else result
        render = self._render
        for key_index, start, end in matches:
            gap = haystack[position:start]
            matched = haystack[start:end]
            if marked:
                gap, matched = _unmark(gap), _unmark(matched)
            append(gap)
            append(render(values[key_index], matched))
            position = end
        append(_unmark(haystack[position:]) if marked else haystack[position:])
        return "".join(pieces)

    # -- streams -------------------------------------------------------------------

    def iter_matches(self, text: str) -> Iterator[tuple[int, int, str]]:
        """Yield ``(start, end, replacement)`` for each match, left to right.

        Examples:
            >>> list(Replacer({"ab": "X", "b": "Y"}).iter_matches("abb"))
            [(0, 2, 'X'), (2, 3, 'Y')]
        """
        _check_text(text)
        for key_index, start, end in self._spans(text):
            yield start, end, self._value_for(key_index, text[start:end])

    def _value_for(self, key_index: int, matched: str) -> str:
        """Render the replacement of one match (`key_index` -1: look up the matched text)."""
        value = self._values[key_index] if key_index >= 0 else self._by_key[matched]
        return self._render(value, matched)

    def _spans(self, text: str) -> list[tuple[int, int, int]]:
        """Leftmost-longest ``(key_index, start, end)`` in *text*'s own positions.

        ``key_index`` is -1 where the matched text itself is the key (the `re` engines).
        """
        if self._engine == "empty":
            return []
        pattern = self._pattern
        if pattern is not None and (self._engine == "regex" or len(text) < _SHORT):
            return [(-1, *match.span()) for match in pattern.finditer(text)]
        matches, haystack = self._find(text)
        if haystack is text:
            return matches
        # Positions in the marked text: subtract the markers before and inside each match.
        spans: list[tuple[int, int, int]] = []
        count = haystack.count
        removed = previous = 0
        for key_index, start, end in matches:
            removed += count(_START, previous, start) + count(_END, previous, start)
            inside = count(_START, start, end) + count(_END, start, end)
            spans.append((key_index, start - removed, end - removed - inside))
            removed += inside
            previous = end
        return spans

    @property
    def max_match_length(self) -> int:
        """The most characters of text one match can cover (0 for an empty mapping).

        Streaming keeps this many characters (plus one) back between chunks.
        """
        return self._max_length

    def replace_stream(
        self,
        reader: SupportsRead,
        writer: SupportsWrite,
        *,
        chunk_size: int = _stream.DEFAULT_CHUNK,
    ) -> int:
        """Copy text from *reader* to *writer* with replacements; return how many were made.

        Reads *chunk_size* characters at a time, so memory stays bounded by the chunk
        size and the longest key, and the output is exactly ``self.replace(whole_text)``:
        matches that straddle chunk boundaries and ``whole_words`` checks at those
        boundaries come out the same. Open files with ``newline=""`` so that line endings
        pass through unchanged.

        Raises:
            ValueError: If *chunk_size* is not a positive int.

        Examples:
            >>> import io
            >>> out = io.StringIO()
            >>> Replacer({"new york": "NYC"}).replace_stream(io.StringIO("new york, new york"),
            ...                                              out, chunk_size=3)
            2
            >>> out.getvalue()
            'NYC, NYC'
        """
        return _stream.replace_stream(self, reader, writer, chunk_size=chunk_size)

    def replace_file(
        self,
        path: str | os.PathLike[str],
        *,
        encoding: str = "utf-8",
        backup_suffix: str | None = None,
        chunk_size: int = _stream.DEFAULT_CHUNK,
    ) -> int:
        """Rewrite the file at *path* in place, atomically; return the number of replacements.

        The file is streamed through a temporary file in the same directory, which is
        flushed, fsynced, given the original's permission bits (and owner, where allowed)
        and renamed over the original with `os.replace`: at every moment the file is
        wholly old or wholly new. A file with nothing to change is not rewritten (its
        mtime stays). A symlink is followed and its target rewritten. Line endings and
        every byte outside the matches are kept exactly.

        Args:
            path: The file to rewrite.
            encoding: Its text encoding.
            backup_suffix: If given, keep the original as ``path + backup_suffix`` (next
                to the symlink's target when *path* is a symlink), like ``sed -i.bak``.
            chunk_size: Characters read at a time.

        Raises:
            devutils.text.FileRefusedError: If the file is binary (has a NUL character),
                does not decode, or the result cannot be encoded; the file is untouched.
            OSError: If the file cannot be read or written; the file is untouched.
        """
        return _stream.replace_file(
            self, path, encoding=encoding, backup_suffix=backup_suffix, chunk_size=chunk_size
        )


def _alternation(keys: list[str]) -> str:
    """A longest-first alternation: with literal keys, `re` then matches leftmost-longest."""
    return "|".join(map(re.escape, sorted(keys, key=len, reverse=True)))


def _trie_pattern(keys: list[str]) -> str:
    """A trie-shaped pattern; sibling branches start with distinct characters, and each
    optional tail is greedy, so `re` backtracks from the longest key to shorter ones."""
    trie: dict[str, dict[str, Any]] = {}
    for key in keys:
        node = trie
        for char in key:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict[str, dict[str, Any]]) -> str:
        branches = [re.escape(char) + build(child) for char, child in node.items() if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return build(trie)


def _leftmost_longest(keys: list[str]) -> ahocorasick_rs.AhoCorasick:
    return ahocorasick_rs.AhoCorasick(keys, matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)


def _mark(text: str) -> str:
    """Insert `_START` in every gap where a whole word may start and `_END` where one may end.

    Gap ``g`` (before ``text[g]``) gets `_END` if ``text[g]`` is not a word character
    (or ``g == len(text)``), then `_START` if ``text[g - 1]`` is not one (or ``g == 0``).
    A key, marked the same way inside and framed by `_START` ... `_END` (`_mark_key`),
    then occurs in the marked text exactly where it occurs as a whole word, so plain
    leftmost-longest search enforces the word boundaries. Built with C-speed
    `str.replace` calls, one per distinct non-word character.
    """
    for char in {char for char in set(text) if not is_word_char(char)}:
        text = text.replace(char, f"{_END}{char}{_START}")
    return f"{_START}{text}{_END}".replace(_START + _END, _END + _START)


def _mark_key(key: str) -> str:
    marked = _mark(key)
    if not is_word_char(key[0]):  # drop the leading gap's _END ...
        marked = marked[1:]
    if not is_word_char(key[-1]):  # ... and the trailing gap's _START
        marked = marked[:-1]
    return marked


def _unmark(text: str) -> str:
    return text.replace(_START, "").replace(_END, "")


def _dict_repl(table: dict[str, str]) -> Callable[[re.Match[str]], str]:
    def repl(match: re.Match[str]) -> str:
        return table[match.group()]

    return repl


def _rebuild(
    mapping: dict[str, Replacement], ignore_case: bool, whole_words: bool, preserve_case: bool
) -> Replacer:
    return Replacer(
        mapping, ignore_case=ignore_case, whole_words=whole_words, preserve_case=preserve_case
    )


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _cached(
    items: tuple[tuple[str, Replacement], ...],
    ignore_case: bool,
    whole_words: bool,
    preserve_case: bool,
) -> Replacer:
    return Replacer(
        dict(items), ignore_case=ignore_case, whole_words=whole_words, preserve_case=preserve_case
    )


_last: tuple[Mapping[str, Replacement], tuple[bool, bool, bool], Replacer] | None = None


def _is_mapping(value: object) -> bool:
    return isinstance(value, Mapping)


def multi_replace(
    text: str,
    mapping: Mapping[str, Replacement],
    *,
    ignore_case: bool = False,
    whole_words: bool = False,
    preserve_case: bool = False,
) -> str:
    """Replace every key of *mapping* in *text* in one pass, longest key first.

    The Python for Ruby's ``text.gsub(Regexp.union(dict.keys), dict)``, but
    leftmost-longest: at each position the longest matching key wins, whatever
    the mapping's order, and replacement text is never rescanned. The compiled
    pattern is cached for recent mappings (keyed by their current items, so
    changing the dict between calls is always seen). To reuse one mapping on
    many texts, build a `Replacer` once.

    Args:
        text: The text to rewrite.
        mapping: Literal keys to their replacement (a str, or a function of the
            matched text returning a str).
        ignore_case: See `Replacer`.
        whole_words: See `Replacer`.
        preserve_case: See `Replacer`.

    Raises:
        TypeError: If *text* is not a str, or *mapping* is not a Mapping of
            non-empty str keys to str or callable values.
        ValueError: If a key is empty, or two keys fold together with different
            values under *ignore_case*.

    Examples:
        >>> multi_replace("ストロベリーパフェとパイナップルジュース",
        ...               {"ストロベリー": "strawberry", "パイナップル": "pineapple"})
        'strawberryパフェとpineappleジュース'
        >>> multi_replace("a+b=c", {"a": "b", "b": "a", "+": " plus "})
        'b plus a=c'
        >>> multi_replace("STRASSE und Straße", {"strasse": "street"}, ignore_case=True)
        'street und street'
        >>> multi_replace("hello", {"": "x"})
        Traceback (most recent call last):
        ...
        ValueError: mapping keys must be non-empty, got ''
    """
    global _last  # noqa: PLW0603 - a one-entry cache, replaced whole (thread-safe)
    _check_text(text)
    options = (ignore_case, whole_words, preserve_case)
    last = _last
    # The same dict as last time, still equal to the snapshot compiled then: reuse it
    # (a C-level dict comparison; cheaper than hashing the items of a large mapping).
    if (
        last is not None
        and last[0] is mapping
        and last[1] == options
        and mapping == last[2]._by_key
    ):
        return last[2].replace(text)
    if not _is_mapping(mapping):
        _snapshot(mapping)  # raises the documented TypeError
    try:
        replacer = _cached(tuple(mapping.items()), *options)
    except TypeError as exc:
        # An unhashable key or value: validate (which names it), else build uncached.
        _snapshot(mapping)
        if "unhashable" not in str(exc):
            raise
        replacer = Replacer(
            mapping, ignore_case=ignore_case, whole_words=whole_words, preserve_case=preserve_case
        )
    if type(mapping) is dict:
        _last = (mapping, options, replacer)
    return replacer.replace(text)
