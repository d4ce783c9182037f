"""Every ``python`` block of docs/*.md pasted into the interactive interpreter, as a reader
would: line by line into `code.InteractiveConsole`, whose rules are the REPL's (a blank line
ends a compound statement, and a statement straight after an indented block is an error).

Each block starts in a fresh interpreter, so it carries its own imports, unless the line of
prose just before it says it continues an earlier one ("Continuing the block above"; an
HTML comment is not prose, a reader does not see it); a block after ``<!-- skip: next -->``
(it needs a GPU) is pasted but not run, so it still has to parse as the REPL parses.
Sybil (conftest.py) checks the blocks' outputs; this checks that they paste.
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


class ParsingConsole(Console):
    """An interactive interpreter that parses what is pasted and runs none of it."""

    def runcode(self, code: object) -> None:
        pass


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


def blocks(text: str) -> list[tuple[int, str, bool, bool]]:
    """A page's blocks: (line number, text, whether it continues the one before, whether
    it runs here)."""
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip().splitlines()
        last = before[-1].strip() if before else ""
        runs = last != "<!-- skip: next -->"
        continues = "continu" in last.lower() and not last.startswith("<!--")
        found.append((text[: match.start()].count("\n") + 1, match.group(1), continues, runs))
    return found


def paste_failures(name: str, text: str) -> list[str]:
    """What goes wrong when each block of the page *text* is pasted into a REPL."""
    console = Console()
    failures = []
    for line_number, block, continues, runs in blocks(text):
        if "dask" in block and not _has("distributed"):
            continue  # the Dask recipes need the dask group (their Sybil test says so)
        if not runs:
            console = ParsingConsole()
        elif not continues or isinstance(console, ParsingConsole):
            console = Console()
        for lines, raises in pasted(block):
            with (
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                for line in lines:
                    console.push(line)
            if raises and runs:  # the page shows a traceback: that error, and only one
                expected = block_error(block, lines)
                if [error.split(":")[0] for error in console.errors] != [expected]:
                    failures.append(f"{name}:{line_number}: {console.errors} for {expected}")
            else:
                failures += [f"{name}:{line_number}: {error}" for error in console.errors]
            console.errors.clear()
    return failures


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda page: page.name)
def test_every_block_pastes_into_the_interpreter(page: Path) -> None:
    assert paste_failures(page.name, page.read_text(encoding="utf-8")) == []


SKIPPED_FOR_LOOP = """<!-- skip: next -->
```python
for gpu in range(2):
    print(gpu)
print("done")
```
"""

HIDDEN_CONTINUATION = """```python
x = 1
```

<!-- continues the block above -->
```python
print(x)
```
"""


def test_a_block_that_needs_a_gpu_is_still_pasted() -> None:
    (failure,) = paste_failures("page.md", SKIPPED_FOR_LOOP)
    assert "SyntaxError" in failure


def test_a_continuation_said_in_a_comment_is_not_seen() -> None:
    (failure,) = paste_failures("page.md", HIDDEN_CONTINUATION)
    assert "NameError: name 'x' is not defined" in failure
    visible = HIDDEN_CONTINUATION.replace("<!-- continues the block above -->", "Continuing:")
    assert paste_failures("page.md", visible) == []


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None
