"""Replace many strings in one pass: leftmost-longest, literal keys, never rescanned.

``multi_replace(text, {"a": "b", "b": "a"})`` swaps ``a`` and ``b``; chained
``str.replace`` cannot. At each position the longest key that matches wins, whatever
the mapping's order, matches never overlap, and replacement text is never scanned
again. Keys are literal text: regex metacharacters and backslashes mean themselves.

A `Replacer` holds a mapping, its options and one `devutils.textsearch.Search`, built
with it, that finds the matches (which engine searches a text, in which windows, is the
search's business); the Replacer renders them. `multi_replace` keeps the Replacers of
recent mappings; `devutils.textstream` replaces text that arrives in pieces (its
`StreamReplacer`, `replace_stream` and chunk sizes are importable from here too).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final, NamedTuple

from devutils.messages import describe, shown
from devutils.textcase import match_case
from devutils.textengines import SURROGATES, is_word_char
from devutils.textsearch import Engine, Search
from devutils.textstream import DEFAULT_CHUNK, MAX_CHUNK, StreamReplacer, replace_stream

__all__ = [
    "DEFAULT_CHUNK",
    "MAX_CHUNK",
    "Engine",
    "MappingKeyError",
    "Replacement",
    "Replacer",
    "StreamReplacer",
    "is_word_char",
    "multi_replace",
    "replace_stream",
]

Replacement = str | Callable[[str], str]
"""A mapping value: the replacement text, or a function of the matched text."""

_CACHE_SIZE: Final = 32
"""Replacers `multi_replace` keeps, for the most recent mappings and options."""


# -- validation --------------------------------------------------------------------------


class MappingKeyError(ValueError):
    """A key of the mapping that cannot be searched for, and why.

    ``key`` is the key; ``reason`` is ``"empty"``, ``"surrogate"`` (it holds a lone
    surrogate, an undecodable byte) or ``"folds"`` (with ``ignore_case`` it folds to the
    same text as the key ``other`` but maps to a different value); ``other`` is that key,
    or None.

    Examples:
        >>> try:
        ...     Replacer({"A": "x", "a": "y"}, ignore_case=True)
        ... except MappingKeyError as error:
        ...     print(error.key, error.reason, error.other)
        a folds A
    """

    def __init__(self, message: str, key: str, reason: str, other: str | None = None) -> None:
        super().__init__(message)
        self.key = key
        self.reason = reason
        self.other = other

    def __reduce__(self) -> tuple[type[MappingKeyError], tuple[str, str, str, str | None]]:
        return type(self), (str(self), self.key, self.reason, self.other)


def _check_flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        msg = f"{name} must be a bool, got {describe(value)}"
        raise TypeError(msg)
    return value


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        msg = f"text must be str, got {describe(text)}"
        raise TypeError(msg)
    return text


def _check_mapping(mapping: object) -> Mapping[Any, Any]:
    if not isinstance(mapping, Mapping):
        msg = f"mapping must be a Mapping of str to str or callable, got {describe(mapping)}"
        raise TypeError(msg)
    return mapping


def _snapshot(mapping: object) -> dict[str, Replacement]:
    """Copy and validate a user's mapping."""
    snapshot: dict[str, Replacement] = {}
    for key, value in _check_mapping(mapping).items():
        if not isinstance(key, str):
            msg = f"mapping keys must be str, got {describe(key)}"
            raise TypeError(msg)
        if not key:
            msg = "mapping keys must be non-empty, got ''"
            raise MappingKeyError(msg, key, "empty")
        if (surrogate := SURROGATES.search(key)) is not None:
            msg = (
                f"mapping keys must be Unicode text, got {shown(key)} with a lone surrogate at "
                f"index {surrogate.start()}"
            )
            raise MappingKeyError(msg, key, "surrogate")
        if not isinstance(value, str) and not callable(value):
            given = describe(value)
            msg = f"mapping value for key {shown(key)} must be str or callable, got {given}"
            raise TypeError(msg)
        snapshot[key] = value
    return snapshot


def _fold_keys(
    snapshot: dict[str, Replacement], ignore_case: bool
) -> tuple[list[str], list[Replacement]]:
    """The keys to search for (with *ignore_case*, the first of those that fold alike)
    and their values."""
    if not ignore_case:
        return list(snapshot), list(snapshot.values())
    first: dict[str, str] = {}  # folded key -> the first key that folds to it
    for key, value in snapshot.items():
        other = first.setdefault(key.casefold(), key)
        if snapshot[other] != value:
            msg = (
                f"keys {shown(other)} and {shown(key)} are equal when case is ignored "
                f"(both fold to {shown(key.casefold())}) but map to different values "
                f"{shown(snapshot[other])} and {shown(value)}"
            )
            raise MappingKeyError(msg, key, "folds", other)
    return list(first.values()), [snapshot[key] for key in first.values()]


# -- the Replacer --------------------------------------------------------------------------


