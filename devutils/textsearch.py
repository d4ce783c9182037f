"""Find literal keys in a text, leftmost-longest: the three engines behind `devutils.text`.

Every engine answers the same question, ``spans(text, start, stop)``: the leftmost-longest
``(key_index, start, end)`` of the keys in ``text[start:stop]``, in that piece's positions
(0 is *start*), with ``text[start - 1]`` as the context before (for whole words) and
*stop* taken as the end of the text. They give identical answers; they differ in speed.

* `PatternSearch` (``"re"``): a compiled pattern, a longest-first alternation or, for
  whole words, a trie-shaped pattern between word-boundary lookarounds.
* `AutomatonSearch` (``"automaton"``): Aho-Corasick, leftmost-longest (`ahocorasick_rs`).
  For whole words the text is searched with the gaps where a word may start or end marked
  in it; for ``ignore_case`` it is case-folded first, with each character that folds to
  several (``"ß"`` -> ``"ss"``) standing as one placeholder that the keys' spellings with
  those characters match (a second automaton, built when a text first needs it). It
  hands a text that holds its markers (U+0002 and U+0003, control characters) or
  placeholders (U+10FF00..U+10FFFF, private use) to the exact engine.
* `ExactSearch` (``"exact"``): every overlapping occurrence, filtered and resolved
  leftmost-longest in Python: the slow, obviously correct path.

Word characters are Unicode's (UTS #18 Annex C, the `regex` package's ``\\w``). Lone
surrogates (from ``surrogateescape``) are in no key, so no match crosses one.

`regex` decides which characters are word characters (once per character) and is never
the search itself: in bench/bench_text.py a trie-shaped `regex` pattern between ``\\w``
lookarounds replaces whole words 3.1x (100 keys) to 34x (10,000 keys, Japanese) slower
than these engines, and with ``IGNORECASE | FULLCASE`` (as exact as `str.casefold`) 5.7x
to 37x slower than case-folding the text and searching it with the automaton.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Final

import ahocorasick_rs

__all__ = [
    "SURROGATES",
    "AutomatonSearch",
    "ExactSearch",
    "PatternSearch",
    "Span",
    "holds_internal",
    "is_word_char",
    "marked_cut",
    "unmark",
    "unmarked_length",
]

Span = tuple[int, int, int]
"""``(key_index, start, end)`` of one match, *start* and *end* in the searched piece."""

SPELLINGS_MAX: Final = 64
"""Spellings of one key with placeholders beyond which texts with multi-character
foldings go to the exact engine."""
_PRIVATE_FIRST: Final = 0x10FF00
_START: Final = "\x02"
_END: Final = "\x03"
"""Markers of the gaps where a whole word may start or end (see `mark_words`)."""
_MARKERS: Final = _START + _END
INTERNAL: Final = re.compile("[\x02\x03\U0010ff00-\U0010ffff]")
"""Finds the characters the automaton uses as markers and placeholders."""
_PLACEHOLDERS: Final = re.compile("[\U0010ff00-\U0010ffff]")
"""Finds a placeholder in a text; needed only where the text folds to a longer one, the
one case the keys' spellings with placeholders search it."""
SURROGATES: Final = re.compile("[\ud800-\udfff]+")
"""Finds a run of lone surrogates (``surrogateescape``'s undecodable bytes): no key holds
one, so the engines search between them."""


# -- word characters ---------------------------------------------------------------------


@functools.cache
def _word_pattern() -> Any:
    """`regex`'s ``\\w``, compiled on first use: importing `regex` costs every
    ``devutils replace`` start about 15 ms, and only whole words need it."""
    import regex

    return regex.compile(r"\w")


@functools.lru_cache(maxsize=1 << 16)
def _is_word(char: str) -> bool:
    return _word_pattern().match(char) is not None


