"""Replace many strings in one pass: leftmost-longest, literal keys, never rescanned.

``multi_replace(text, {"a": "b", "b": "a"})`` swaps ``a`` and ``b``; chained
``str.replace`` cannot. At each position the longest key that matches wins, whatever
the mapping's order, matches never overlap, and replacement text is never scanned
again. Keys are literal text: regex metacharacters and backslashes mean themselves.

`Replacer` finds the matches with one of the three engines of `devutils.textsearch`,
picked per text (``engine=`` forces one, for tests and benchmarks; all give identical
results): a `re` pattern for a few keys on a short text, and for case-sensitive whole
words on text where stdlib `re`'s word characters are Unicode's (no combining marks,
superscripts or emoji); Aho-Corasick for everything else. Long texts are searched in
windows of `WINDOW` characters, so memory holds the input, the output and one window's
matches, never every match at once. `StreamReplacer` replaces text fed in pieces.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, Final, Literal, Protocol

from devutils.textsearch import (
    SURROGATES,
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

__all__ = [
    "DEFAULT_CHUNK",
    "MAX_CHUNK",
    "WINDOW",
    "Engine",
    "Replacement",
    "Replacer",
    "StreamReplacer",
    "SupportsRead",
    "SupportsWrite",
    "is_word_char",
    "multi_replace",
]

Replacement = str | Callable[[str], str]
"""A mapping value: the replacement text, or a function of the matched text."""
Engine = Literal["auto", "re", "automaton", "exact"]

DEFAULT_CHUNK: Final = 1 << 20
"""Characters read at a time by `Replacer.replace_stream`."""
WINDOW: Final = 1 << 18
"""Characters of a long text searched at a time."""

_SMALL: Final = 16
"""Mappings with at most this many keys (and no case folding) use a `re` alternation..."""
_SHORT: Final = 2000
"""...for texts shorter than this; longer texts use Aho-Corasick (measured in bench/)."""
_TRIE_MAX: Final = 500
"""Case-sensitive ``whole_words`` mappings up to this size use a trie-shaped `re` pattern
where stdlib `re`'s word characters are Unicode's: 2x to 4x the automaton's throughput
at 100 keys (bench/bench_text_edges.py)."""
_CACHE_SIZE: Final = 32


# -- validation ------------------------------------------------------------------------


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


def _check_pos(pos: object, text: str) -> int:
    if isinstance(pos, bool) or not isinstance(pos, int):
        msg = f"pos must be an int, got {_describe(pos)}"
        raise TypeError(msg)
    if not 0 <= pos <= len(text):
        msg = f"pos must be between 0 and len(text) = {len(text)}, got {pos}"
        raise ValueError(msg)
    return pos


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
        if (surrogate := SURROGATES.search(key)) is not None:
            msg = (
                f"mapping keys must be Unicode text, got {key!r} with a lone surrogate at "
                f"index {surrogate.start()}"
            )
            raise ValueError(msg)
        if not isinstance(value, str) and not callable(value):
            msg = f"mapping value for key {key!r} must be str or callable, got {_describe(value)}"
            raise TypeError(msg)
        snapshot[key] = value
    return snapshot


def _fold_keys(
    snapshot: dict[str, Replacement], ignore_case: bool
) -> tuple[list[str], list[Replacement]]:
    """The keys as searched (case-folded with *ignore_case*) and their values."""
    if not ignore_case:
        return list(snapshot), list(snapshot.values())
    keys: list[str] = []
    values: list[Replacement] = []
    first: dict[str, str] = {}  # folded key -> the first key that folds to it
    for key, value in snapshot.items():
        folded = key.casefold()
        if folded not in first:
            first[folded] = key
            keys.append(folded)
            values.append(value)
        elif snapshot[first[folded]] != value:
            other = first[folded]
            msg = (
                f"keys {other!r} and {key!r} are equal when case is ignored "
                f"(both fold to {folded!r}) but map to different values "
                f"{snapshot[other]!r} and {value!r}"
            )
            raise ValueError(msg)
    return keys, values


# -- case ------------------------------------------------------------------------------


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


# -- the Replacer ------------------------------------------------------------------------


class Replacer:
    """A compiled, immutable set of replacements, applied in one pass.

    Build it once and call it on many texts: it is thread-safe, picklable (it
    pickles as its mapping and options and recompiles on load) and holds a
    snapshot of the mapping, so later changes to the dict do not affect it.

    Args:
        mapping: Keys are the literal strings to find; values are the replacement
            text or a function called with the matched text that returns it.
        ignore_case: Match with full Unicode case folding (``"STRASSE"`` matches
            ``"straße"``; ``"s"`` never matches half of ``"ß"``).
        whole_words: Match only where the characters before and after the match
            are not word characters (see `is_word_char`).
        preserve_case: Give the replacement the matched text's case pattern:
            all upper -> upper, title case -> title case, otherwise as given.
        engine: ``"auto"`` (the default) picks per text; ``"re"``, ``"automaton"`` or
            ``"exact"`` forces one (see the module's docstring). Every engine gives the
            same results: forcing one is for tests and benchmarks.

    Raises:
        TypeError: If *mapping* is not a Mapping, a key is not a str, a value is
            neither a str nor callable, or an option is not a bool.
        ValueError: If a key is empty or holds a lone surrogate, (with *ignore_case*)
            two keys fold to the same text but map to different values, or *engine* is
            unknown (``"re"`` does not case-fold).

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
        "_automaton",
        "_by_key",
        "_engine",
        "_exact",
        "_ignore_case",
        "_keys",
        "_mapping",
        "_marked",
        "_max_length",
        "_pattern",
        "_pattern_when",
        "_plain",
        "_preserve_case",
        "_repl",
        "_values",
        "_whole_words",
    )

    _automaton: AutomatonSearch | None
    _by_key: dict[str, Replacement]
    _engine: Engine
    _exact: ExactSearch
    _ignore_case: bool
    _keys: list[str]
    _mapping: Mapping[str, Replacement]
    _marked: bool
    _max_length: int
    _pattern: PatternSearch | None
    _pattern_when: Literal["always", "short", "words", "never"]
    _plain: bool
    _preserve_case: bool
    _repl: Callable[[Any], str]
    _values: list[Replacement]
    _whole_words: bool

    def __init__(
        self,
        mapping: Mapping[str, Replacement],
        *,
        ignore_case: bool = False,
        whole_words: bool = False,
        preserve_case: bool = False,
        engine: Engine = "auto",
    ) -> None:
        init = object.__setattr__
        init(self, "_ignore_case", _check_flag("ignore_case", ignore_case))
        init(self, "_whole_words", _check_flag("whole_words", whole_words))
        init(self, "_preserve_case", _check_flag("preserve_case", preserve_case))
        if engine not in ("auto", "re", "automaton", "exact"):
            msg = f"engine must be 'auto', 're', 'automaton' or 'exact', got {engine!r}"
            raise ValueError(msg)
        if engine == "re" and ignore_case:
            msg = "engine 're' does not fold case: use 'auto', 'automaton' or 'exact'"
            raise ValueError(msg)
        init(self, "_engine", engine)
        snapshot = _snapshot(mapping)
        init(self, "_mapping", MappingProxyType(snapshot))
        init(self, "_by_key", snapshot)
        keys, values = _fold_keys(snapshot, ignore_case)
        init(self, "_keys", keys)
        init(self, "_values", values)
        init(self, "_max_length", max(map(len, keys), default=0))
        # Replacements are plain strings, used as they are: the fast paths apply.
        init(self, "_plain", all(isinstance(v, str) for v in values) and not preserve_case)
        init(self, "_repl", _dict_repl(snapshot) if self._plain else self._rendered)  # type: ignore[arg-type]
        self._compile_engines()

    def _compile_engines(self) -> None:
        """The engines this Replacer may use, and when it may use the `re` one."""
        keys, engine, whole = self._keys, self._engine, self._whole_words
        init = object.__setattr__
        pattern, when = None, "never"
        if keys and engine == "re":
            pattern = PatternSearch(keys, whole_words=whole, unicode=whole)
            when = "always"
        elif keys and engine == "auto" and not self._ignore_case:
            if not whole and len(keys) <= _SMALL:
                pattern, when = PatternSearch(keys, whole_words=False, unicode=False), "short"
            elif whole and len(keys) <= _TRIE_MAX:
                pattern, when = PatternSearch(keys, whole_words=True, unicode=False), "words"
        init(self, "_pattern", pattern)
        init(self, "_pattern_when", when)
        automaton = None
        if keys and engine in ("auto", "automaton") and not holds_internal(keys):
            automaton = AutomatonSearch(keys, whole_words=whole, ignore_case=self._ignore_case)
            # The automaton's spans may name a key's other spelling: give it that key's value.
            spelled = [self._values[owner] for owner in automaton.owners[len(keys) :]]
            init(self, "_values", self._values + spelled)
        init(self, "_automaton", automaton)
        # Whole words may be replaced in the marked text if no value holds a marker.
        values = self._values
        init(self, "_marked", whole and self._plain and not holds_internal(values))  # type: ignore[arg-type]
        eager = bool(keys) and automaton is None and when != "always"
        exact = ExactSearch(keys, whole_words=whole, ignore_case=self._ignore_case, eager=eager)
        init(self, "_exact", exact)

    # -- immutability and pickling -------------------------------------------------

    def __setattr__(self, name: str, value: object) -> None:
        msg = f"Replacer is immutable: cannot set {name!r}"
        raise AttributeError(msg)

    def __delattr__(self, name: str) -> None:
        msg = f"Replacer is immutable: cannot delete {name!r}"
        raise AttributeError(msg)

    def __reduce__(self) -> tuple[Callable[..., Replacer], tuple[object, ...]]:
        options = (self._ignore_case, self._whole_words, self._preserve_case, self._engine)
        return (_rebuild, (dict(self._mapping), *options))

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
        engine = "" if self._engine == "auto" else f", engine={self._engine!r}"
        return f"Replacer(<{len(self._mapping)} keys>{options}{engine})"

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

    @property
    def max_match_length(self) -> int:
        """The most characters of text one match can cover (0 for an empty mapping).

        Streaming keeps this many characters (plus one) back between chunks.
        """
        return self._max_length

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
        if type(text) is str and pattern is not None and self._pattern_applies(text, 0, len(text)):
            return pattern.pattern.sub(self._repl, text)  # type: ignore[no-any-return]
        return self.replace_count(text)[0]

    def replace_count(self, text: str) -> tuple[str, int]:
        """Return ``(new_text, number_of_replacements)``.

        Examples:
            >>> Replacer({"C++": "C#"}, whole_words=True).replace_count("C++ not C++11")
            ('C# not C++11', 1)
        """
        _check_text(text)
        pattern = self._pattern
        if pattern is not None and self._pattern_applies(text, 0, len(text)):
            return pattern.pattern.subn(self._repl, text)  # type: ignore[no-any-return]
        parts: list[str] = []
        position = count = 0
        for base, spans, marked in self._windows(text, 0, marked=self._marked):
            if not spans:
                continue
            parts.append(text[position:base])
            if marked is None:
                end = spans[-1][2]
                parts.append(self._assemble(text[base : base + end] if base else text, spans))
            else:  # whole words: replaced in the marked piece, then the markers removed
                end = unmarked_length(marked, spans[-1][2])
                parts.append(unmark(self._assemble(marked, spans)))
            position = base + end
            count += len(spans)
        if not count:
            return text, 0
        parts.append(text[position:])
        return "".join(parts), count

    def iter_matches(self, text: str, pos: int = 0) -> Iterator[tuple[int, int, str]]:
        """Yield ``(start, end, replacement)`` for each match in ``text[pos:]``, left to right.

        Like `re.Pattern.finditer`'s *pos*, the characters before *pos* are not searched
        but still count as context: with ``whole_words`` a match at *pos* must not follow
        a word character. `StreamReplacer` is built on this method alone.

        Raises:
            TypeError: If *text* is not a str or *pos* not an int.
            ValueError: If *pos* is outside ``0..len(text)``.

        Examples:
            >>> list(Replacer({"ab": "X", "b": "Y"}).iter_matches("abb"))
            [(0, 2, 'X'), (2, 3, 'Y')]
            >>> list(Replacer({"b": "Y"}, whole_words=True).iter_matches("ab b", 1))
            [(3, 4, 'Y')]
        """
        _check_text(text)
        return self._matches(text, _check_pos(pos, text))

    def _matches(self, text: str, pos: int) -> Iterator[tuple[int, int, str]]:
        for base, spans, _ in self._windows(text, pos):
            for key_index, start, end in spans:
                start, end = base + start, base + end  # noqa: PLW2901 - to the text's positions
                yield start, end, self._value_for(key_index, text[start:end])

    def replace_stream(
        self,
        reader: SupportsRead,
        writer: SupportsWrite,
        *,
        chunk_size: int = DEFAULT_CHUNK,
    ) -> int:
        """Copy text from *reader* to *writer* with replacements; return how many were made.

        Reads *chunk_size* characters at a time, so memory stays bounded by the chunk
        size and the longest key, and the output is exactly ``self.replace(whole_text)``:
        matches that straddle chunk boundaries and ``whole_words`` checks at those
        boundaries come out the same. Open files with ``newline=""`` so that line endings
        pass through unchanged.

        Raises:
            TypeError: If *reader* has no ``read`` or gives anything but str, *writer* has
                no ``write``, or *chunk_size* is not an int.
            ValueError: If *chunk_size* is not in ``1..MAX_CHUNK``.

        Examples:
            >>> import io
            >>> out = io.StringIO()
            >>> Replacer({"new york": "NYC"}).replace_stream(io.StringIO("new york, new york"),
            ...                                              out, chunk_size=3)
            2
            >>> out.getvalue()
            'NYC, NYC'
        """
        chunk_size = _check_chunk_size(chunk_size)
        for name, given, method in (("reader", reader, "read"), ("writer", writer, "write")):
            if not callable(getattr(given, method, None)):
                msg = f"{name} must have a {method}() method, got {_describe(given)}"
                raise TypeError(msg)
        stream = StreamReplacer(self)
        while True:
            chunk: object = reader.read(chunk_size)
            if not chunk:
                break
            if not isinstance(chunk, str):
                msg = f"reader must give str (open the file in text mode), got {_describe(chunk)}"
                raise TypeError(msg)
            if out := stream.feed(chunk):
                writer.write(out)
        if out := stream.finish():
            writer.write(out)
        return stream.count

    # -- rendering ------------------------------------------------------------------

    def _rendered(self, match: Any) -> str:
        """The `re` engine's replacement function for callables and preserve_case."""
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

    def _value_for(self, key_index: int, matched: str) -> str:
        """Render the replacement of one match."""
        value = self._values[key_index]
        if self._plain:
            return value  # type: ignore[return-value]
        return self._render(value, matched)

    def _assemble(self, text: str, spans: list[Span]) -> str:
        """*text* up to the last span's end, with the spans replaced."""
        position = 0
        pieces: list[str] = []
        append = pieces.append
        if self._plain:
            values = self._values
            for key_index, start, end in spans:
                append(text[position:start])
                append(values[key_index])  # type: ignore[arg-type]
                position = end
        else:
            for key_index, start, end in spans:
                append(text[position:start])
                append(self._value_for(key_index, text[start:end]))
                position = end
        return "".join(pieces)

    # -- searching ------------------------------------------------------------------

    def _pattern_applies(self, text: str, start: int, stop: int) -> bool:
        """Whether the `re` engine is the one for ``text[start:stop]``."""
        when, pattern = self._pattern_when, self._pattern
        if when == "short":
            return stop - start < _SHORT
        if when == "words":
            return pattern is not None and pattern.exact_on(text, start, stop)
        return when == "always"

    def _windows(
        self, text: str, pos: int, *, marked: bool = False
    ) -> Iterator[tuple[int, list[Span], str | None]]:
        """The leftmost-longest ``(key_index, start, end)`` of ``text[pos:]``, one list
        per window of `WINDOW` characters, with the window's start (the spans' origin:
        shifting every span costs more than the search) and None; or with *marked*, for
        a window the automaton searched, its marked piece that the spans are in.

        A window's search reaches `max_match_length` characters past its end, so every
        match that starts in it is whole and checked against the character after it; the
        next window starts where the last of those ends (or at the window's end).
        """
        if not self._keys:
            return
        keep = self._max_length + 1
        length = len(text)
        while pos < length:
            stop = pos + WINDOW
            if stop + keep >= length:
                yield (pos, *self._spans(text, pos, length, marked=marked))
                return
            spans, piece = self._spans(text, pos, stop + keep, marked=marked)
            # Where the window's WINDOW characters end, in the spans' positions
            window = WINDOW if piece is None else marked_cut(piece, keep)
            cut = bisect.bisect_left(spans, window, key=lambda span: span[1])
            end = spans[cut - 1][2] if cut else 0
            if piece is not None:
                end = unmarked_length(piece, end)
            yield pos, spans[:cut], piece
            pos = max(stop, pos + end)

    def _spans(
        self, text: str, start: int, stop: int, *, marked: bool = False
    ) -> tuple[list[Span], str | None]:
        """Leftmost-longest ``(key_index, start, end)`` in ``text[start:stop]``, in that
        piece's positions, with ``text[start - 1]`` as the context before; and None, or
        with *marked* the marked piece the spans are in (see `_windows`)."""
        if self._pattern is not None and self._pattern_applies(text, start, stop):
            return self._pattern.spans(text, start, stop), None
        if self._automaton is not None:
            if marked and (found := self._automaton.marked(text, start, stop)) is not None:
                return found[1], found[0]
            spans = self._automaton.spans(text, start, stop)
            if spans is not None:
                return spans, None
        return self._exact.spans(text, start, stop), None


