"""How error messages show a value a caller gave: its type and a repr cut to fit a line.

Shared by the modules whose errors name a value of any type (`devutils.text`,
`devutils.textstream`, `devutils.textcase`); it imports nothing, so any module may use it.
"""

__all__ = ["describe"]

_SHORTEST = 4
"""The shortest *limit*: one character of the repr and ``...``."""


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
    if isinstance(limit, bool) or not isinstance(limit, int):
        msg = f"limit must be an int, got {type(limit).__name__} {limit!r}"
        raise TypeError(msg)
    if limit < _SHORTEST:
        msg = f"limit must be at least {_SHORTEST}, got {limit}"
        raise ValueError(msg)
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{type(value).__name__} {text}"