def is_word_char(char: str) -> bool:
    """Return True if *char* is a word character for ``whole_words``.

    Unicode's definition (UTS #18, Annex C, as the `regex` package's ``\\w`` matches
    it): letters and other alphabetic characters, combining marks, decimal digits,
    connector punctuation such as ``_``, and the joiners U+200C and U+200D. So a
    combining accent, a Devanagari vowel sign or the zero-width joiner inside an emoji
    sequence is part of the word it is in.

    Raises:
        TypeError: If *char* is not a str.
        ValueError: If *char* is not exactly one character.

    Examples:
        >>> [is_word_char(c) for c in "a_9é語+ -"]
        [True, True, True, True, True, False, False, False]
        >>> is_word_char("\\u0301"), is_word_char("\\u093f"), is_word_char("\\u200d")
        (True, True, True)
        >>> is_word_char("½"), is_word_char("²")
        (False, False)
    """
    given: object = char
    if not isinstance(given, str):
        msg = f"char must be a str, got {type(given).__name__} {given!r}"
        raise TypeError(msg)
    if len(char) != 1:
        msg = f"char must be one character, got {char!r}"
        raise ValueError(msg)
    return _is_word(char)


@functools.cache
def _stdlib_differs() -> re.Pattern[str]:
    """Finds a character whose stdlib `re` ``\\w`` (``str.isalnum()`` or ``_``) differs
    from Unicode's: a combining mark, a superscript or fraction, a circled letter. Every
    such character of the Basic Multilingual Plane is found by asking both once (about
    40 ms); every character beyond it counts as one, to be safe."""
    chars = [
        code
        for code in range(0x80, 0x10000)
        if chr(code).isalnum() != _is_word(chr(code))  # (both agree on "_")
    ]
    ranges: list[list[int]] = []
    for code in chars:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    body = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)
    return re.compile(f"[{body}\U00010000-\U0010ffff]")


def _stdlib_words_agree(text: str, start: int, stop: int) -> bool:
    """Whether stdlib `re`'s word characters are Unicode's on ``text[start:stop]`` and
    the characters on either side (always so on ASCII)."""
    if start == 0 and stop == len(text):
        if text.isascii():
            return True
    elif text[max(start - 1, 0) : stop + 1].isascii():
        return True
    return _stdlib_differs().search(text, max(start - 1, 0), stop + 1) is None


def _by_segments(search: Any, text: str, start: int, stop: int) -> list[Span]:
    """``search(text, start, stop)``, or where the text holds lone surrogates (which
    ahocorasick_rs cannot take, and no key holds) the spans of the pieces between them."""
    try:
        return search(text, start, stop)  # type: ignore[no-any-return]
    except UnicodeEncodeError:
        spans: list[Span] = []
        begin = start
        for surrogates in SURROGATES.finditer(text, start, stop):
            shift = begin - start
            found = search(text, begin, surrogates.start())
            spans += [(key, b + shift, e + shift) for key, b, e in found]
            begin = surrogates.end()
        shift = begin - start
        return spans + [(key, b + shift, e + shift) for key, b, e in search(text, begin, stop)]


# -- the re engine -----------------------------------------------------------------------


class PatternSearch:
    """The ``"re"`` engine: a longest-first alternation, or for whole words a trie-shaped
    pattern between word-boundary lookarounds.

    With *unicode* False it is stdlib `re`, whose ``\\w`` differs from Unicode's on a few
    characters (combining marks, superscripts): `exact_on` then says whether a text
    holds none. With *unicode* True it is the `regex` package (slower: a third of stdlib
    `re`'s speed at 100 whole-word keys).
    """

    def __init__(self, keys: list[str], *, whole_words: bool, unicode: bool) -> None:
        self.index = {key: i for i, key in enumerate(keys)}
        self.whole_words = whole_words
        self.unicode = unicode
        if not whole_words:
            self.pattern: Any = re.compile(_alternation(keys))
        elif unicode:
            import regex

            self.pattern = regex.compile(_bounded(_trie_pattern(keys)))
        else:
            self.pattern = re.compile(_bounded(_trie_pattern(keys)))

    def exact_on(self, text: str, start: int, stop: int) -> bool:
        """Whether this pattern gives the exact answer on ``text[start:stop]``."""
        return not self.whole_words or self.unicode or _stdlib_words_agree(text, start, stop)

    def spans(self, text: str, start: int, stop: int) -> list[Span]:
        index = self.index
        found = self.pattern.finditer(text, start, stop)
        if start == 0:
            return [(index[match.group()], *match.span()) for match in found]
        return [(index[m.group()], m.start() - start, m.end() - start) for m in found]


def _alternation(keys: list[str]) -> str:
    """A longest-first alternation: with literal keys, `re` then matches leftmost-longest."""
    return "|".join(map(re.escape, sorted(keys, key=len, reverse=True)))


