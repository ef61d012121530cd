"""Weighted sums and means: the exact ones rounded once, whatever the
magnitudes (checked against :class:`fractions.Fraction` arithmetic), and
the float ones the fold keeps, bit for bit where floats hold them."""

from __future__ import annotations

import math
import sys
from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from truereward.util.means import float_mean, float_sum, weighted_mean, weighted_sum

LARGEST = sys.float_info.max
TINY = 5e-324  # the smallest subnormal

finite = st.floats(allow_nan=False, allow_infinity=False)
non_negative = st.floats(min_value=0.0, allow_nan=False, allow_infinity=False)
#: Case values and weights whose float products and sums stay in the normal range.
normal_value = st.just(0.0) | st.floats(1e-100, 1.0)
normal_weight = st.floats(1e-100, 1e100)


def exact_sum(pairs: list[tuple[float, float]]) -> Fraction:
    return sum((Fraction(value) * Fraction(weight) for value, weight in pairs), Fraction(0))


def rounded(exact: Fraction) -> float:
    """``exact`` rounded to the nearest float, ``inf``/``-inf`` past the range."""
    try:
        return float(exact)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


@given(st.lists(st.tuples(finite, finite), max_size=8))
@example([(1.0, 1e308), (1.0, 1e308), (1.0, -1e308)])  # a partial sum past the range
@example([(0.5, TINY), (0.5, TINY)])  # products below the smallest subnormal
def test_the_weighted_sum_is_the_exact_sum_rounded_once(pairs: list[tuple[float, float]]) -> None:
    assert weighted_sum(pairs) == rounded(exact_sum(pairs))


@given(st.lists(st.tuples(finite, non_negative), min_size=1, max_size=8))
@example([(0.5, TINY), (1.0, TINY)])
@example([(0.5, 1e308), (1.0, 1e308)])
@example([(LARGEST, LARGEST), (-LARGEST, LARGEST), (LARGEST, 1.0)])
@example([(1e308, TINY), (1e-300, 1.0)])  # a tiny weight on a huge value still counts
def test_the_weighted_mean_is_the_exact_mean_rounded_once(
    pairs: list[tuple[float, float]],
) -> None:
    weights = sum((Fraction(weight) for _, weight in pairs), Fraction(0))
    if weights == 0:
        with pytest.raises(ValueError, match="positive weight"):
            weighted_mean(pairs)
        return
    mean = weighted_mean(pairs)
    assert mean == float(exact_sum(pairs) / weights)
    assert min(value for value, _ in pairs) <= mean <= max(value for value, _ in pairs)


def test_worked_values() -> None:
    # Float products would give 0.5 (0.5 * 5e-324 underflows to 0) and
    # nan (inf / inf); the exact ones give the mean.
    assert weighted_mean([(0.5, TINY), (1.0, TINY)]) == 0.75
    assert weighted_mean([(0.5, 1e308), (1.0, 1e308)]) == 0.75
    assert weighted_mean([(0.0, 1e-320), (1.0, 3e-320)]) == 0.75
    assert weighted_mean([(LARGEST, LARGEST), (LARGEST, LARGEST)]) == LARGEST
    assert weighted_mean([(0.1, 1.0), (0.2, 1.0), (0.3, 1.0)]) == 0.2
    assert weighted_sum([(1.0, 1e308), (1.0, 1e308)]) == math.inf
    assert weighted_sum([(1.0, -1e308), (1.0, -1e308)]) == -math.inf
    assert weighted_sum([]) == 0.0


@given(st.lists(st.tuples(normal_value, normal_weight), min_size=1, max_size=8))
@example([(0.37, 3.0), (0.37, 0.1)])  # 0.36999999999999994, outside the values
def test_where_floats_hold_them_the_float_forms_are_the_float_formulas(
    pairs: list[tuple[float, float]],
) -> None:
    # The bits grades published before exact sums hold: rewardkit's formulas,
    # with exactly rounded sums.
    products = [value * weight for value, weight in pairs]
    assert float_sum(pairs) == math.fsum(products)
    assert float_mean(pairs) == math.fsum(products) / math.fsum(w for _, w in pairs)


def within(found: float, exact: float, ulps: int) -> bool:
    return abs(found - exact) <= ulps * math.ulp(max(abs(exact), sys.float_info.min))


# Where a product leaves the normal range or a sum passes it, the float forms
# are the exact ones; so they are always within a few last places of them
# (a place for each product's rounding, one for the sum's, one for the
# division's).


@given(st.lists(st.tuples(finite, finite), min_size=1, max_size=8))
@example([(1.0, 1e308), (1.0, 1e308), (1.0, -1e308)])
@example([(0.5, TINY), (0.5, TINY)])
@example([(1.0, 1e308), (1.0, 1e308)])
def test_the_float_sum_is_the_exact_one_to_its_last_places(
    pairs: list[tuple[float, float]],
) -> None:
    exact = rounded(exact_sum(pairs))
    largest = rounded(max(abs(Fraction(v) * Fraction(w)) for v, w in pairs))
    found = float_sum(pairs)
    if math.isinf(largest) or math.isinf(exact):  # past the range: the exact form
        assert found == exact
    else:  # a place of the largest term for each rounding, not of the sum
        assert abs(found - exact) <= (len(pairs) + 1) * math.ulp(max(largest, sys.float_info.min))


@given(st.lists(st.tuples(non_negative, non_negative), min_size=1, max_size=8))
@example([(0.5, TINY), (1.0, TINY)])
@example([(0.5, 1e308), (1.0, 1e308)])
@example([(1e308, TINY), (1e-300, 1.0)])
def test_the_float_mean_is_the_exact_one_to_its_last_places(
    pairs: list[tuple[float, float]],
) -> None:
    weights = sum((Fraction(weight) for _, weight in pairs), Fraction(0))
    if weights == 0:
        with pytest.raises(ValueError, match="positive weight"):
            float_mean(pairs)
        return
    assert within(float_mean(pairs), float(exact_sum(pairs) / weights), len(pairs) + 2)
