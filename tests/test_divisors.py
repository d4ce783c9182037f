"""Tests for devutils.divisors: brute-force properties, large numbers, every documented error."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import devutils.divisors
from devutils.divisors import LIMIT, divisors, has_divisor_in, nearest_multiple, prime_factors

# Primes whose products stand for the hard cases: Pollard's rho on two large factors.
_LARGE_PRIMES = (2**31 - 1, 10**9 + 7, 10**9 + 9, 2**61 - 1, 1_821_275_395_019)


def _is_prime_slowly(n: int) -> bool:
    return n >= 2 and all(n % d for d in range(2, math.isqrt(n) + 1))


def _achievable(m: int, low: int, high: int) -> bool:
    """m = k * d for some k >= 1 and size d in low..high, by brute force."""
    return any(m % d == 0 and m >= d for d in range(low, high + 1))


@given(st.integers(1, 20_000))
def test_divisors_are_exactly_the_numbers_that_divide(n: int) -> None:
    assert divisors(n) == [d for d in range(1, n + 1) if n % d == 0]


@given(st.integers(1, 10**6))
def test_prime_factors_multiply_back_from_primes(n: int) -> None:
    factors = prime_factors(n)
    assert math.prod(p**e for p, e in factors.items()) == n
    assert all(_is_prime_slowly(p) and e >= 1 for p, e in factors.items())
    assert list(factors) == sorted(factors)


@given(st.lists(st.sampled_from((*_LARGE_PRIMES, 2, 3, 5, 997, 1009)), min_size=1, max_size=3))
def test_large_products_factor_into_their_primes(primes: list[int]) -> None:
    n = math.prod(primes)
    if n >= LIMIT:
        with pytest.raises(ValueError, match="n must be below"):
            prime_factors(n)
        return
    expected: dict[int, int] = {}
    for p in primes:
        expected[p] = expected.get(p, 0) + 1
    assert prime_factors(n) == dict(sorted(expected.items()))
    assert len(divisors(n)) == math.prod(e + 1 for e in expected.values())


def test_the_hardest_numbers_below_the_limit_and_the_limit() -> None:
    # Two primes near the square root of LIMIT: the longest Pollard's rho here.
    p, q = 1_821_275_395_019, 1_821_275_395_031
    assert p * q < LIMIT
    assert prime_factors(p * q) == {p: 1, q: 1}
    assert prime_factors(LIMIT - 1) == {2: 2, 3: 4, 5: 1, 127: 1, 18778597: 1, 858557454841: 1}
    with pytest.raises(ValueError, match=r"below 3\.3 \* 10\*\*24"):
        divisors(LIMIT)


@given(st.integers(1, 2000), st.integers(1, 60), st.integers(0, 60))
def test_has_divisor_in_matches_brute_force(n: int, low: int, width: int) -> None:
    high = low + width
    assert has_divisor_in(n, low, high) == any(n % d == 0 for d in range(low, high + 1))


@given(st.integers(0, 3000), st.integers(1, 40), st.integers(0, 40))
def test_nearest_multiple_matches_brute_force(x: int, low: int, width: int) -> None:
    high = low + width
    below = [m for m in range(x, 0, -1) if _achievable(m, low, high)]
    above = next(m for m in range(max(x, 1), x + high + 2) if _achievable(m, low, high))
    assert nearest_multiple(x, low, high, "down") == (below[0] if below else None)
    assert nearest_multiple(x, low, high, "up") == above


@given(
    st.integers(0, 3000),
    st.integers(1, 40),
    st.integers(0, 40),
    st.sampled_from([(0, 10**9), (1, 1), (1, 3)]),
)
def test_nearest_multiple_gives_the_same_answer_however_far_it_tries(
    x: int, low: int, width: int, scan_and_turns: tuple[int, int]
) -> None:
    # No tries (the loop alone), as many tries as the loop has turns, and a third of that.
    high = low + width
    below = next((m for m in range(x, 0, -1) if _achievable(m, low, high)), None)
    above = next(m for m in range(max(x, 1), x + high + 2) if _achievable(m, low, high))
    expected = [below, above]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(devutils.divisors, "_SCAN", scan_and_turns[0])
        patch.setattr(devutils.divisors, "_TURNS_PER_TRY", scan_and_turns[1])
        assert [nearest_multiple(x, low, high, way) for way in ("down", "up")] == expected


@given(st.integers(2**63, LIMIT - 1), st.integers(1, 30), st.integers(0, 30))
def test_nearest_multiple_of_an_x_past_2_to_the_63_matches_the_sizes_loop(
    x: int, low: int, width: int
) -> None:
    # More counts k than a range's len() takes (it stops at 2**63 - 1): the few sizes.
    high = low + width
    sizes = range(low, high + 1)
    assert nearest_multiple(x, low, high, "down") == max(x // d * d for d in sizes)
    assert nearest_multiple(x, low, high, "up") == min(-(-x // d) * d for d in sizes)


def test_a_target_far_from_an_achievable_one_among_many_sizes() -> None:
    # 84 below and 28 above: past the first 64 tries, it looped over 2 * 10**8 sizes.
    x, low, high = 2_000_000_000_000_254_259, 10**9, 12 * 10**8
    assert nearest_multiple(x, low, high, "down") == 2_000_000_000_000_254_176
    assert nearest_multiple(x + 1, low, high, "up") == 2_000_000_000_000_254_288
    assert has_divisor_in(2_000_000_000_000_254_176, low, high)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: divisors(0), ValueError, "n must be >= 1, got 0"),
        (lambda: prime_factors(-12), ValueError, "n must be >= 1, got -12"),
        (lambda: divisors(2.5), TypeError, "n must be an int, got float 2.5"),  # type: ignore[arg-type]
        (lambda: prime_factors(True), TypeError, "n must be an int, got bool True"),
        (lambda: divisors("12"), TypeError, "n must be an int, got str '12'"),  # type: ignore[arg-type]
        (lambda: has_divisor_in(0, 1, 2), ValueError, "n must be >= 1, got 0"),
        (lambda: has_divisor_in(12, 0, 2), ValueError, "low must be >= 1, got 0"),
        (lambda: has_divisor_in(12, 3, 2), ValueError, "low must be <= high, got low=3, high=2"),
        (lambda: nearest_multiple(-1, 1, 2, "up"), ValueError, "x must be >= 0, got -1"),
        (lambda: nearest_multiple(5.0, 1, 2, "up"), TypeError, "x must be an int, got float"),  # type: ignore[arg-type]
        (lambda: nearest_multiple(5, 2, 1, "up"), ValueError, "low must be <= high"),
        (lambda: nearest_multiple(5, 1, 2, "side"), ValueError, "direction must be 'down' or"),  # type: ignore[arg-type]
        (lambda: nearest_multiple(5, 1, LIMIT, "up"), ValueError, "high must be below"),
        (lambda: nearest_multiple(5, 1, 2, None), TypeError, "direction must be 'down' or"),  # type: ignore[arg-type]
        (lambda: nearest_multiple(5, 1, 2, ["up"]), TypeError, "direction must be 'down' or"),  # type: ignore[arg-type]
    ],
)
def test_bad_input_names_the_argument_and_the_value(
    call: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match="^" + re.escape(message)):
        call()


def test_the_strong_pseudoprime_to_the_bases_2_to_37_is_factored() -> None:
    # 318665857834031151167461 passes Miller-Rabin for every base 2..37 (the smallest
    # that does): it was called prime, below LIMIT, where 41 is a base too.
    n = 318665857834031151167461
    assert prime_factors(n) == {399165290221: 1, 798330580441: 1}
    assert has_divisor_in(n, 2, 10**12)


def test_an_int_too_long_for_a_repr_is_refused_by_its_size() -> None:
    with pytest.raises(ValueError, match=r"n must be below .* got <an int of about 5001 digits>"):
        divisors(10**5000)
