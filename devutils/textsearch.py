"""Find literal keys in a text, leftmost-longest: `Search`, the one way `devutils.text` searches.

``Search(keys).finditer(text, pos)`` yields the leftmost-longest matches of the keys in
``text[pos:]`` as ``(start, end, key_index)``, in the text's own positions; and
``Search(keys, replacements=...).subn(text)`` replaces them. How they are found is the
search's own business, decided when it is built and per text:

* Which engine (`devutils.textengines`): a `re` pattern for a few keys on a short text,
  or for whole words where stdlib `re`'s word characters agree with Unicode's; else
  Aho-Corasick; every overlapping occurrence, resolved in Python, for the rare text
  the automaton cannot take. They give identical answers; ``engine=`` forces one.
* Windows. A long text is searched `WINDOW` characters at a time (`_Window`), so memory
  holds one window's matches, never every match at once.
* Pieces. With case folding, a window that holds a few characters that fold to several
  (``"ß"`` -> ``"ss"``) is searched a piece at a time, so that only the pieces around
  them pay for their spellings (`Search._around_foldings`).
* Whole words. `subn` replaces plain strings in a window with its word gaps marked and
  then removes the markers; `finditer` gives the matches in the text's positions.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import operator
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Final, Literal, NamedTuple

from devutils.messages import describe, shown
from devutils.textengines import (
    SURROGATES,
    Automaton,
    FoldsLonger,
    Found,
    Overlapping,
    OverlappingOnly,
    Pattern,
    folding_positions,
    holds_internal,
    marked_cut,
    unmark,
    unmarked_length,
)

__all__ = ["WINDOW", "Engine", "Match", "Search"]

Engine = Literal["auto", "re", "automaton", "overlapping"]
"""``"auto"`` picks per text; the others force one engine (for tests and benchmarks)."""
Match = tuple[int, int, int]
"""``(start, end, key_index)`` of one match, in the text's positions."""

WINDOW: Final = 1 << 13
"""Characters of a long text searched at a time."""

_LONG_KEYS: Final = 8
"""Where keys are long, a window is this many times `Search.max_match_length` + 1
characters at least, so that what is searched twice (past each window's end) is at most
an eighth more."""

_SMALL: Final = 16
"""Case-sensitive mappings of at most this many keys use a `re` alternation..."""
_SHORT: Final = 2000
"""...on texts shorter than this; longer texts, Aho-Corasick (measured in bench/)."""
_TRIE_MAX: Final = 500
"""Case-sensitive whole words up to this many keys use a trie-shaped `re` pattern where
stdlib `re`'s word characters are Unicode's (measured in bench/bench_text_edges.py)."""
_PLAIN_GAP: Final = 1 << 10
"""Characters that fold to several are searched in one piece with the keys' spellings
where the plain piece between them would be at most this long; a window with more than
one in every ``_PLAIN_GAP + 1`` characters is searched whole so (`Search._around_foldings`)."""
_START_OF: Final = operator.itemgetter(1)


# -- the search ----------------------------------------------------------------------------


