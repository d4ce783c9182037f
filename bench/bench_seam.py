"""Why `devutils.textsearch.Search` has `subn` beside `finditer`: replacing through each.

Run from the repository root::

    python3 bench/bench_seam.py

`Search.subn(text)` replaces the matches at C speed where the engine allows (a `re`
pattern's own ``subn``, a window's matches joined in its own positions, whole words in
the marked text). The alternative is one way in only: `Search.finditer` and a join in
Python, the loop below. Both give the same text (checked); the table shows the best of 5
of each, and subn's speed relative to the join (above 1: subn is faster).

On a short string `Search.finditer` pays for its windows, which a finditer made for one
way in would not: the last row also times that way at its leanest, `ahocorasick_rs`'s
matches put in ``(start, end, key_index)`` order and joined (`replace_by_lean_matches`),
with nothing between the call and the engine.
"""

from __future__ import annotations

import os
import sys
import timeit
from pathlib import Path

import ahocorasick_rs

from devutils.textsearch import Search

CORPUS = Path(
    os.environ.get(
        "DEVUTILS_CORPUS", Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
    )
)


def replace_by_finditer(search: Search, values: list[str], text: str) -> str:
    """The one-way-in replacement: `finditer`'s matches joined with their values."""
    parts: list[str] = []
    position = 0
    for start, end, key in search.finditer(text):
        parts += (text[position:start], values[key])
        position = end
    parts.append(text[position:])
    return "".join(parts)


def replace_by_lean_matches(
    automaton: ahocorasick_rs.AhoCorasick, values: list[str], text: str
) -> str:
    """One way in at its leanest: the engine's matches as ``(start, end, key_index)``,
    joined as `replace_by_finditer` joins them (no windows, no checks)."""
    matches = [(start, end, key) for key, start, end in automaton.find_matches_as_indexes(text)]
    parts: list[str] = []
    position = 0
    for start, end, key in matches:
        parts += (text[position:start], values[key])
        position = end
    parts.append(text[position:])
    return "".join(parts)


def best(function: object, number: int) -> float:
    assert callable(function)
    return min(timeit.repeat(function, number=number, repeat=5)) / number


def main() -> None:
    english = (CORPUS / "tinyshakespeare.txt").read_text(encoding="utf-8")
    japanese = (CORPUS / "wagahai_wa_neko_de_aru.txt").read_text(encoding="utf-8")
    words = [word for word in dict.fromkeys(english.lower().split()) if word.isalpha()]
    phrases = list(dict.fromkeys(japanese[i : i + 3] for i in range(0, len(japanese), 97)))
    print("| text | keys | options | subn | finditer + join | subn's speed |")
    print("|---|---|---|---|---|---|")
    for label, text, keys in (("English", english, words), ("Japanese", japanese, phrases)):
        for count in (100, 10_000):
            for options in ({}, {"ignore_case": True}, {"whole_words": True}):
                chosen = keys[:count]
                values = [key.upper() + "!" for key in chosen]
                search = Search(chosen, replacements=values, **options)  # type: ignore[arg-type]
                assert search.subn(text)[0] == replace_by_finditer(search, values, text)
                subn = best(lambda: search.subn(text), 3)
                joined = best(lambda: replace_by_finditer(search, values, text), 3)
                shown = ", ".join(options) or "default"
                print(
                    f"| {label} | {count:,} | {shown} | {subn * 1e3:.1f} ms "
                    f"| {joined * 1e3:.1f} ms | {joined / subn:.2f}x |"
                )
    keys, values = ["ストロベリー", "パイナップル"], ["strawberry", "pineapple"]
    sentence = "ストロベリーパフェとパイナップルジュース"
    search = Search(keys, replacements=values)
    subn = best(lambda: search.subn(sentence), 100_000)
    joined = best(lambda: replace_by_finditer(search, values, sentence), 100_000)
    automaton = ahocorasick_rs.AhoCorasick(keys, matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)
    assert replace_by_lean_matches(automaton, values, sentence) == search.subn(sentence)[0]
    lean = best(lambda: replace_by_lean_matches(automaton, values, sentence), 100_000)
    print(
        f"| the seed's sentence | 2 | default | {subn * 1e6:.2f} us "
        f"| {joined * 1e6:.2f} us | {joined / subn:.2f}x |"
    )
    print(
        f"| the seed's sentence, leanest one way in | 2 | default | {subn * 1e6:.2f} us "
        f"| {lean * 1e6:.2f} us | {lean / subn:.2f}x |"
    )


if __name__ == "__main__":
    for where in [CORPUS / "tinyshakespeare.txt", CORPUS / "wagahai_wa_neko_de_aru.txt"]:
        if not where.is_file():
            sys.exit(
                f"{Path(__file__).name}: no corpus at {where}: put ../shared/corpus/ beside"
                " the checkout or set DEVUTILS_CORPUS to its folder (README.md, Documentation)"
            )
    main()
