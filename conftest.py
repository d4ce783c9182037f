"""Run every ``python`` block of ``docs/*.md`` as a test (Sybil).

``>>>`` examples are compared with their output; plain blocks must run cleanly.
``<!-- clear-namespace -->`` starts a fresh namespace (each section copies alone) and
``<!-- skip: next -->`` skips the next block (for blocks that need a GPU). Every namespace
is named ``__main__``, so that a block guarded by ``if __name__ == "__main__":`` (as process
pools and Dask clusters need in a script) runs as it would in the reader's script.
"""

import doctest

from sybil import Example, Sybil
from sybil.parsers.markdown import ClearNamespaceParser, PythonCodeBlockParser, SkipParser


class ClearNamespaceAsMain(ClearNamespaceParser):
    """``<!-- clear-namespace -->``, leaving the fresh namespace named ``__main__``."""

    @staticmethod
    def evaluate(example: Example) -> None:
        example.document.namespace.clear()
        example.document.namespace["__name__"] = "__main__"


def as_main(namespace: dict[str, object]) -> None:
    namespace["__name__"] = "__main__"


pytest_collect_file = Sybil(
    parsers=[
        PythonCodeBlockParser(doctest_optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE),
        ClearNamespaceAsMain(),
        SkipParser(),
    ],
    setup=as_main,
    patterns=["*.md"],
    path="docs",
).pytest()