def _dict_repl(table: dict[str, str]) -> Callable[[re.Match[str]], str]:
    def repl(match: re.Match[str]) -> str:
        return table[match.group()]

    return repl


_OPTIONS: Final = ("ignore_case", "whole_words", "preserve_case", "engine")


def _rebuild(mapping: dict[str, Replacement], *options: Any) -> Replacer:
    """A Replacer from its mapping and its options, in `_OPTIONS`' order (unpickling)."""
    return Replacer(mapping, **dict(zip(_OPTIONS, options, strict=False)))


# -- streams -----------------------------------------------------------------------------


class SupportsRead(Protocol):
    def read(self, size: int = ..., /) -> str: ...


class SupportsWrite(Protocol):
    def write(self, text: str, /) -> object: ...


MAX_CHUNK: Final = 1 << 30
"""The largest *chunk_size* that `Replacer.replace_stream` (and `devutils.textfiles`)
accepts: one read of that size is already far more memory than streaming needs."""


def _check_chunk_size(chunk_size: object) -> int:
    """Return *chunk_size* if it is an int in ``1..MAX_CHUNK`` (TypeError or ValueError if not)."""
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int):
        msg = f"chunk_size must be an int, got {_describe(chunk_size)}"
        raise TypeError(msg)
    if chunk_size < 1:
        msg = f"chunk_size must be positive, got {chunk_size}"
        raise ValueError(msg)
    if chunk_size > MAX_CHUNK:
        msg = f"chunk_size must be at most {MAX_CHUNK} (MAX_CHUNK), got {chunk_size}"
        raise ValueError(msg)
    return chunk_size


