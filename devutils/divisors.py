"""Divisors of an integer, and the multiples nearest a number: what batch planning needs.

`divisors` factors with trial division and Pollard's rho (Miller-Rabin deciding primes,
exactly below 3.3 * 10**24), so a number near 2**63 takes milliseconds and the work
grows with its count of divisors, never with its size. `nearest_multiple` finds the
nearest number, below or above, that is a multiple of some size in a range.

Every function takes ints only (TypeError otherwise, bool included) and positive ones
(ValueError naming the argument otherwise); a number at or beyond `LIMIT` is refused
rather than factored on a primality test that is no longer exact there.
"""

from __future__ import annotations

import itertools
import math
from typing import Final, Literal

from devutils.messages import shown

__all__ = ["LIMIT", "divisors", "has_divisor_in", "nearest_multiple", "prime_factors"]

LIMIT: Final = 3_317_044_064_679_887_385_961_981
"""The numbers factored are below this: up to here Miller-Rabin with the bases 2 to 41
decides primality exactly (2 to 37 only up to 3.18 * 10**23), and factoring the hardest
number below it (two primes near 1.8 * 10**12) takes a few seconds."""
_WITNESSES: Final = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
"""Miller-Rabin bases that decide every n below 3.3 * 10**24."""
_TRIAL: Final = 1000
"""Trial division up to here before Pollard's rho."""
_SCAN: Final = 64
"""Numbers `nearest_multiple` tries one by one, at least, before it loops over sizes or
counts."""
_TURNS_PER_TRY: Final = 25_000
"""Turns of `nearest_multiple`'s loop over sizes or counts that it weighs against trying
one more number (factoring it), with a margin: the tries stop well before they have cost
what the loop would (``bench/bench_batch.py`` times both)."""


def _check_int_below_limit(name: str, value: object, minimum: int = 1) -> int:
    """*value* if it is an int from *minimum* up to below `LIMIT`."""
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"{name} must be an int, got {type(value).__name__} {value!r}"
        raise TypeError(msg)
    if value < minimum:
        msg = f"{name} must be >= {minimum}, got {shown(value)}"
        raise ValueError(msg)
    if value >= LIMIT:
        msg = f"{name} must be below 3.3 * 10**24 (devutils.divisors.LIMIT), got {shown(value)}"
        raise ValueError(msg)
    return value


def _check_range(low: object, high: object) -> tuple[int, int]:
    low, high = _check_int_below_limit("low", low), _check_int_below_limit("high", high)
    if low > high:
        msg = f"low must be <= high, got low={low}, high={high}"
        raise ValueError(msg)
    return low, high