_FLAGS: Final = ("ignore_case", "whole_words", "preserve_case")


class _Options(NamedTuple):
    """A Replacer's options, in `_rebuild`'s order."""

    ignore_case: bool
    whole_words: bool
    preserve_case: bool
    engine: Engine

    @classmethod
    def checked(
        cls, ignore_case: object, whole_words: object, preserve_case: object, engine: Engine
    ) -> _Options:
        """The options, each flag checked to be a bool (*engine* is
        `devutils.textsearch.Search`'s to check)."""
        return cls(
            _check_flag("ignore_case", ignore_case),
            _check_flag("whole_words", whole_words),
            _check_flag("preserve_case", preserve_case),
            engine,
        )


class Replacer:
    """A compiled, immutable set of replacements, applied in one pass.

    Build it once and call it on many texts. It is thread-safe, picklable (as its mapping
    and options) and holds a snapshot of the mapping: later changes to the dict are unseen.

    Args:
        mapping: Keys are the literal strings to find; values are the replacement
            text or a function called with the matched text that returns it.
        ignore_case: Match with full Unicode case folding (``"STRASSE"`` matches
            ``"straße"``; ``"s"`` never matches half of ``"ß"``).
        whole_words: Match only where no word character (`is_word_char`) touches the match.
        preserve_case: Give the replacement the matched text's case pattern:
            all upper -> upper, title case -> title case, otherwise as given.
        engine: ``"auto"`` picks per text; the others force one, for tests and benchmarks.

    Raises:
        TypeError: If *mapping* is not a Mapping of str keys to str or callable values,
            an option is not a bool, or *engine* not a str.
        MappingKeyError: A `ValueError`, if a key is empty or holds a lone surrogate,
            or two keys fold alike (with *ignore_case*) but map to different values.
        ValueError: If *engine* is unknown, or ``"re"`` where `devutils.textsearch.Search`
            cannot search these keys with these options.

    Examples:
        >>> swap = Replacer({"cat": "dog", "dog": "cat"})
        >>> swap("cat chases dog")
        'dog chases cat'
        >>> Replacer({"new": "old", "new york": "NYC"})("new york is new")
        'NYC is old'
        >>> Replacer({b"key": "value"})
        Traceback (most recent call last):
        ...
        TypeError: mapping keys must be str, got bytes b'key'
    """

    __slots__ = ("_mapping", "_options", "_plain", "_render", "_search", "_spans_lines")

    def __init__(
        self,
        mapping: Mapping[str, Replacement],
        *,
        ignore_case: bool = False,
        whole_words: bool = False,
        preserve_case: bool = False,
        engine: Engine = "auto",
    ) -> None:
        self._options = _Options.checked(ignore_case, whole_words, preserve_case, engine=engine)
        snapshot = _snapshot(mapping)
        self._mapping = MappingProxyType(snapshot)
        keys, values = _fold_keys(snapshot, ignore_case)
        self._spans_lines = any("\n" in key for key in keys)
        plain = [value for value in values if isinstance(value, str)]
        # Plain strings replace as they are; else each match is rendered.
        self._plain = plain if len(plain) == len(keys) and not preserve_case else None
        self._render = _renderer(values, preserve_case)
        self._search = Search(
            keys,
            ignore_case=ignore_case,
            whole_words=whole_words,
            engine=engine,
            replacements=self._render if self._plain is None else self._plain,
        )

    def __reduce__(self) -> tuple[Callable[..., Replacer], tuple[object, ...]]:
        return (_rebuild, (dict(self._mapping), *self._options))

    def __repr__(self) -> str:
        options = self._options
        shown = [f"<{len(self._mapping)} keys>"]
        shown += [f"{name}=True" for name in _FLAGS if getattr(options, name)]
        shown += [] if options.engine == "auto" else [f"engine={options.engine!r}"]
        return f"Replacer({', '.join(shown)})"

    @property
    def mapping(self) -> Mapping[str, Replacement]:
        """A read-only view of the mapping this Replacer was built from."""
        return self._mapping

    @property
    def ignore_case(self) -> bool:
        """Whether keys match with full Unicode case folding."""
        return self._options.ignore_case

    @property
    def whole_words(self) -> bool:
        """Whether matches must not touch word characters on either side."""
        return self._options.whole_words

    @property
    def preserve_case(self) -> bool:
        """Whether replacements take the matched text's case pattern."""
        return self._options.preserve_case

    @property
    def max_match_length(self) -> int:
        """The most characters of text one match can cover (0 for an empty mapping)."""
        return self._search.max_match_length

    @property
    def spans_lines(self) -> bool:
        """Whether a match may hold a line break (a key holds ``"\\n"``); where none can,
        `StreamReplacer` gives back each line as soon as its line break is fed."""
        return self._spans_lines

    def replace(self, text: str) -> str:
        """Return *text* with every match replaced, in one left-to-right pass.

        Raises:
            TypeError: If *text* is not a str, or a callable value returns a non-str.

        Examples:
            >>> Replacer({"a": "b", "b": "a"}).replace("abba")
            'baab'
        """
        return self._search.subn(text)[0]  # (which checks text)

    __call__ = replace

    def replace_count(self, text: str) -> tuple[str, int]:
        """Return ``(new_text, number_of_replacements)``.

        Examples:
            >>> Replacer({"C++": "C#"}, whole_words=True).replace_count("C++ not C++11")
            ('C# not C++11', 1)
        """
        return self._search.subn(text)  # (which checks text)

    def iter_matches(self, text: str, pos: int = 0) -> Iterator[tuple[int, int, str]]:
        """Yield ``(start, end, replacement)`` for each match in ``text[pos:]``, left to right.

        As with `re.Pattern.finditer`'s *pos*, the characters before *pos* are context only:
        with ``whole_words`` a match at *pos* must not follow a word character.

        Raises:
            TypeError: If *text* is not a str or *pos* not an int.
            ValueError: If *pos* is outside ``0..len(text)``.

        Examples:
            >>> list(Replacer({"ab": "X", "b": "Y"}).iter_matches("abb"))
            [(0, 2, 'X'), (2, 3, 'Y')]
            >>> list(Replacer({"b": "Y"}, whole_words=True).iter_matches("ab b", 1))
            [(3, 4, 'Y')]
        """
        matches = self._search.finditer(text, pos)  # (which checks both)
        if (plain := self._plain) is not None:
            return ((start, end, plain[key]) for start, end, key in matches)
        render = self._render
        return ((start, end, render(key, text[start:end])) for start, end, key in matches)


