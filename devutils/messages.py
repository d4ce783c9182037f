"""How error messages show a value a caller gave: its type and a repr cut to fit a line.

Shared by the modules whose errors name a value of any type (`devutils.text`,
`devutils.textstream`, `devutils.textcase`); it imports nothing, so any module may use it.
"""

__all__ = ["describe", "shown"]

_SHORTEST = 4
"""The shortest *limit*: one character of the repr and ``...``."""
_LONGEST_INT_BITS = 14_000
"""Ints up to this many bits (about 4,200 digits) are shown as their repr; Python
refuses the repr of one past 4,300 digits."""


def describe(value: object, limit: int = 80) -> str:
    """Return ``"<type name> <repr>"``, the repr cut to *limit* characters with ``...``.

    Raises:
        TypeError: If *limit* is not an int.
        ValueError: If *limit* is below 4 (room for one character and ``...``).

    Examples:
        >>> describe(b"key")
        "bytes b'key'"
        >>> describe("x" * 100, limit=10)
        "str 'xxxxxx..."
        >>> describe(1, limit=3)
        Traceback (most recent call last):
        ...
        ValueError: limit must be at least 4, got 3
    """
    return f"{type(value).__name__} {shown(value, limit)}"


def shown(value: object, limit: int = 80) -> str:
    """Return *value*'s repr cut to *limit* characters with ``...`` (`describe` without
    the type): an int too long for a repr as its size, a repr that fails as that.

    Raises:
        TypeError: If *limit* is not an int.
        ValueError: If *limit* is below 4.

    Examples:
        >>> shown(-12), shown(10**5000)
        ('-12', '<an int of about 5001 digits>')
    """
    if isinstance(limit, bool) or not isinstance(limit, int):
        msg = f"limit must be an int, got {type(limit).__name__} {limit!r}"
        raise TypeError(msg)
    if limit < _SHORTEST:
        msg = f"limit must be at least {_SHORTEST}, got {limit}"
        raise ValueError(msg)
    text = _repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _repr(value: object) -> str:
    """*value*'s repr; for an int too long for one (past Python's 4,300 digits), its
    size; for a repr that fails, that it failed (a message is no place to raise)."""
    if isinstance(value, int) and value.bit_length() > _LONGEST_INT_BITS:
        digits = int(value.bit_length() * 0.30103) + 1  # log10(2): within a digit
        return f"{'-' if value < 0 else ''}<an int of about {digits} digits>"
    try:
        return repr(value)
    except Exception as exc:  # whatever it raised: a message is no place to raise
        return f"<repr failed: {type(exc).__name__}>"