def _bounded(body: str) -> str:
    """*body* where no word character is just before or just after it."""
    return rf"(?<!\w)(?:{body})(?!\w)"


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


# -- the automaton engine ----------------------------------------------------------------


class _Foldings:
    """Characters that case-fold to several (``"ß"`` -> ``"ss"``), and the placeholder
    that stands for each such folding in a folded text and in the keys' spellings.

    They lie in three blocks (Latin, Greek and Armenian; the Latin and Greek extensions;
    the ligatures); one that lies elsewhere in a later Unicode is still handled exactly:
    the text's folded length then differs, and the exact engine takes it.
    """

    def __init__(self) -> None:
        blocks = (range(0x600), range(0x1E00, 0x2000), range(0xFB00, 0xFB50))
        chars = [chr(c) for block in blocks for c in block if len(chr(c).casefold()) > 1]
        foldings = sorted({char.casefold() for char in chars})
        placeholder = {folding: chr(_PRIVATE_FIRST + i) for i, folding in enumerate(foldings)}
        self.chars = re.compile("[" + re.escape("".join(chars)) + "]")
        """Finds a character that folds to several."""
        self.placeholder_of_char = {char: placeholder[char.casefold()] for char in chars}
        self.foldings = re.compile("|".join(map(re.escape, foldings)))
        """Finds a folding of several characters in a folded key."""
        self.by_first: dict[str, list[tuple[str, str]]] = {}
        """Each folding, and its placeholder, by its first character."""
        for folding in foldings:
            self.by_first.setdefault(folding[0], []).append((folding, placeholder[folding]))


@functools.cache
def _foldings() -> _Foldings:
    return _Foldings()


def spellings(key: str, limit: int = SPELLINGS_MAX) -> list[str] | None:
    """*key* (folded) spelled every way with placeholders standing for the foldings in it
    (``"strasse"`` -> ``"strasse"``, ``"stra<ss>e"``); None past *limit* spellings."""
    foldings = _foldings()
    if foldings.foldings.search(key) is None:
        return [key]
    ending: list[list[str]] = [[] for _ in range(len(key) + 1)]  # spellings of key[:i]
    ending[0] = [""]
    for index, char in enumerate(key):
        if not ending[index]:
            continue
        steps = [(char, 1)]
        steps += [
            (placeholder, len(folding))
            for folding, placeholder in foldings.by_first.get(char, ())
            if key.startswith(folding, index)
        ]
        for spelled, length in steps:
            ending[index + length] += [prefix + spelled for prefix in ending[index]]
            if len(ending[index + length]) > limit:
                return None
    return ending[-1]


def fold_one_to_one(text: str, folded: str | None = None) -> str | None:
    """*text* case-folded, one character for one: each character that folds to several
    becomes its folding's placeholder (None if a character outside the known blocks
    folds to several). *folded* is ``text.casefold()``, where the caller has it."""
    folded = text.casefold() if folded is None else folded
    if len(folded) == len(text):  # every character folded to one
        return folded
    foldings = _foldings()
    placeholder = foldings.placeholder_of_char
    folded = foldings.chars.sub(lambda char: placeholder[char.group()], text).casefold()
    return folded if len(folded) == len(text) else None


def mark_words(text: str, *, word_before: bool = False) -> str:
    """Insert `_START` in every gap where a whole word may start and `_END` where one may end.

    Gap ``g`` (before ``text[g]``) gets `_END` if ``text[g]`` is not a word character
    (or ``g == len(text)``), then `_START` if ``text[g - 1]`` is not one (or ``g == 0``
    and not *word_before*). A key, marked the same way inside and framed by `_START` ...
    `_END` (`mark_key`), then occurs in the marked text exactly where it occurs as a
    whole word, so plain leftmost-longest search enforces the word boundaries. Built
    with C-speed `str.replace` calls, one per distinct non-word character. Case folding
    never changes whether a character is a word character, so a folded text can be
    marked as its original.
    """
    for char in {char for char in set(text) if not _is_word(char)}:
        text = text.replace(char, f"{_END}{char}{_START}")
    framed = f"{text}{_END}" if word_before else f"{_START}{text}{_END}"
    return framed.replace(_START + _END, _END + _START)