class StreamReplacer:
    """Feed text in pieces; get back exactly what replacing the whole text would give.

    With keys of at most ``L`` characters (`Replacer.max_match_length`), a match that
    starts more than ``L`` characters before the end of the text fed so far is final:
    its longest key fits, and so does the character after it, which ``whole_words``
    looks at. So each piece gives back the output up to that point and keeps the rest
    (under ``L + 1`` characters, or the tail of a final match); the last character given
    back stays as the context of the next search (`Replacer.iter_matches`'s *pos*).

    Examples:
        >>> stream = StreamReplacer(Replacer({"new york": "NYC"}))
        >>> stream.feed("new yo") + stream.feed("rk, new") + stream.feed(" york") + stream.finish()
        'NYC, NYC'
        >>> stream.count, stream.changed
        (2, True)
    """

    def __init__(self, replacer: Replacer) -> None:
        given: object = replacer
        if not isinstance(given, Replacer):
            msg = f"replacer must be a Replacer, got {_describe(given)}"
            raise TypeError(msg)
        self._replacer = replacer
        self._keep = replacer.max_match_length + 1
        self._buffer = ""
        self._previous = ""  # the last character given back
        self.count = 0
        """Replacements made so far."""
        self.changed = False
        """Whether a replacement differed from the text it replaced."""

    def feed(self, text: str) -> str:
        """Add *text*; return the output that is now final."""
        self._buffer += _check_text(text)
        if len(self._buffer) < 2 * self._keep:
            return ""
        return self._process(final=False)

    def finish(self) -> str:
        """Return the rest of the output."""
        return self._process(final=True)

    def _process(self, *, final: bool) -> str:
        haystack = self._previous + self._buffer
        offset = len(self._previous)
        commit = len(haystack) if final else len(haystack) - self._keep
        pieces: list[str] = []
        position = offset
        changed = self.changed
        for start, end, value in self._replacer.iter_matches(haystack, offset):
            if start >= commit:
                break
            pieces += (haystack[position:start], value)
            if not changed and value != haystack[start:end]:
                changed = True
            position = end
            self.count += 1
        self.changed = changed
        upto = max(commit, position)
        pieces.append(haystack[position:upto])
        if upto > offset:
            self._previous = haystack[upto - 1]
        self._buffer = haystack[upto:]
        return "".join(pieces)


# -- multi_replace -----------------------------------------------------------------------


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _cached(items: tuple[tuple[str, Replacement], ...], *options: bool) -> Replacer:
    return _rebuild(dict(items), *options)


_last: tuple[Mapping[str, Replacement], tuple[bool, bool, bool], Replacer] | None = None


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
        TypeError: If *text* is not a str, *mapping* is not a Mapping of non-empty str
            keys to str or callable values, or an option is not a bool.
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
    options = (
        _check_flag("ignore_case", ignore_case),
        _check_flag("whole_words", whole_words),
        _check_flag("preserve_case", preserve_case),
    )
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
    given: object = mapping
    if not isinstance(given, Mapping):
        _snapshot(given)  # raises the documented TypeError
    try:
        replacer = _cached(tuple(mapping.items()), *options)
    except TypeError as exc:
        # An unhashable key or value: validate (which names it), else build uncached.
        _snapshot(mapping)
        if "unhashable" not in str(exc):
            raise
        replacer = _rebuild(dict(mapping), *options)
    if type(mapping) is dict:
        _last = (mapping, options, replacer)
    return replacer.replace(text)
