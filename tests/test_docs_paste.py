"""Every ``python`` block of docs/*.md pasted into the interactive interpreter, as a reader
would: line by line into `code.InteractiveConsole`, whose rules are the REPL's (a blank line
ends a compound statement, and a statement straight after an indented block is an error).

Each block starts in a fresh interpreter, so it carries its own imports, unless the line of
prose just before it says it continues an earlier one ("Continuing the block above"); a
block after ``<!-- skip: next -->`` is left out (it needs a GPU). Sybil (conftest.py) checks
the blocks' outputs; this checks that they paste.
"""

from __future__ import annotations

import code
import contextlib
import doctest
import io
import re
import sys
import traceback
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


class Console(code.InteractiveConsole):
    """An interactive interpreter that keeps its errors instead of printing them."""

    def __init__(self) -> None:
        super().__init__({"__name__": "__main__"})
        self.errors: list[str] = []

    def showsyntaxerror(self, filename: str | None = None, **kwargs: object) -> None:
        self.errors.append(f"SyntaxError: {sys.exc_info()[1]}")

    def showtraceback(self) -> None:
        kind, value = sys.exc_info()[:2]
        assert kind is not None
        self.errors.append("".join(traceback.format_exception_only(kind, value)).strip())


def pasted(block: str) -> list[tuple[list[str], bool]]:
    """What a reader pastes, statement by statement: its lines, and whether the page shows
    it raising (a ``>>>`` example whose output is a traceback). A plain block is one."""
    if not block.lstrip().startswith(">>>"):
        return [([*block.splitlines(), ""], False)]
    examples = doctest.DocTestParser().get_examples(block)
    return [([*e.source.splitlines(), ""], e.want.startswith("Traceback")) for e in examples]


def block_error(block: str, lines: list[str]) -> str:
    """The exception's name that *block* shows after the example of *lines*."""
    for example in doctest.DocTestParser().get_examples(block):
        if example.source.splitlines() == lines[:-1] and example.exc_msg is not None:
            return str(example.want.strip().splitlines()[-1].split(":")[0])
    return ""


def blocks(page: Path) -> list[tuple[int, str, bool]]:
    """The page's blocks: (line number, text, whether it continues the one before)."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip().splitlines()
        if before and before[-1].strip() == "<!-- skip: next -->":
            continue
        continues = bool(before) and "continu" in before[-1].lower()
        found.append((text[: match.start()].count("\n") + 1, match.group(1), continues))
    return found


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda page: page.name)
def test_every_block_pastes_into_the_interpreter(page: Path) -> None:
    console = Console()
    failures = []
    for line_number, block, continues in blocks(page):
        if "dask" in block and not _has("distributed"):
            continue  # the Dask recipes need the dask group (their Sybil test says so)
        if not continues:
            console = Console()
        for lines, raises in pasted(block):
            with (
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                for line in lines:
                    console.push(line)
            if raises:  # the page shows a traceback: the same kind of error, and only one
                expected = block_error(block, lines)
                if [error.split(":")[0] for error in console.errors] != [expected]:
                    failures.append(f"{page.name}:{line_number}: {console.errors} for {expected}")
            else:
                failures += [f"{page.name}:{line_number}: {error}" for error in console.errors]
            console.errors.clear()
    assert failures == []


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None
