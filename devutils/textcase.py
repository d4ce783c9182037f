"""Give a replacement the case pattern of the text it replaces, as an editor's "preserve
case" does: `match_case` (what ``Replacer(..., preserve_case=True)`` applies to each
match).

Three patterns, as VS Code's ``buildReplaceStringWithCasePreserved`` has them: all upper
case gives an upper-case replacement, title case a title-case one, anything else the
replacement as given. Where the matched text and the replacement split into as many parts
at ``-`` (or at ``_``, not both), each part follows its own pattern, and may split again at
the other separator.
"""

from __future__ import annotations

import re
from typing import Final

from devutils.messages import describe

__all__ = ["match_case"]

_WORD: Final = re.compile(r"\S+")


def match_case(matched: str, replacement: str) -> str:
    """Return *replacement* in the case pattern of *matched*.

    All upper case (``str.isupper``) -> upper case; title case (``str.istitle``) -> each
    whitespace-separated word's first cased character in title case (``"ß"`` -> ``"Ss"``,
    as `str.title` has it; a cased letter without an upper case, ``"ĸ"``, stays as it is,
    and an uncased letter such as ``"中"`` is passed over) and the rest lower; otherwise
    *replacement* as given. Part by part where both split into as many parts at ``-``,
    or at ``_`` (but not both); a part may split again at the other.

    Raises:
        TypeError: If *matched* or *replacement* is not a str.

    Examples:
        >>> match_case("HELLO", "goodbye"), match_case("Hello", "goodbye")
        ('GOODBYE', 'Goodbye')
        >>> match_case("hello", "GoodBye")
        'GoodBye'
        >>> match_case("User_Id", "account_id"), match_case("FOO-bar", "baz-qux")
        ('Account_Id', 'BAZ-qux')
        >>> match_case("a_x-Foo_BAR", "b-baz_qux")
        'b-Baz_QUX'
        >>> match_case("Hi", b"bye")
        Traceback (most recent call last):
        ...
        TypeError: replacement must be a str, got bytes b'bye'
    """
    given: tuple[object, object] = (matched, replacement)
    if not isinstance(given[0], str):
        msg = f"matched must be a str, got {describe(given[0])}"
        raise TypeError(msg)
    if not isinstance(given[1], str):
        msg = f"replacement must be a str, got {describe(given[1])}"
        raise TypeError(msg)
    return _match_case(matched, replacement)


def _match_case(matched: str, replacement: str) -> str:
    split = [
        separator
        for separator in "-_"
        if separator in matched and matched.count(separator) == replacement.count(separator)
    ]
    if len(split) == 1:
        parts = zip(matched.split(split[0]), replacement.split(split[0]), strict=True)
        return split[0].join(_match_case(*pair) for pair in parts)
    if matched.isupper():
        return replacement.upper()
    if matched.istitle():
        return _WORD.sub(_title_word, replacement)
    return replacement


def _title_word(match: re.Match[str]) -> str:
    """Title-case the first cased character of a word and lower-case the rest."""
    word = match.group()
    for index, char in enumerate(word):
        if char.islower() or char.isupper() or char.istitle():  # (cased: "ĸ" is, unchanged)
            # (the rest lower-cased after that character, as in the whole word: a capital
            # sigma at a word's end lowers to the final sigma, alone to the other one)
            rest = word[index:].lower()[len(char.lower()) :]
            return word[:index] + char.title() + rest
    return word