class Search:
    """The leftmost-longest matches of literal keys, found by whichever engine fits a text.

    `finditer` gives the matches. `subn` gives exactly what joining them with their
    *replacements* gives, without a Python step per match where the engine allows: a
    `re` pattern's own ``subn``, each window's matches joined in its own positions, and
    for whole words, in the window with its word gaps marked (docs/architecture.md
    shows what that saves).

    Args:
        keys: Non-empty strings without lone surrogates, distinct (after case folding,
            with *ignore_case*); `devutils.text.Replacer` checks them.
        ignore_case: Match with full Unicode case folding (`str.casefold`).
        whole_words: Match only where the characters just before and just after the
            match are not word characters (`devutils.text.is_word_char`).
        engine: ``"auto"`` picks per text; ``"re"``, ``"automaton"`` or ``"overlapping"``
            forces one (``"automaton"`` still hands `Overlapping` the texts it cannot take).
        replacements: For `subn`: each key's replacement, in the keys' order, or a
            function of the key's index and the matched text that returns it.

    Raises:
        ValueError: If *engine* is unknown, or ``"re"`` with *ignore_case*, or ``"re"`` with
            *whole_words* for keys that are prefixes of one another hundreds deep (more
            than `re` can nest).

    Examples:
        >>> search = Search(["new", "new york"], replacements=["old", "NYC"])
        >>> list(search.finditer("new york, new"))
        [(0, 8, 1), (10, 13, 0)]
        >>> search.subn("new york, new")
        ('NYC, old', 2)
        >>> list(Search(["b"], whole_words=True).finditer("ab b", 1))
        [(3, 4, 0)]
    """

    def __init__(
        self,
        keys: Sequence[str],
        *,
        ignore_case: bool = False,
        whole_words: bool = False,
        engine: Engine = "auto",
        replacements: Sequence[str] | Callable[[int, str], str] | None = None,
    ) -> None:
        keys = _checked_keys(keys, _checked_flag("ignore_case", ignore_case))
        _checked_flag("whole_words", whole_words)
        if not isinstance(engine, str) or engine not in ("auto", "re", "automaton", "overlapping"):
            msg = f"engine must be 'auto', 're', 'automaton' or 'overlapping', got {shown(engine)}"
            raise (ValueError if isinstance(engine, str) else TypeError)(msg)
        _check_replacements(replacements, len(keys))
        if engine == "re" and ignore_case:
            msg = "engine 're' does not fold case: use 'auto', 'automaton' or 'overlapping'"
            raise ValueError(msg)
        self._keys = keys
        self.max_match_length = max(map(len, keys), default=0)
        """The most characters of text one match can cover (0 without keys)."""
        self._pattern = _re_engine(
            keys, engine=engine, ignore_case=ignore_case, whole_words=whole_words
        )
        self._automaton: Automaton | None = None
        if keys and engine in ("auto", "automaton") and not holds_internal(keys):
            self._automaton = Automaton(keys, whole_words=whole_words, ignore_case=ignore_case)
        self._overlapping = Overlapping(keys, whole_words=whole_words, ignore_case=ignore_case)
        self._render = replacements if callable(replacements) else None
        plain = None if replacements is None or callable(replacements) else list(replacements)
        self._repl = _pattern_replacement(self._pattern, plain, self._render)
        # Plain strings replace whole words in the marked text where none holds a marker.
        self._replace_marked = whole_words and plain is not None and not holds_internal(plain)
        spellings = [] if self._automaton is None else self._automaton.owners[len(keys) :]
        if plain is not None and spellings:  # each spelling's replacement: its key's
            plain += [plain[key] for key in spellings]
        self._plain = plain

    def finditer(self, text: str, pos: int = 0) -> Iterator[Match]:
        """The leftmost-longest ``(start, end, key_index)`` of ``text[pos:]``, left to right,
        in the text's positions; the characters before *pos* are context, as in
        `re.Pattern.finditer`. *text* is a str and *pos* in ``0..len(text)``
        (`devutils.text.Replacer.iter_matches` checks both).

        Examples:
            >>> list(Search(["ab", "b"]).finditer("abb"))
            [(0, 2, 0), (2, 3, 1)]
            >>> list(Search(["strasse"], ignore_case=True).finditer("Straße und STRASSE"))
            [(0, 6, 0), (11, 18, 0)]
        """
        if type(text) is not str or type(pos) is not int or not 0 <= pos <= len(text):
            _check_text_and_pos(text, pos)
        windows = self._windows(text, pos, replacing=False)
        return itertools.chain.from_iterable(window.in_text() for window in windows)

    def subn(self, text: str) -> tuple[str, int]:
        """Return ``(new_text, count)``: *text* with each match replaced by its key's
        replacement (given when this search was built), as `re.Pattern.subn` does.

        Raises:
            TypeError: If this search was built without *replacements*.

        Examples:
            >>> Search(["a", "b"], replacements=["b", "a"]).subn("abc")
            ('bac', 2)
            >>> Search(["a"]).subn("abc")
            Traceback (most recent call last):
            ...
            TypeError: subn needs a Search built with replacements
        """
        if self._plain is None and self._render is None:
            msg = "subn needs a Search built with replacements"
            raise TypeError(msg)
        if type(text) is not str:
            _check_text_and_pos(text, 0)
        pattern = self._pattern
        # The re pattern's own subn where it applies to the whole text (inline for the
        # short texts, which every call on a short text asks).
        if (
            pattern is not None
            and (stdlib := pattern.stdlib) is not None
            and (
                len(text) < pattern.shorter_than
                if pattern.shorter_than is not None
                else pattern.applies(text, 0, len(text))
            )
        ):
            return stdlib.subn(self._repl, text)
        parts: list[str] = []
        position = count = 0
        for window in self._windows(text, 0, replacing=True):
            if window.matches:
                replaced = window.replaced(text, self._plain, self._render)
                parts += (text[position : window.start], replaced)
                position = window.start + window.covered
                count += len(window.matches)
        if not count:
            return text, 0
        parts.append(text[position:])
        return "".join(parts), count

    def _windows(self, text: str, pos: int, *, replacing: bool) -> Iterator[_Window]:
        """The matches of ``text[pos:]``, a window of `WINDOW` characters at a time (or
        `_LONG_KEYS` times `max_match_length` + 1, where keys are that long).

        A window's search reaches `max_match_length` + 1 characters past its end, so every
        match that starts in it is whole and checked against the character after it; the
        next window starts where the last of those ends (or at the window's end), and
        searches those characters again.
        """
        if not self._keys:
            return
        keep = self.max_match_length + 1
        size = max(WINDOW, _LONG_KEYS * keep)
        length = len(text)
        while pos < length:
            cut = pos + size
            if cut + keep >= length:
                yield from self._find(text, pos, length, replacing=replacing)
                return
            following = cut
            for window in self._find(text, pos, cut + keep, replacing=replacing):
                kept = window.cut(cut - window.start)
                if kept.matches:
                    following = max(following, kept.start + kept.covered)
                yield kept
            pos = following

    def _find(self, text: str, start: int, stop: int, *, replacing: bool) -> list[_Window]:
        """The matches in ``text[start:stop]``, with ``text[start - 1]`` as the context
        before and *stop* taken as the end of the text, as one window (for `subn`,
        *replacing*, in the marked piece where whole words allow), or where characters
        fold to several, as the pieces of `_around_foldings`."""
        if self._pattern is not None and self._pattern.applies(text, start, stop):
            return [_Window(start, stop, self._pattern.find(text, start, stop))]
        automaton = self._automaton
        if automaton is not None:
            marked = replacing and self._replace_marked
            if marked and (found := automaton.find_marked(text, start, stop)) is not None:
                return [_Window(start, stop, found[1], found[0])]
            try:
                return [_Window(start, stop, automaton.find(text, start, stop))]
            except FoldsLonger:
                with contextlib.suppress(OverlappingOnly):
                    return self._around_foldings(automaton, text, start, stop)
            except OverlappingOnly:
                pass
        return [_Window(start, stop, self._overlapping.find(text, start, stop))]

    def _around_foldings(
        self, automaton: Automaton, text: str, start: int, stop: int
    ) -> list[_Window]:
        """The matches in ``text[start:stop]``, which holds characters that fold to
        several (``"ß"`` -> ``"ss"``), a piece at a time: only the pieces around those
        characters are searched for the keys' spellings (`Automaton.find_spelled`).

        Each piece is searched as a window is (`_windows`): up to its cut and
        `max_match_length` + 1 characters past it, keeping the matches that start before
        the cut; the next piece starts where the last of those ends (or at the cut). So a
        match that crosses from one piece into the next is found whole, as in one search.
        """
        keep = self.max_match_length + 1
        positions = folding_positions(text, start, stop, most=(stop - start) // (_PLAIN_GAP + 1))
        if positions is None:  # dense (as in German): the whole window, with the spellings
            found = automaton.find_spelled(text, start, stop)
            return [_Window(start, stop, found, owners=automaton.owners)]
        if not positions:  # a character outside `_Foldings`' blocks folds to several
            raise OverlappingOnly
        cuts = [*_cuts_around(positions, keep), (stop, False)]
        windows: list[_Window] = []
        position = start
        for cut, spelled in cuts:
            if cut <= position:
                continue
            end = min(cut + keep, stop)
            try:
                if spelled:
                    found = automaton.find_spelled(text, position, end)
                    window = _Window(position, end, found, owners=automaton.owners)
                else:
                    window = _Window(position, end, automaton.find(text, position, end))
            except FoldsLonger:  # (a plain piece holds none of the known ones)
                raise OverlappingOnly from None
            if end == stop:
                windows.append(window)
                break
            windows.append(window.cut(cut - position))
            position = max(cut, position + windows[-1].covered)
        return windows


def _checked_flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        msg = f"{name} must be a bool, got {describe(value)}"
        raise TypeError(msg)
    return value


def _checked_keys(keys: object, ignore_case: bool) -> list[str]:
    """*keys* as a list (case-folded with *ignore_case*), if they are what `Search` takes.
    (Checked over all the keys at once, as a Replacer of many keys builds one each time.)"""
    if isinstance(keys, str) or not isinstance(keys, Sequence):
        msg = f"keys must be a sequence of str (a list or a tuple), got {describe(keys)}"
        raise TypeError(msg)
    if not set(map(type, keys)) <= {str}:
        for key in keys:
            if not isinstance(key, str):
                msg = f"keys must be str, got {describe(key)}"
                raise TypeError(msg)
        keys = [str(key) for key in keys]  # (str subclasses)
    checked = [key.casefold() for key in keys] if ignore_case else list(keys)
    distinct = set(checked)
    if "" in distinct or not _encodes("".join(checked)):  # (a lone surrogate does not)
        key = next(key for key in checked if not key or SURROGATES.search(key))
        msg = f"keys must be non-empty and without lone surrogates, got {shown(key)}"
        raise ValueError(msg)
    if len(distinct) != len(checked):
        seen: set[str] = set()
        for key in checked:
            if key in seen:
                folded = " (case-folded)" if ignore_case else ""
                msg = f"keys must be distinct, got {shown(key)}{folded} twice"
                raise ValueError(msg)
            seen.add(key)
    return checked


def _encodes(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _check_replacements(replacements: object, keys: int) -> None:
    if replacements is None or callable(replacements):
        return
    if isinstance(replacements, str) or not isinstance(replacements, Sequence):
        given = describe(replacements)
        msg = f"replacements must be a sequence of str, a function or None, got {given}"
        raise TypeError(msg)
    if len(replacements) != keys:
        msg = f"replacements must be one for each key ({keys}), got {len(replacements)}"
        raise ValueError(msg)
    for replacement in replacements:
        if not isinstance(replacement, str):
            msg = f"replacements must be str, got {describe(replacement)}"
            raise TypeError(msg)


def _check_text_and_pos(text: object, pos: object) -> None:
    """The errors of `Search.finditer` for a *text* that is not a str or a *pos* outside it."""
    if not isinstance(text, str):
        msg = f"text must be str, got {describe(text)}"
        raise TypeError(msg)
    if isinstance(pos, bool) or not isinstance(pos, int):
        msg = f"pos must be an int, got {describe(pos)}"
        raise TypeError(msg)
    if not 0 <= pos <= len(text):
        msg = f"pos must be between 0 and len(text) = {len(text)}, got {shown(pos)}"
        raise ValueError(msg)


def _cuts_around(positions: list[int], keep: int) -> list[tuple[int, bool]]:
    """The cuts of `Search._around_foldings`' pieces, each with whether the piece that
    ends there holds characters that fold to several: one piece for each run of them (a
    run goes on while the plain piece to the next would be `_PLAIN_GAP` or shorter), from
    *keep* characters before its first to just after its last, and the plain pieces
    between."""
    cuts: list[tuple[int, bool]] = []
    first = last = positions[0]
    for at in positions[1:]:
        if at - keep > last + 1 + _PLAIN_GAP:  # the next run
            cuts += [(first - keep, False), (last + 1, True)]
            first = at
        last = at
    return [*cuts, (first - keep, False), (last + 1, True)]


class _Window(NamedTuple):
    """The matches in ``text[start:stop]``, in the positions of that piece; or where
    *marked* is given, in those of *marked*, the piece with its word gaps marked (where
    `replaced` needs no translation of their positions)."""

    start: int
    stop: int
    matches: list[Found]
    marked: str | None = None
    owners: list[int] | None = None
    """Where a match may name a key's other spelling (`Automaton.find_spelled`), the key
    of each spelling's index."""

    @property
    def covered(self) -> int:
        """How many characters of ``text[start:]`` the matches cover (to the last's end)."""
        if not self.matches:
            return 0
        end = self.matches[-1][2]
        return end if self.marked is None else unmarked_length(self.marked, end)

    def cut(self, chars: int) -> _Window:
        """This window with only the matches that start in its first *chars* characters."""
        marked = self.marked
        limit = chars if marked is None else marked_cut(marked, self.stop - self.start - chars)
        return self._replace(
            matches=self.matches[: bisect.bisect_left(self.matches, limit, key=_START_OF)]
        )

    def in_text(self) -> list[Match]:
        """The matches in the text's positions, each by its key (an unmarked window's)."""
        start, owners = self.start, self.owners
        if owners is not None:
            return [(begin + start, end + start, owners[key]) for key, begin, end in self.matches]
        return [(begin + start, end + start, key) for key, begin, end in self.matches]

    def replaced(
        self,
        text: str,
        plain: Sequence[str] | None,
        render: Callable[[int, str], str] | None,
    ) -> str:
        """The window's text up to its last match's end, each match replaced by
        ``plain[index]`` (which lists each spelling's replacement too) or
        ``render(key, matched)``."""
        if self.marked is not None:
            piece = self.marked
        elif self.start:
            piece = text[self.start : self.start + self.matches[-1][2]]
        else:
            piece = text
        pieces: list[str] = []
        append, position = pieces.append, 0
        if plain is not None:
            for key, begin, end in self.matches:
                append(piece[position:begin])
                append(plain[key])
                position = end
        elif render is not None:
            owners = self.owners
            for index, begin, end in self.matches:
                append(piece[position:begin])
                append(render(index if owners is None else owners[index], piece[begin:end]))
                position = end
        replaced = "".join(pieces)
        return replaced if self.marked is None else unmark(replaced)


def _pattern_replacement(
    pattern: Pattern | None,
    plain: Sequence[str] | None,
    render: Callable[[int, str], str] | None,
) -> Callable[[re.Match[str]], str]:
    """The function a `re` pattern's own ``subn`` calls with each match (one of the keys:
    the `re` engine never folds case) for its replacement."""
    index = {} if pattern is None else pattern.index
    if render is not None:
        return lambda match: render(index[match[0]], match[0])
    table = {}
    if pattern is not None and plain is not None:
        table = {key: plain[i] for key, i in index.items()}
    return lambda match: table[match[0]]


def _re_engine(
    keys: list[str], *, engine: Engine, ignore_case: bool, whole_words: bool
) -> Pattern | None:
    """The ``"re"`` engine where a search uses it: forced, or (by ``"auto"``, case-sensitive)
    for a few keys on short texts, or for whole words where stdlib `re` agrees."""
    if keys and engine == "re":
        try:
            return Pattern(keys, whole_words=whole_words, by_regex=whole_words)
        except RecursionError:
            msg = (
                "engine 're' cannot compile these keys as whole words (keys that are prefixes"
                " of one another nest too deep): use 'auto', 'automaton' or 'overlapping'"
            )
            raise ValueError(msg) from None
    if not keys or engine != "auto" or ignore_case:
        return None
    if not whole_words and len(keys) <= _SMALL:
        return Pattern(keys, whole_words=False, shorter_than=_SHORT)
    if whole_words and len(keys) <= _TRIE_MAX:
        # (keys that are prefixes of one another, hundreds deep, nest the trie deeper
        # than `re` compiles: the automaton takes them)
        with contextlib.suppress(RecursionError):
            return Pattern(keys, whole_words=True)
    return None
