"""Run every ``python`` block of ``docs/*.md`` as a test (Sybil).

``>>>`` examples are compared with their output; plain blocks must run cleanly.
``<!-- clear-namespace -->`` starts a fresh namespace (each section copies alone) and
``<!-- skip: next -->`` skips the next block (for blocks that need a GPU).
"""

import doctest

from sybil import Sybil
from sybil.parsers.markdown import ClearNamespaceParser, PythonCodeBlockParser, SkipParser

pytest_collect_file = Sybil(
    parsers=[
        PythonCodeBlockParser(doctest_optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE),
        ClearNamespaceParser(),
        SkipParser(),
    ],
    patterns=["*.md"],
    path="docs",
).pytest()
