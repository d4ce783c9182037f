"""The engines `devutils.textsearch.Search` searches with, and what they share.

Each engine finds the leftmost-longest matches of literal keys in ``text[start:stop]``
and returns them as ``(key_index, start, end)`` in that piece's positions (`Found`, the
order `ahocorasick_rs` gives). They give identical answers and differ in speed; which
one searches a text is the search's choice, never theirs.

* `Pattern`: a `re` pattern, a longest-first alternation or, for whole words, a
  trie-shaped pattern between word-boundary lookarounds.
* `Automaton`: Aho-Corasick, leftmost-longest (`ahocorasick_rs`). For whole words it
  searches the text with the gaps where a word may start or end marked in it
  (`_mark_words`). For case folding it searches the case-folded text; a character that
  folds to several (``"ß"`` -> ``"ss"``) stands there as one placeholder that the keys'
  spellings with those characters match (`Automaton.find_spelled`, a second automaton,
  built when a text first needs it). It raises `FoldsLonger` or `OverlappingOnly`
  where it cannot answer.
* `Overlapping`: every overlapping occurrence, filtered and resolved leftmost-longest in
  Python, for what the automaton cannot take: keys that hold its markers (U+0002 and
  U+0003, control characters) or placeholders (U+10FF00..U+10FFFF, private use), a
  placeholder in a text searched for the keys' spellings, and the rare foldings
  `Automaton.find_spelled` refuses. A marker in a text is no match's part and no word
  character, so the automaton searches the pieces between (`_by_segments`).

Word characters are Unicode's (UTS #18 Annex C, the `regex` package's ``\\w``,
`is_word_char`); `regex` decides them (once per character), never the search ``"auto"``
picks, which it would slow (docs/text.md; only a forced ``engine="re"`` with whole words
searches with `regex`). Lone surrogates (from ``surrogateescape``) are in no key, so
no match crosses one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

import ahocorasick_rs

from devutils.messages import describe, shown

if TYPE_CHECKING:
    import regex

__all__ = [
    "SURROGATES",
    "Automaton",
    "FoldsLonger",
    "Found",
    "Overlapping",
    "OverlappingOnly",
    "Pattern",
    "folding_positions",
    "holds_internal",
    "is_word_char",
    "marked_cut",
    "unmark",
    "unmarked_length",
]

Found = tuple[int, int, int]
"""``(key_index, start, end)`` of one match, in the positions of the piece searched."""

SURROGATES: Final = re.compile("[\ud800-\udfff]+")
"""Finds a run of lone surrogates (``surrogateescape``'s undecodable bytes): a key must
hold none, and the engines search between them."""

_DFA_KEYS_UP_TO: Final = 1000
"""Characters of the longest key up to which `ahocorasick_rs` picks the kind of automaton
(a DFA for up to 100 keys); with a longer key it is the contiguous NFA, which builds at
once, where a DFA's build grows with the square of a long repetitive key (docs/text.md)."""
_SPELLINGS_MAX: Final = 64
"""Spellings of one key with placeholders beyond which texts with multi-character
foldings go to `Overlapping`."""
_PRIVATE_FIRST: Final = 0x10FF00
_START: Final = "\x02"
_END: Final = "\x03"
"""Markers of the gaps where a whole word may start or end (see `_mark_words`)."""
_MARKERS: Final = _START + _END
_SEPARATORS: Final = re.compile("[\x02\x03\ud800-\udfff]+")
"""Finds a run of markers or lone surrogates: no key the automaton takes holds one, so no
match crosses one, and a marker, a control character, is no word character (so a piece
that ends at one ends as a text does, for whole words)."""
_INTERNAL: Final = re.compile("[\x02\x03\U0010ff00-\U0010ffff]")
"""Finds the characters the automaton uses as markers and placeholders."""
_PLACEHOLDERS: Final = re.compile("[\U0010ff00-\U0010ffff]")
"""Finds a placeholder in a text; needed only where the text folds to a longer one, the
one case the keys' spellings with placeholders search it."""
_COMMON_LONGER: Final = "ßﬁﬂİ"
"""The commonest characters that fold to several, looked for before a piece is folded:
each look is a fast scan, and answered at once in a text of narrower characters."""


# -- pieces between lone surrogates --------------------------------------------------------


def _by_segments(
    find: Callable[[str, int, int], list[Found]],
    text: str,
    start: int,
    stop: int,
    between: re.Pattern[str] = SURROGATES,
) -> list[Found]:
    """``find(text, start, stop)``, or where the text holds lone surrogates (which
    ahocorasick_rs cannot take, and no key holds) the matches between the runs *between*
    finds, in the positions of ``text[start:stop]``. *find* raises UnicodeEncodeError
    there, or `_HoldsMarkers` (which only the automaton's *between*, `_SEPARATORS`,
    splits at)."""
    try:
        return find(text, start, stop)
    except (UnicodeEncodeError, _HoldsMarkers):
        found: list[Found] = []
        begin = start
        for surrogates in between.finditer(text, start, stop):
            shift = begin - start
            found += [
                (key, b + shift, e + shift) for key, b, e in find(text, begin, surrogates.start())
            ]
            begin = surrogates.end()
        shift = begin - start
        return found + [(key, b + shift, e + shift) for key, b, e in find(text, begin, stop)]


# -- word characters -----------------------------------------------------------------------


@functools.cache
def _word_pattern() -> Any:
    """`regex`'s ``\\w``, compiled on first use: only whole words need `regex`, so
    ``devutils replace`` does not pay for importing it otherwise."""
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
        msg = f"char must be a str, got {describe(given)}"
        raise TypeError(msg)
    if len(char) != 1:
        msg = f"char must be one character, got {shown(char)}"
        raise ValueError(msg)
    return _is_word(char)


@functools.cache
def _stdlib_differs() -> re.Pattern[str]:
    """Finds a character whose stdlib `re` ``\\w`` (``str.isalnum()`` or ``_``) differs
    from Unicode's: a combining mark, a superscript or fraction, a circled letter. Every
    such character of the Basic Multilingual Plane is found by asking both once; every
    character beyond it counts as one, to be safe."""
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


# -- the re engine -------------------------------------------------------------------------


class Pattern:
    """The ``"re"`` engine: a longest-first alternation, or for whole words a trie-shaped
    pattern between word-boundary lookarounds. With *by_regex* it is the `regex` package,
    whose ``\\w`` is Unicode's; else stdlib `re`, whose ``\\w`` differs on a few characters
    (combining marks, superscripts), so for whole words it `applies` only to a text that
    holds none; with *shorter_than*, only to texts shorter than that.

    Examples:
        >>> pattern = Pattern(["cat", "category"], whole_words=False)
        >>> pattern.find("a category of cats", 0, 18)  # (key index, start, end)
        [(1, 2, 10), (0, 14, 17)]
        >>> pattern.find("a category of cats", 2, 18)  # in the positions of the piece
        [(1, 0, 8), (0, 12, 15)]
        >>> Pattern(["cafe"], whole_words=True).applies("cafe\\u0301", 0, 5)  # a combining mark
        False
    """

    def __init__(
        self,
        keys: list[str],
        *,
        whole_words: bool,
        by_regex: bool = False,
        shorter_than: int | None = None,
    ) -> None:
        self.index = {key: i for i, key in enumerate(keys)}
        self.whole_words = whole_words
        self.by_regex = by_regex
        self.shorter_than = shorter_than
        self.stdlib: re.Pattern[str] | None = None
        """The pattern, where it is stdlib `re`'s (whose own ``subn``
        `devutils.textsearch.Search.subn` uses)."""
        self.pattern: re.Pattern[str] | regex.Pattern[str]
        body = _bounded(_trie_pattern(keys)) if whole_words else _alternation(keys)
        if by_regex:
            import regex

            self.pattern = regex.compile(body)
        else:
            self.pattern = self.stdlib = re.compile(body)

    def applies(self, text: str, start: int, stop: int) -> bool:
        """Whether this is the engine for ``text[start:stop]``."""
        _check_piece(text, start, stop)
        if self.shorter_than is not None:
            return stop - start < self.shorter_than
        return not self.whole_words or self.by_regex or _stdlib_words_agree(text, start, stop)

    def find(self, text: str, start: int, stop: int) -> list[Found]:
        """The matches in the positions of ``text[start:stop]`` (see the class)."""
        _check_piece(text, start, stop)
        index, found = self.index, self.pattern.finditer(text, start, stop)
        if not start:
            return [(index[match[0]], *match.span()) for match in found]
        return [(index[match[0]], match.start() - start, match.end() - start) for match in found]


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
        branches = []
        for first, child in node.items():
            if not first:
                continue
            run, after = first, child
            while len(after) == 1 and "" not in after:  # a run of characters: one literal
                ((char, after),) = after.items()
                run += char
            branches.append(re.escape(run) + build(after))
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return build(trie)


# -- case folding --------------------------------------------------------------------------


class _Foldings:
    """Characters that case-fold to several (``"ß"`` -> ``"ss"``), and the placeholder
    that stands for each such folding in a folded text and in the keys' spellings. They
    lie in three blocks (Latin, Greek and Armenian; the Latin and Greek extensions; the
    ligatures); one that lies elsewhere in a later Unicode is still handled exactly: the
    text's folded length then differs, and `Overlapping` takes it."""

    def __init__(self) -> None:
        blocks = (range(0x600), range(0x1E00, 0x2000), range(0xFB00, 0xFB50))
        chars = [chr(c) for block in blocks for c in block if len(chr(c).casefold()) > 1]
        foldings = sorted({char.casefold() for char in chars})
        placeholder = {folding: chr(_PRIVATE_FIRST + i) for i, folding in enumerate(foldings)}
        self.chars = re.compile("[" + re.escape("".join(chars)) + "]")
        """Finds a character that folds to several."""
        self.listed = chars
        """Each character that folds to several."""
        self.placeholder_of_char = {char: placeholder[char.casefold()] for char in chars}
        self.foldings = re.compile("|".join(map(re.escape, foldings)))
        """Finds a folding of several characters in a folded key."""
        self.by_first: dict[str, list[tuple[str, str]]] = {}
        """Each folding, and its placeholder, by its first character."""
        for folding in foldings:
            self.by_first.setdefault(folding[0], []).append((folding, placeholder[folding]))

    def positions(self, text: str, start: int, stop: int, most: int) -> list[int] | None:
        """Where the characters that fold to several are in ``text[start:stop]``, in
        order; None if there are more than *most*. A `str.find` per character: each is a
        fast scan, and at once answered for a character wider than any of the text's
        (most of them, in a Latin-1 text)."""
        found: list[int] = []
        for char in self.listed:
            at = text.find(char, start, stop)
            while at >= 0:
                if len(found) == most:
                    return None
                found.append(at)
                at = text.find(char, at + 1, stop)
        return sorted(found)


@functools.cache
def _foldings() -> _Foldings:
    return _Foldings()


def folding_positions(text: str, start: int, stop: int, most: int) -> list[int] | None:
    """Where the characters that fold to several (``"ß"`` -> ``"ss"``) are in
    ``text[start:stop]``, in order; None if there are more than *most*.

    Examples:
        >>> text = "Straße und Maß"
        >>> folding_positions(text, 0, 14, 5), folding_positions(text, 0, 14, 1)
        ([4, 13], None)
        >>> folding_positions(text, 5, 14, 5)  # in the text's positions, not the piece's
        [13]
    """
    _check_piece(text, start, stop)
    if isinstance(most, bool) or not isinstance(most, int) or most < 0:
        kind = ValueError if isinstance(most, int) and not isinstance(most, bool) else TypeError
        msg = f"most must be an int of at least 0, got {describe(most)}"
        raise kind(msg)
    return _foldings().positions(text, start, stop, most)


def _spellings(key: str, limit: int = _SPELLINGS_MAX) -> list[str] | None:
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


def _fold_one_to_one(text: str, folded: str) -> str | None:
    """*text* case-folded, one character for one: each character that folds to several
    becomes its folding's placeholder (None if a character outside the known blocks
    folds to several). *folded* is ``text.casefold()``."""
    if len(folded) == len(text):  # every character folded to one
        return folded
    foldings = _foldings()
    placeholder = foldings.placeholder_of_char
    folded = foldings.chars.sub(lambda char: placeholder[char.group()], text).casefold()
    return folded if len(folded) == len(text) else None


# -- whole-word marking --------------------------------------------------------------------


def _mark_words(text: str, *, word_before: bool = False) -> str:
    """Insert `_START` in every gap where a whole word may start and `_END` where one may end.

    Gap ``g`` (before ``text[g]``) gets `_END` if ``text[g]`` is not a word character
    (or ``g == len(text)``), then `_START` if ``text[g - 1]`` is not one (or ``g == 0``
    and not *word_before*). A key, marked the same way inside and framed by `_START` ...
    `_END` (`_mark_key`), then occurs in the marked text exactly where it occurs as a
    whole word, so plain leftmost-longest search enforces the word boundaries. Built
    with C-speed `str.replace` calls, one per distinct non-word character. Case folding
    never changes whether a character is a word character, so a folded text can be
    marked as its original.

    Examples:
        >>> _mark_words("ab c")
        '\\x02ab\\x03 \\x02c\\x03'
    """
    for char in {char for char in set(text) if not _is_word(char)}:
        text = text.replace(char, f"{_END}{char}{_START}")
    framed = f"{text}{_END}" if word_before else f"{_START}{text}{_END}"
    return framed.replace(_START + _END, _END + _START)


def _mark_key(key: str) -> str:
    """*key* marked as `_mark_words` marks a text, framed where it must start and end."""
    marked = _mark_words(key)
    if not _is_word(key[0]):  # drop the leading gap's _END ...
        marked = marked[1:]
    if not _is_word(key[-1]):  # ... and the trailing gap's _START
        marked = marked[:-1]
    return marked


def unmark(marked: str) -> str:
    """A piece marked by `_mark_words` without its markers.

    Examples:
        >>> unmark("\\x02ab\\x03 \\x02c\\x03")  # "ab c", marked for whole words
        'ab c'
    """
    if type(marked) is not str:
        _check_marked(marked, 0, "end")
    return marked.replace(_START, "").replace(_END, "")


def unmarked_length(marked: str, end: int) -> int:
    """How many characters of the text ``marked[:end]`` holds (its markers left out).

    Examples:
        >>> marked = "\\x02ab\\x03 \\x02c\\x03"  # "ab c", marked for whole words
        >>> unmarked_length(marked, 4), unmarked_length(marked, len(marked))
        (2, 4)
    """
    if not (type(marked) is str and type(end) is int and 0 <= end <= len(marked)):
        _check_marked(marked, end, "end")
    return end - marked.count(_START, 0, end) - marked.count(_END, 0, end)


def marked_cut(marked: str, tail: int) -> int:
    """The position in *marked* where the last *tail* characters of its text begin,
    before that gap's markers: ``unmarked_length(marked, cut)`` is the text's length
    less *tail*. Walks back over those characters only.

    Examples:
        >>> marked = "\\x02ab\\x03 \\x02c\\x03"  # "ab c", marked for whole words
        >>> cut = marked_cut(marked, 1)  # where its last character, "c", begins
        >>> marked[:cut], unmarked_length(marked, cut)
        ('\\x02ab\\x03 ', 3)
    """
    if not (type(marked) is str and type(tail) is int and 0 <= tail <= len(marked)):
        _check_marked(marked, tail, "tail")
    position = len(marked)
    while tail:
        if not position:
            msg = f"tail must be at most the length of marked's text, got {tail} more"
            raise ValueError(msg)
        position -= 1
        if marked[position] not in _MARKERS:
            tail -= 1
    while position and marked[position - 1] in _MARKERS:
        position -= 1
    return position


def _check_marked(marked: object, number: object, name: str) -> None:
    """Refuse a *marked* piece that is no str, or a position *number* (the argument
    *name*) that is no int in ``0..len(marked)``."""
    if not isinstance(marked, str):
        msg = f"marked must be a str, got {describe(marked)}"
        raise TypeError(msg)
    if isinstance(number, bool) or not isinstance(number, int):
        msg = f"{name} must be an int, got {describe(number)}"
        raise TypeError(msg)
    if 0 <= number <= len(marked):
        return
    msg = f"{name} must be in 0..len(marked) ({len(marked)}), got {shown(number)}"
    raise ValueError(msg)


def _check_piece(text: object, start: object, stop: object) -> None:
    """Refuse what names no piece ``text[start:stop]`` of a str: a TypeError naming the
    argument that is no str or no int, a ValueError unless ``0 <= start <= stop <=
    len(text)``. The engines take a piece's ends as they are (a negative one would count
    from the end, as a slice does)."""
    if type(text) is str and type(start) is type(stop) is int and 0 <= start <= stop <= len(text):
        return
    if not isinstance(text, str):
        msg = f"text must be a str, got {describe(text)}"
        raise TypeError(msg)
    if isinstance(start, bool) or not isinstance(start, int):
        msg = f"start must be an int, got {describe(start)}"
        raise TypeError(msg)
    if isinstance(stop, bool) or not isinstance(stop, int):
        msg = f"stop must be an int, got {describe(stop)}"
        raise TypeError(msg)
    if 0 <= start <= stop <= len(text):  # (a str subclass)
        return
    msg = (
        f"start and stop must be 0 <= start <= stop <= len(text) ({len(text)}), "
        f"got {shown(start)} and {shown(stop)}"
    )
    raise ValueError(msg)


# -- the automaton engine ------------------------------------------------------------------


class Automaton:
    """The ``"automaton"`` engine (see the module's docstring).

    Examples:
        >>> automaton = Automaton(["cat", "category"], whole_words=False, ignore_case=True)
        >>> automaton.find("A Category of CATS", 0, 18)  # (key index, start, end)
        [(1, 2, 10), (0, 14, 17)]
        >>> Automaton(["cat"], whole_words=True, ignore_case=False).find("cat category", 0, 12)
        [(0, 0, 3)]
    """

    def __init__(self, keys: list[str], *, whole_words: bool, ignore_case: bool) -> None:
        self.whole_words = whole_words
        self.ignore_case = ignore_case
        self.searched = [_mark_key(key) for key in keys] if whole_words else keys
        self.automaton = _leftmost_longest(self.searched)
        self.complete = True
        """Whether every key's spellings with placeholders are listed (`_SPELLINGS_MAX`)."""
        self.spelled = list(self.searched)
        """Every key, then every other spelling of one, for texts with multi-character
        foldings: the spellings' automaton names a match by its spelling's index."""
        self.owners = list(range(len(keys)))
        """The key of each spelling (of each key, itself)."""
        for index, key in enumerate(self.searched if ignore_case else ()):
            listed = _spellings(key)
            if listed is None:
                self.complete = False
                continue
            others = [spelling for spelling in listed if spelling != key]
            self.spelled += others
            self.owners += [index] * len(others)
        self.markers = [_marker_count(key) for key in self.spelled]
        """The markers inside each spelling (whole words)."""

    @functools.cached_property
    def spelled_automaton(self) -> ahocorasick_rs.AhoCorasick:
        """The automaton of every spelling: built when a text first has a character that
        folds to several, so that texts without one pay nothing for them."""
        if len(self.spelled) == len(self.searched):
            return self.automaton
        return _leftmost_longest(self.spelled)

    def find(self, text: str, start: int, stop: int) -> list[Found]:
        """The matches in the positions of ``text[start:stop]``.

        Raises:
            FoldsLonger: If a character of the piece folds to several (then
                `devutils.textsearch.Search` searches it a piece at a time).
            OverlappingOnly: If only `Overlapping` can answer.
        """
        _check_piece(text, start, stop)

        def find(text: str, start: int, stop: int) -> list[Found]:
            piece, found = self._search(text, start, stop)
            return self._unmarked(piece, found) if self.whole_words else found

        return _by_segments(find, text, start, stop, _SEPARATORS)

    def find_spelled(self, text: str, start: int, stop: int) -> list[Found]:
        """`find` for a piece with characters that fold to several: the case-folded
        piece, with each of them as one placeholder, searched for every spelling of the
        keys (each match named by its spelling's index: `owners` gives its key).

        Raises:
            OverlappingOnly: If only `Overlapping` can answer (a placeholder in the text, a
                key with more spellings than `_SPELLINGS_MAX`, a character outside
                `_Foldings`' blocks that folds to several).
        """
        _check_piece(text, start, stop)

        def find(text: str, start: int, stop: int) -> list[Found]:
            piece = self._marked(_piece(text, start, stop), text, start)
            if not self.complete or _PLACEHOLDERS.search(piece) is not None:
                raise OverlappingOnly
            haystack = _fold_one_to_one(piece, piece.casefold())
            if haystack is None:
                raise OverlappingOnly
            found = self.spelled_automaton.find_matches_as_indexes(haystack)
            return self._unmarked(haystack, found) if self.whole_words else found

        return _by_segments(find, text, start, stop, _SEPARATORS)

    def find_marked(self, text: str, start: int, stop: int) -> tuple[str, list[Found]] | None:
        """For whole words: ``text[start:stop]`` with its word gaps marked, and the
        matches in its positions; None where `find` must answer instead (lone
        surrogates, characters that fold to several) or only `Overlapping` can.
        Replacing in the marked piece and then removing its markers costs less than the
        Python step per match that puts the matches in the text's positions
        (`_unmarked`)."""
        _check_piece(text, start, stop)
        try:
            return self._search(text, start, stop)
        except (OverlappingOnly, FoldsLonger, UnicodeEncodeError):
            return None

    def _search(self, text: str, start: int, stop: int) -> tuple[str, list[Found]]:
        """The piece (marked for whole words) and the matches in it, searched case-folded
        for ignore_case; `FoldsLonger` if folding lengthens it."""
        piece = _piece(text, start, stop)
        may_fold_longer = self.ignore_case and not piece.isascii()
        if may_fold_longer and any(char in piece for char in _COMMON_LONGER):
            raise FoldsLonger  # (found before the piece is marked and folded)
        piece = self._marked(piece, text, start)
        if not self.ignore_case:
            return piece, self.automaton.find_matches_as_indexes(piece)
        haystack = piece.casefold()
        if len(haystack) != len(piece):
            raise FoldsLonger
        return piece, self.automaton.find_matches_as_indexes(haystack)

    def _marked(self, piece: str, text: str, start: int) -> str:
        """*piece*, which starts at *start* in *text*, with its word gaps marked for whole
        words."""
        if not self.whole_words:
            return piece
        if _START in piece or _END in piece:  # a marker in the text itself
            raise _HoldsMarkers
        return _mark_words(piece, word_before=start > 0 and _is_word(text[start - 1]))

    def _unmarked(self, marked: str, found: list[Found]) -> list[Found]:
        """*found* in the marked haystack, in the piece's positions: less the markers
        before each match (counted from the previous match's end) and inside it (as many
        as in its key)."""
        matches: list[Found] = []
        append, markers = matches.append, self.markers
        count = marked.replace(_END, _START).count
        removed = previous = 0
        for key, begin, end in found:
            removed += count(_START, previous, begin)
            first = begin - removed
            removed += markers[key]
            append((key, first, end - removed))
            previous = end
        return matches


def _piece(text: str, start: int, stop: int) -> str:
    """``text[start:stop]`` (*text* itself, uncopied, where that is all of it)."""
    return text if start == 0 and stop == len(text) else text[start:stop]


def _leftmost_longest(keys: list[str]) -> ahocorasick_rs.AhoCorasick:
    return _aho_corasick(keys, ahocorasick_rs.MatchKind.LeftmostLongest)


def _aho_corasick(keys: list[str], kind: ahocorasick_rs.MatchKind) -> ahocorasick_rs.AhoCorasick:
    """The automaton of *keys*: `ahocorasick_rs`'s choice, or the contiguous NFA where a
    key is longer than `_DFA_KEYS_UP_TO`."""
    long = max(map(len, keys), default=0) > _DFA_KEYS_UP_TO
    implementation = ahocorasick_rs.Implementation.ContiguousNFA if long else None
    return ahocorasick_rs.AhoCorasick(keys, matchkind=kind, implementation=implementation)


def _marker_count(key: str) -> int:
    return key.count(_START) + key.count(_END)


def holds_internal(keys: Sequence[str]) -> bool:
    """Whether a key holds the automaton's markers or placeholders (then only
    `Overlapping` can search for it).

    Examples:
        >>> holds_internal(["cat", "dog"]), holds_internal(["cat", "tab\\x02"])
        (False, True)
    """
    return any(_INTERNAL.search(key) for key in keys)


class OverlappingOnly(Exception):
    """This text is for `Overlapping`.

    Examples:
        >>> text = "Stra\\U0010ff00 Straße"  # a placeholder (private use), then a folding
        >>> Automaton(["strasse"], whole_words=False, ignore_case=True).find_spelled(text, 0, 12)
        Traceback (most recent call last):
        ...
        devutils.textengines.OverlappingOnly
        >>> Overlapping(["strasse"], whole_words=False, ignore_case=True).find(text, 0, 12)
        [(0, 6, 12)]
    """


class _HoldsMarkers(OverlappingOnly):
    """This text holds the markers: for `Automaton`, the pieces between them
    (`_by_segments`); for a caller that cannot split it, it is for `Overlapping`."""


class FoldsLonger(Exception):
    """This text holds characters that fold to several (see `Automaton.find_spelled`).

    Examples:
        >>> automaton = Automaton(["strasse"], whole_words=False, ignore_case=True)
        >>> automaton.find("Straße", 0, 6)
        Traceback (most recent call last):
        ...
        devutils.textengines.FoldsLonger
        >>> [(automaton.owners[i], b, e) for i, b, e in automaton.find_spelled("Straße", 0, 6)]
        [(0, 0, 6)]
    """


# -- the overlapping engine ----------------------------------------------------------------


class Overlapping:
    """The ``"overlapping"`` engine: every overlapping occurrence, filtered, then resolved
    leftmost-longest.

    Examples:
        >>> overlapping = Overlapping(["a\\x02b", "ab"], whole_words=False, ignore_case=False)
        >>> overlapping.find("ab a\\x02b", 0, 6)  # a key with a marker in it
        [(1, 0, 2), (0, 3, 6)]
    """

    def __init__(self, keys: list[str], *, whole_words: bool, ignore_case: bool) -> None:
        self.keys = keys
        self.whole_words = whole_words
        self.ignore_case = ignore_case

    @functools.cached_property
    def automaton(self) -> ahocorasick_rs.AhoCorasick:
        """The automaton of every overlapping occurrence: built when a text is first handed
        over (most searches never hand one) and kept for every window after it."""
        return _aho_corasick(self.keys, ahocorasick_rs.MatchKind.Standard)

    def find(self, text: str, start: int, stop: int) -> list[Found]:
        """The matches in the positions of ``text[start:stop]``, ``(key_index, start,
        end)``, left to right (the pieces between lone surrogates searched one by one)."""
        _check_piece(text, start, stop)
        return _by_segments(functools.partial(self._find, self.automaton), text, start, stop)

    def _find(
        self, automaton: ahocorasick_rs.AhoCorasick, text: str, start: int, stop: int
    ) -> list[Found]:
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
        chosen: list[Found] = []
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
