"""The bounds that the library and the command line share.

Batch sizes, counts and steps end up in frameworks and tools that store them as 64-bit
signed integers, so `devutils.batch` refuses a larger argument or result and a
``devutils`` flag a larger number, both at `MAX_INT`. A timeout or a delay is at most
`MAX_SECONDS`, a day (`check_seconds`). It is a module of its own, with no imports, so
that ``devutils.cli`` takes the bounds from the library at no start-up cost.

Examples:
    >>> from devutils.limits import MAX_INT
    >>> MAX_INT == 2**63 - 1
    True
"""

from devutils.messages import describe, shown

__all__ = ["MAX_INT", "MAX_SECONDS", "check_seconds"]

MAX_INT = 2**63 - 1
"""The largest integer argument, result or flag: int64's, what frameworks store sizes in."""

MAX_SECONDS = 86_400
"""The longest timeout or delay taken: a day (past about 2 * 10**6 s, waits on a process
overflow)."""


def check_seconds(name: str, value: object) -> float:
    """Return *value* as a float if it is a number of seconds above 0 and at most
    `MAX_SECONDS`; else a TypeError (not a number) or ValueError naming *name*.

    Examples:
        >>> check_seconds("timeout", 5)
        5.0
        >>> check_seconds("timeout", 0)
        Traceback (most recent call last):
        ...
        ValueError: timeout must be a positive number of seconds up to 86400, got 0
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        msg = f"{name} must be a number of seconds, got {describe(value, 40)}"
        raise TypeError(msg)
    if not 0 < value <= MAX_SECONDS:
        msg = f"{name} must be a positive number of seconds up to {MAX_SECONDS}, got "
        raise ValueError(msg + shown(value, 40))
    return float(value)