def mark_key(key: str) -> str:
    """*key* marked as `mark_words` marks a text, framed where it must start and end."""
    marked = mark_words(key)
    if not _is_word(key[0]):  # drop the leading gap's _END ...
        marked = marked[1:]
    if not _is_word(key[-1]):  # ... and the trailing gap's _START
        marked = marked[:-1]
    return marked


class AutomatonSearch:
    """The ``"automaton"`` engine (see the module's docstring)."""

    def __init__(self, keys: list[str], *, whole_words: bool, ignore_case: bool) -> None:
        self.whole_words = whole_words
        self.ignore_case = ignore_case
        self.searched = [mark_key(key) for key in keys] if whole_words else keys
        self.automaton = _leftmost_longest(self.searched)
        self.complete = True
        """Whether every key's spellings with placeholders are listed (`SPELLINGS_MAX`)."""
        self.spelled = list(self.searched)
        """Every key, then every other spelling of one, for texts with multi-character
        foldings. A span's key index may be a spelling's (at or past ``len(keys)``)."""
        self.owners = list(range(len(keys)))
        """The key of each spelling."""
        for index, key in enumerate(self.searched if ignore_case else ()):
            listed = spellings(key)
            if listed is None:
                self.complete = False
                continue
            others = [spelling for spelling in listed if spelling != key]
            self.spelled += others
            self.owners += [index] * len(others)
        self.markers = [_marker_count(key) for key in self.spelled] if whole_words else []
        """The markers inside each spelling (whole words)."""

    @functools.cached_property
    def spelled_automaton(self) -> ahocorasick_rs.AhoCorasick:
        """The automaton of every spelling: built when a text first has a character that
        folds to several, so that texts without one pay nothing for them."""
        if len(self.spelled) == len(self.searched):
            return self.automaton
        return _leftmost_longest(self.spelled)

    def spans(self, text: str, start: int, stop: int) -> list[Span] | None:
        """The spans, or None where only the exact engine can answer."""
        try:
            return _by_segments(self._spans, text, start, stop)
        except _NotHere:
            return None

    def marked(self, text: str, start: int, stop: int) -> tuple[str, list[Span]] | None:
        """For whole words: ``text[start:stop]`` with its word gaps marked, and the spans
        in the marked piece's positions; None where `spans` must answer instead (lone
        surrogates) or only the exact engine can. `unmark` removes the markers again:
        replacing in the marked piece and then unmarking it costs less than translating
        every span's positions (`spans`), which takes a Python loop per match."""
        try:
            marked, _, found = self._find(text, start, stop)
        except (_NotHere, UnicodeEncodeError):
            return None
        return marked, found

    def _spans(self, text: str, start: int, stop: int) -> list[Span]:
        _, haystack, found = self._find(text, start, stop)
        if not self.whole_words:
            return found
        # Positions in the marked text, less the markers before each match (counted
        # from the previous match's end) and inside it (as many as in its key).
        spans: list[Span] = []
        append, markers = spans.append, self.markers
        count = haystack.replace(_END, _START).count
        removed = previous = 0
        for key, begin, end in found:
            removed += count(_START, previous, begin)
            first = begin - removed
            removed += markers[key]
            append((key, first, end - removed))
            previous = end
        return spans

    def _find(self, text: str, start: int, stop: int) -> tuple[str, str, list[Span]]:
        """The piece (marked for whole words), the haystack searched (that, case-folded
        for ignore_case) and the spans in it."""
        piece = text if start == 0 and stop == len(text) else text[start:stop]
        if self.whole_words:
            if _START in piece or _END in piece:  # a marker in the text itself
                raise _NotHere
            piece = mark_words(piece, word_before=start > 0 and _is_word(text[start - 1]))
        haystack, automaton = piece, self.automaton
        if self.ignore_case:
            haystack = piece.casefold()
            if len(haystack) != len(piece):  # "ß" -> "ss": placeholders keep it 1 to 1
                if _PLACEHOLDERS.search(piece) is not None:  # one in the text itself
                    raise _NotHere
                one_to_one = fold_one_to_one(piece, haystack) if self.complete else None
                if one_to_one is None:
                    raise _NotHere
                haystack, automaton = one_to_one, self.spelled_automaton
        return piece, haystack, automaton.find_matches_as_indexes(haystack)


