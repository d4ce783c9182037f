"""Replace text that arrives in pieces: exactly what replacing the whole text would give.

`StreamReplacer` takes the pieces one at a time and gives back the output that is final;
`replace_stream` copies a reader to a writer through one (`devutils.text` exports both).
Both work with any replacer that finds its matches in a text from a position on
(`Matcher`, such as `devutils.text.Replacer`), and keep back only what a later piece could
still change: at most `Matcher.max_match_length` + 1 characters.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final, Protocol

from devutils.messages import describe, shown

__all__ = [
    "DEFAULT_CHUNK",
    "MAX_CHUNK",
    "Matcher",
    "StreamReplacer",
    "SupportsRead",
    "SupportsWrite",
    "check_chunk_size",
    "replace_stream",
]

DEFAULT_CHUNK: Final = 1 << 20
"""Characters read at a time by `replace_stream`."""
MAX_CHUNK: Final = 1 << 30
"""The largest *chunk_size* that `replace_stream` (and `devutils.textfiles`) accepts:
one read of that size is already far more memory than streaming needs."""


class Matcher(Protocol):
    """What streaming needs of a replacer (`devutils.text.Replacer` is one).

    Examples:
        >>> import re
        >>> class Digits:  # each digit becomes "#"
        ...     max_match_length = 1
        ...     def iter_matches(self, text, pos=0):
        ...         for match in re.compile(r"\\d").finditer(text, pos):
        ...             yield match.start(), match.end(), "#"
        >>> stream = StreamReplacer(Digits())
        >>> stream.feed("pin 12") + stream.feed("34") + stream.finish()
        'pin ####'
    """

    @property
    def max_match_length(self) -> int:
        """The most characters of text one match can cover.

        Examples:
            >>> from devutils.text import Replacer
            >>> Replacer({"new": "old", "new york": "NYC"}).max_match_length
            8
        """
        ...

    def iter_matches(self, text: str, pos: int = 0) -> Iterator[tuple[int, int, str]]:
        """``(start, end, replacement)`` of each match in ``text[pos:]``, left to right,
        the characters before *pos* being context only.

        Examples:
            >>> from devutils.text import Replacer
            >>> list(Replacer({"ab": "X"}).iter_matches("ab ab", 1))
            [(3, 5, 'X')]
        """
        ...

    # Optional: ``spans_lines``, False where no match can hold a "\n" (see StreamReplacer).


class SupportsRead(Protocol):
    """What `replace_stream` reads from: ``read(size)`` gives the next piece of text as a
    str (of any length), and ``""`` at the end (a text file, `io.StringIO`, ...).

    Examples:
        >>> import io
        >>> from devutils.text import Replacer
        >>> class Pieces:  # a reader of pieces that arrive one at a time
        ...     def __init__(self, *pieces):
        ...         self.pieces = list(pieces)
        ...     def read(self, size=-1, /):
        ...         return self.pieces.pop(0) if self.pieces else ""
        >>> out = io.StringIO()
        >>> replace_stream(Replacer({"new york": "NYC"}), Pieces("new yo", "rk, new york"), out)
        2
        >>> out.getvalue()
        'NYC, NYC'
    """

    def read(self, size: int = ..., /) -> str: ...


class SupportsWrite(Protocol):
    """What `replace_stream` writes to: ``write(text)`` takes each piece of output (what
    it returns is ignored), as a text file or `io.StringIO` does.

    Examples:
        >>> import io
        >>> from devutils.text import Replacer
        >>> class Lines(list):  # a writer that keeps each piece written
        ...     def write(self, text, /):
        ...         self.append(text)
        >>> out = Lines()
        >>> replace_stream(Replacer({"cat": "dog"}), io.StringIO("a cat\\ncats\\n"), out,
        ...                chunk_size=6)
        2
        >>> out
        ['a dog\\n', 'dogs\\n']
    """

    def write(self, text: str, /) -> object: ...


def check_chunk_size(chunk_size: object) -> int:
    """Return *chunk_size* if it is an int in ``1..MAX_CHUNK``.

    Raises:
        TypeError: If *chunk_size* is not an int.
        ValueError: If it is outside ``1..MAX_CHUNK``.

    Examples:
        >>> check_chunk_size(4096)
        4096
        >>> check_chunk_size(0)
        Traceback (most recent call last):
        ...
        ValueError: chunk_size must be positive, got 0
    """
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int):
        msg = f"chunk_size must be an int, got {describe(chunk_size)}"
        raise TypeError(msg)
    if chunk_size < 1:
        msg = f"chunk_size must be positive, got {shown(chunk_size)}"
        raise ValueError(msg)
    if chunk_size > MAX_CHUNK:
        msg = f"chunk_size must be at most {MAX_CHUNK} (MAX_CHUNK), got {shown(chunk_size)}"
        raise ValueError(msg)
    return chunk_size


class StreamReplacer:
    """Feed text in pieces; get back exactly what replacing the whole text would give.

    With keys of at most ``L`` characters (`Matcher.max_match_length`), a match that
    starts more than ``L + 1`` characters before the end of the text fed so far is final:
    its longest key fits, and so does the character after it, which ``whole_words``
    looks at. So each piece gives back the output up to that point and keeps the rest
    (at most the last ``L + 1`` characters: fewer where a final match ends inside them);
    the last character given back stays as the context of the next search
    (`Matcher.iter_matches`'s *pos*). A piece is searched once at least ``2 * (L + 1)``
    characters are waiting, so that each search gives back at least as much as it keeps.

    Where no match can hold a line break (``"\\n"``: the replacer's ``spans_lines`` is
    False, as a `devutils.text.Replacer`'s is where no key holds one), a piece that holds
    one gives back everything up to its last, so text fed a line at a time comes back a
    line at a time (``tail -f log | devutils replace ...`` shows each line as it is
    written).

    Raises:
        TypeError: If *replacer* has no ``iter_matches`` and ``max_match_length`` (an int,
            not a bool), or a piece fed is not a str.
        ValueError: If *replacer*'s ``max_match_length`` is below 0, or text is fed, or
            `finish` called, after `finish` (the output is complete: start a new stream
            for more text).

    Examples:
        >>> from devutils.text import Replacer
        >>> stream = StreamReplacer(Replacer({"new york": "NYC"}))
        >>> stream.feed("new yo") + stream.feed("rk, new") + stream.feed(" york") + stream.finish()
        'NYC, NYC'
        >>> stream.count, stream.changed
        (2, True)
        >>> StreamReplacer(Replacer({"abc": "X"})).feed("first abc\\nsec")  # (a whole line)
        'first X\\n'
    """

    def __init__(self, replacer: Matcher) -> None:
        given: object = replacer
        longest = getattr(given, "max_match_length", None)
        if (
            not callable(getattr(given, "iter_matches", None))
            or isinstance(longest, bool)
            or not isinstance(longest, int)
        ):
            msg = f"replacer must be a Replacer, got {describe(given)}"
            raise TypeError(msg)
        if longest < 0:
            msg = f"replacer's max_match_length must be >= 0, got {shown(longest)}"
            raise ValueError(msg)
        self._replacer = replacer
        self._keep = replacer.max_match_length + 1
        # Where no match can hold a "\n" (a Replacer's spans_lines tells), the text up to
        # the last "\n" fed is final, so each line comes back whole.
        self._by_lines = getattr(replacer, "spans_lines", True) is False
        self._buffer = ""
        self._previous = ""  # the last character given back
        self._finished = False
        self.count = 0
        """Replacements made so far."""
        self.changed = False
        """Whether a replacement differed from the text it replaced."""

    def feed(self, text: str) -> str:
        """Add *text*; return the output that is now final.

        Examples:
            >>> from devutils.text import Replacer
            >>> stream = StreamReplacer(Replacer({"cat": "dog"}))
            >>> stream.feed("a ca"), stream.feed("t and a cat sat")  # (the rest is kept back)
            ('', 'a dog and a dog')
        """
        given: object = text
        if not isinstance(given, str):
            msg = f"text must be str, got {describe(given)}"
            raise TypeError(msg)
        self._check_open("feed")
        self._buffer += text
        if len(self._buffer) < 2 * self._keep and not (self._by_lines and "\n" in text):
            return ""
        return self._replace(final=False)

    def finish(self) -> str:
        """Return the rest of the output.

        Examples:
            >>> from devutils.text import Replacer
            >>> stream = StreamReplacer(Replacer({"cat": "dog"}))
            >>> stream.feed("a cat"), stream.finish()
            ('', 'a dog')
            >>> stream.finish()
            Traceback (most recent call last):
            ...
            ValueError: finish() after finish(): the stream's output is complete
        """
        self._check_open("finish")
        self._finished = True
        return self._replace(final=True)

    def _check_open(self, method: str) -> None:
        if self._finished:
            msg = f"{method}() after finish(): the stream's output is complete"
            raise ValueError(msg)

    def _replace(self, *, final: bool) -> str:
        """The output up to the last final match (all of it if *final*)."""
        haystack = self._previous + self._buffer
        offset = len(self._previous)
        commit = len(haystack) if final else len(haystack) - self._keep
        if self._by_lines and not final:
            commit = max(commit, haystack.rfind("\n") + 1)
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


def replace_stream(
    replacer: Matcher,
    reader: SupportsRead,
    writer: SupportsWrite,
    *,
    chunk_size: int = DEFAULT_CHUNK,
) -> int:
    """Copy text from *reader* to *writer* with replacements; return how many were made.

    Reads *chunk_size* characters at a time through a `StreamReplacer`, so the output is
    exactly the whole text replaced: matches that straddle two reads, and ``whole_words``
    checks there, come out as they would in one. Open files with ``newline=""`` so that
    line endings pass through unchanged.

    Raises:
        TypeError: If *replacer* is not a replacer (`Matcher`), *reader* has no ``read``
            or gives anything but str, *writer* has no ``write``, or *chunk_size* is not
            an int.
        ValueError: If *chunk_size* is not in ``1..MAX_CHUNK``.

    Examples:
        >>> import io
        >>> from devutils.text import Replacer
        >>> out = io.StringIO()
        >>> replace_stream(Replacer({"new york": "NYC"}), io.StringIO("new york, new york"),
        ...                out, chunk_size=3)
        2
        >>> out.getvalue()
        'NYC, NYC'
    """
    chunk_size = check_chunk_size(chunk_size)
    for name, given, method in (("reader", reader, "read"), ("writer", writer, "write")):
        if not callable(getattr(given, method, None)):
            msg = f"{name} must have a {method}() method, got {describe(given)}"
            raise TypeError(msg)
    stream = StreamReplacer(replacer)
    while True:
        chunk: object = reader.read(chunk_size)
        if not isinstance(chunk, str):  # (b"" or None too: no end of text)
            msg = f"reader must give str (open the file in text mode), got {describe(chunk)}"
            raise TypeError(msg)
        if not chunk:
            break
        if out := stream.feed(chunk):
            writer.write(out)
    if out := stream.finish():
        writer.write(out)
    return stream.count