def _renderer(values: Sequence[Replacement], preserve_case: bool) -> Callable[[int, str], str]:
    """The replacement of each match, from its key's index (in *values*) and its text."""

    def render(key: int, matched: str) -> str:
        value = values[key]
        if not isinstance(value, str):
            result: object = value(matched)
            if not isinstance(result, str):
                msg = f"replacement for {shown(matched)} must return str, got {describe(result)}"
                raise TypeError(msg)
            value = result
        return match_case(matched, value) if preserve_case else value

    return render


def _rebuild(
    mapping: dict[str, Replacement],
    ignore_case: bool,
    whole_words: bool,
    preserve_case: bool,
    engine: Engine,
) -> Replacer:
    """A Replacer from its mapping and options (unpickling, and `multi_replace`'s cache)."""
    return Replacer(
        mapping,
        ignore_case=ignore_case,
        whole_words=whole_words,
        preserve_case=preserve_case,
        engine=engine,
    )


# -- multi_replace -----------------------------------------------------------------------


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _cached(
    items: tuple[tuple[str, Replacement], ...],
    ignore_case: bool,
    whole_words: bool,
    preserve_case: bool,
) -> Replacer:
    """The Replacer of a mapping's items and options, kept for the most recent ones."""
    return _rebuild(dict(items), ignore_case, whole_words, preserve_case, "auto")


def _same_functions(cached: Mapping[str, Replacement], given: Mapping[str, Replacement]) -> bool:
    """Whether the callable values of *cached* are those of *given*, which holds the same
    items by ``==``, in the same order."""
    pairs = zip(cached.values(), given.values(), strict=True)
    return all(value is other for value, other in pairs if not isinstance(value, str))


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
    the mapping's order, and replacement text is never rescanned. The `Replacer`
    of each recent mapping is cached (keyed by its current items and the options, so
    changing the dict between calls is always seen; a callable value must be the same
    object, not one equal to it, and a mapping with an unhashable value is built each
    call). To reuse one mapping on many texts, build a `Replacer` once.

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
        MappingKeyError: A `ValueError`, if a key is empty or holds a lone surrogate,
            or two keys fold together with different values under *ignore_case*.

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
        devutils.text.MappingKeyError: mapping keys must be non-empty, got ''
    """
    # Checked inline first, as every call pays for it; the checks name what is wrong.
    if text.__class__ is not str or not (
        ignore_case.__class__ is whole_words.__class__ is preserve_case.__class__ is bool
    ):
        _check_text(text)
        _Options.checked(ignore_case, whole_words, preserve_case, "auto")
    if type(mapping) is not dict:
        _check_mapping(mapping)
    try:
        replacer = _cached(tuple(mapping.items()), ignore_case, whole_words, preserve_case)
    except TypeError:  # an unhashable value (a callable object), or an invalid mapping
        # (built again uncached, which raises that error)
        replacer = _rebuild(dict(mapping), ignore_case, whole_words, preserve_case, "auto")
    else:
        if replacer._plain is None and not _same_functions(replacer.mapping, mapping):
            # (callables that compare equal to the cached ones but are others)
            replacer = _rebuild(dict(mapping), ignore_case, whole_words, preserve_case, "auto")
    return replacer._search.subn(text)[0]  # (text is checked: what replace() does)
