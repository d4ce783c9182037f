"""The brute-force reference for `devutils.text` that the text tests share: leftmost-longest
found by trying every end at every position, with case folding, whole words and
preserve case (VS Code's rules) written the obvious way."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from devutils.text import Replacement, is_word_char


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
            out.append(_case_like(piece, result) if preserve_case else result)
            i = j
            break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _case_like(piece: str, result: str) -> str:
    """VS Code's preserve case, on our three rules: part by part where *piece* and
    *result* have as many ``-``-parts (and not as many ``_``-parts), or the reverse."""
    same = {sep for sep in "-_" if sep in piece and len(piece.split(sep)) == len(result.split(sep))}
    if len(same) == 1:
        (sep,) = same
        return sep.join(map(_case_like, piece.split(sep), result.split(sep)))
    if piece.isupper():
        return result.upper()
    if piece.istitle():  # each word, between runs of whitespace
        return "".join(_title(part) for part in re.split(r"(\s+)", result))
    return result


def _title(word: str) -> str:
    # cased: lower, upper or title case (as str.title sees it), "ĸ" too, which has no upper
    cased = [i for i, c in enumerate(word) if c.islower() or c.isupper() or c.istitle()]
    if not cased:
        return word
    i = cased[0]
    # the rest lower-cased with the first letter before it, as str.lower sees a word
    # (a final sigma: "ΟΣ" -> "Ος")
    return word[:i] + word[i].title() + word[i:].lower()[len(word[i].lower()) :]