def unmark(marked: str) -> str:
    """A piece marked by `mark_words` without its markers.

    Examples:
        >>> marked = mark_words("ab c")
        >>> marked, unmark(marked)
        ('\\x02ab\\x03 \\x02c\\x03', 'ab c')
    """
    return marked.replace(_START, "").replace(_END, "")


def unmarked_length(marked: str, end: int) -> int:
    """How many characters of the text ``marked[:end]`` holds (its markers left out).

    Examples:
        >>> unmarked_length(mark_words("ab c"), 4)  # '\\x02ab\\x03'
        2
    """
    return end - marked.count(_START, 0, end) - marked.count(_END, 0, end)


def marked_cut(marked: str, tail: int) -> int:
    """The position in *marked* where the last *tail* characters of its text begin,
    before that gap's markers: ``unmarked_length(marked, cut)`` is the text's length
    less *tail*. Walks back over those characters only.

    Examples:
        >>> marked = mark_words("ab c")
        >>> cut = marked_cut(marked, 1)  # before the last character, "c", and its marker
        >>> marked[:cut], unmarked_length(marked, cut)
        ('\\x02ab\\x03 ', 3)
    """
    position = len(marked)
    while tail:
        position -= 1
        if marked[position] not in _MARKERS:
            tail -= 1
    while position and marked[position - 1] in _MARKERS:
        position -= 1
    return position


def _leftmost_longest(keys: list[str]) -> ahocorasick_rs.AhoCorasick:
    return ahocorasick_rs.AhoCorasick(keys, matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)


def _marker_count(key: str) -> int:
    return key.count(_START) + key.count(_END)


class _NotHere(Exception):
    """This text is for the exact engine."""


def holds_internal(keys: list[str]) -> bool:
    """Whether a key holds the automaton's markers or placeholders (then only the exact
    engine can search for it).

    Examples:
        >>> holds_internal(["straße", "a\\x02b"]), holds_internal(["straße"])
        (True, False)
    """
    return any(INTERNAL.search(key) for key in keys)


# -- the exact engine --------------------------------------------------------------------


class ExactSearch:
    """The ``"exact"`` engine: every overlapping occurrence, filtered, then resolved
    leftmost-longest. With *eager* its automaton is built now (for a Replacer that uses
    it on every text); else each search builds one (for the rare text handed over)."""

    def __init__(
        self, keys: list[str], *, whole_words: bool, ignore_case: bool, eager: bool
    ) -> None:
        self.keys = keys
        self.whole_words = whole_words
        self.ignore_case = ignore_case
        self.automaton = ahocorasick_rs.AhoCorasick(keys) if eager else None

    def spans(self, text: str, start: int, stop: int) -> list[Span]:
        automaton = self.automaton or ahocorasick_rs.AhoCorasick(self.keys)
        return _by_segments(functools.partial(self._spans, automaton), text, start, stop)

    def _spans(
        self, automaton: ahocorasick_rs.AhoCorasick, text: str, start: int, stop: int
    ) -> list[Span]:
        piece = text[start:stop]
        haystack = piece.casefold() if self.ignore_case else piece
        origin = _origins(piece) if len(haystack) != len(piece) else None
        best: dict[int, tuple[int, int]] = {}
        for key, found_begin, found_end in automaton.find_matches_as_indexes(
            haystack, overlapping=True
        ):
            begin, end = found_begin, found_end
            if origin is not None:
                begin, end = origin[found_begin], origin[found_end]
                if begin < 0 or end < 0:  # inside a character's folding
                    continue
            if self.whole_words and (
                (begin + start > 0 and _is_word(text[begin + start - 1]))
                or (end < len(piece) and _is_word(piece[end]))
            ):
                continue
            if begin not in best or end > best[begin][0]:
                best[begin] = (end, key)
        chosen: list[Span] = []
        position = 0
        for begin in sorted(best):
            if begin >= position:
                end, key = best[begin]
                chosen.append((key, begin, end))
                position = end
        return chosen


def _origins(piece: str) -> list[int]:
    """For each index of ``piece.casefold()`` (and its end), the index in *piece* of the
    character whose folding starts there, or -1 inside a folding of several characters."""
    origin = [-1] * (len(piece.casefold()) + 1)
    position = 0
    for index, char in enumerate(piece):
        origin[position] = index
        position += len(char.casefold())
    origin[position] = len(piece)
    return origin