def _is_prime(n: int) -> bool:
    if n < 2:  # noqa: PLR2004 - the smallest prime
        return False
    for p in _WITNESSES:
        if n % p == 0:
            return n == p
    odd, twos = n - 1, 0
    while odd % 2 == 0:
        odd, twos = odd // 2, twos + 1
    for base in _WITNESSES:
        x = pow(base, odd, n)
        if x in (1, n - 1):
            continue
        for _ in range(twos - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _pollard_factor(n: int) -> int:
    """A factor of the odd composite *n* other than 1 and *n* (Pollard's rho)."""
    for c in itertools.count(1):
        slow = fast = 2
        found = 1
        while found == 1:
            slow = (slow * slow + c) % n
            fast = (fast * fast + c) % n
            fast = (fast * fast + c) % n
            found = math.gcd(abs(slow - fast), n)
        if found != n:
            return found
    raise AssertionError  # pragma: no cover - count() never ends


def prime_factors(n: int) -> dict[int, int]:
    """Return the prime factorization of *n* >= 1 as prime -> exponent.

    Raises:
        TypeError: If *n* is not an int.
        ValueError: If *n* < 1 or *n* >= `LIMIT`.

    Examples:
        >>> prime_factors(360), prime_factors(1), prime_factors(2**61 - 1)
        ({2: 3, 3: 2, 5: 1}, {}, {2305843009213693951: 1})
        >>> prime_factors(0)
        Traceback (most recent call last):
        ...
        ValueError: n must be >= 1, got 0
    """
    return _prime_factors(_check_int_below_limit("n", n))


def _prime_factors(n: int) -> dict[int, int]:
    factors: dict[int, int] = {}
    for p in range(2, _TRIAL):
        while n % p == 0:
            factors[p] = factors.get(p, 0) + 1
            n //= p
    pending = [n] if n > 1 else []
    while pending:
        m = pending.pop()
        if _is_prime(m):
            factors[m] = factors.get(m, 0) + 1
        else:
            part = _pollard_factor(m)
            pending += [part, m // part]
    return dict(sorted(factors.items()))


def divisors(n: int) -> list[int]:
    """Return every divisor of *n* >= 1, in increasing order.

    Raises:
        TypeError: If *n* is not an int.
        ValueError: If *n* < 1 or *n* >= `LIMIT`.

    Examples:
        >>> divisors(12), divisors(97)
        ([1, 2, 3, 4, 6, 12], [1, 97])
    """
    return _divisors(_check_int_below_limit("n", n))


def _divisors(n: int) -> list[int]:
    found = [1]
    for prime, exponent in _prime_factors(n).items():
        found = [d * prime**k for d in found for k in range(exponent + 1)]
    return sorted(found)


def has_divisor_in(n: int, low: int, high: int) -> bool:
    """Whether *n* has a divisor between *low* and *high* (both included).

    Raises:
        TypeError: If an argument is not an int.
        ValueError: If one is < 1 or >= `LIMIT`, or *low* > *high*.

    Examples:
        >>> has_divisor_in(91, 2, 6), has_divisor_in(91, 2, 7)
        (False, True)
    """
    return _has_divisor_in(_check_int_below_limit("n", n), *_check_range(low, high))


def _has_divisor_in(n: int, low: int, high: int) -> bool:
    if low <= n <= high or low == 1:
        return True
    return any(low <= d <= high for d in _divisors(n))


def nearest_multiple(x: int, low: int, high: int, direction: Literal["down", "up"]) -> int | None:
    """The largest number <= *x* (``"down"``) or smallest >= *x* (``"up"``) that is a
    multiple ``k * d`` (k >= 1) of a size *d* in ``low..high``; None if there is none.

    It tries the numbers next to *x* first (most have such a divisor; the more sizes and
    counts there are, the more it tries), then loops over the sizes or over the counts
    *k*, whichever are fewer.

    Raises:
        TypeError: If *x*, *low* or *high* is not an int.
        ValueError: If *x* < 0, *low* < 1, *low* > *high*, one is >= `LIMIT`, or
            *direction* is neither ``"down"`` nor ``"up"``.

    Examples:
        >>> nearest_multiple(97, 2, 8, "down"), nearest_multiple(97, 2, 8, "up")
        (96, 98)
        >>> nearest_multiple(1, 2, 8, "down") is None
        True
    """
    x = _check_int_below_limit("x", x, minimum=0)
    low, high = _check_range(low, high)
    if not isinstance(direction, str) or direction not in ("down", "up"):
        msg = f"direction must be 'down' or 'up', got {shown(direction)}"
        raise (ValueError if isinstance(direction, str) else TypeError)(msg)
    if direction == "down" and x < low:
        return None
    if x < low:  # up: low itself, one of the sizes
        return low
    if x <= high:
        return x
    if direction == "down":  # k sizes of min(high, x // k): k's largest multiple under x
        counts = range(max(1, x // high), x // low + 1)
    else:  # k sizes of max(low, ceil(x / k)); past ceil(x / low), k x low only grows
        counts = range(-(-x // high), -(-x // low) + 1)
    sizes = range(low, high + 1)
    step = -1 if direction == "down" else 1
    tries = max(_SCAN, min(_length(sizes), _length(counts)) // _TURNS_PER_TRY)
    for candidate in range(x, x + step * tries, step):
        if candidate >= low and _has_divisor_in(candidate, low, high):
            return candidate
    return _nearest_by_loop(x, sizes, counts, direction)


def _length(numbers: range) -> int:
    """How many numbers a range of step 1 holds (``len`` stops at 2**63 - 1)."""
    return max(0, numbers.stop - numbers.start)


def _nearest_by_loop(x: int, sizes: range, counts: range, direction: str) -> int:
    """`nearest_multiple` by looping over the sizes or the counts, whichever are fewer."""
    low, high = sizes[0], sizes[-1]
    by_sizes = _length(sizes) <= _length(counts)
    if direction == "down":
        if by_sizes:
            return max(x // d * d for d in sizes)
        return max(k * min(high, x // k) for k in counts)
    if by_sizes:
        return min(-(-x // d) * d for d in sizes)
    return min(k * max(low, -(-x // k)) for k in counts)
