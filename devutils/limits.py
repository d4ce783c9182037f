"""The integer bound that the library and the command line share.

Batch sizes, counts and steps end up in frameworks and tools that store them as 64-bit
signed integers, so `devutils.batch` refuses a larger argument or result and a
``devutils`` flag a larger number, both at `MAX_INT`. It is a module of its own, with no
imports, so that ``devutils.cli`` takes the bound from the library at no start-up cost.

Examples:
    >>> from devutils.limits import MAX_INT
    >>> MAX_INT == 2**63 - 1
    True
"""

__all__ = ["MAX_INT"]

MAX_INT = 2**63 - 1
"""The largest integer argument, result or flag: int64's, what frameworks store sizes in."""
