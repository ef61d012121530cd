"""Weighted sums and means of floats: exact and rounded once
(:func:`weighted_sum`, :func:`weighted_mean`: composite scores,
distributions), or in floats as rewardkit and published grades have them
unless the floats lose the result (:func:`float_sum`, :func:`float_mean`:
the fold's weighing schemes). docs/scoring.md, "Differences from rewardkit's
arithmetic"."""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Sequence

__all__ = ["float_mean", "float_sum", "weighted_mean", "weighted_sum"]


def _exact_sum(pairs: Iterable[tuple[float, float]]) -> tuple[int, int]:
    """``sum(v * w)`` exactly, as ``(n, k)`` standing for ``n * 2**k``: a
    finite float is an integer times a power of two (``as_integer_ratio``),
    so products and sums of them are integers once shifted to the smallest
    exponent. Finite values only."""
    terms: list[tuple[int, int]] = []
    for value, weight in pairs:
        value_numerator, value_denominator = value.as_integer_ratio()
        weight_numerator, weight_denominator = weight.as_integer_ratio()
        exponent = 2 - value_denominator.bit_length() - weight_denominator.bit_length()
        terms.append((value_numerator * weight_numerator, exponent))
    if not terms:
        return 0, 0
    lowest = min(exponent for _, exponent in terms)
    return sum(number << (exponent - lowest) for number, exponent in terms), lowest


def _ratio(numerator: int, denominator: int, exponent: int) -> float:
    """``numerator / denominator * 2**exponent`` rounded once (Python's
    division of integers is correctly rounded); ``OverflowError`` beyond
    the float range."""
    if exponent >= 0:
        return (numerator << exponent) / denominator
    return numerator / (denominator << -exponent)


def weighted_sum(pairs: Iterable[tuple[float, float]]) -> float:
    """``sum(v * w)`` over ``(value, weight)`` pairs (finite, any sign), the
    exact sum rounded once: no product underflows (two weights of
    ``5e-324`` keep their halves) and no partial sum overflows
    (``1e308 + 1e308 - 1e308`` is ``1e308``). A sum beyond the float range
    is ``inf`` or ``-inf``, never an exception: the caller refuses it. 0.0
    when there is no pair."""
    total, exponent = _exact_sum(pairs)
    try:
        return _ratio(total, 1, exponent)
    except OverflowError:
        return math.inf if total > 0 else -math.inf


def weighted_mean(pairs: Sequence[tuple[float, float]]) -> float:
    """``sum(v * w) / sum(w)`` over ``(value, weight)`` pairs (finite values,
    finite weights >= 0), the exact mean rounded once, so it lies within
    the values whatever the weights: two weights of ``5e-324`` over 0.5 and
    1.0 give 0.75 (not the 0.5 of their underflowing float products), two
    of ``1e308`` give 0.75 too (not ``inf / inf``). ``ValueError`` when no
    weight is positive."""
    total, exponent = _exact_sum(pairs)
    weights, weight_exponent = _exact_sum((1.0, weight) for _, weight in pairs)
    if weights <= 0:
        raise ValueError("a weighted mean needs a positive weight")
    return _ratio(total, weights, exponent - weight_exponent)


def _float_products(pairs: Sequence[tuple[float, float]]) -> list[float] | None:
    """Each ``v * w`` in floats, or ``None`` when one lost more than its
    last bit: it overflowed, or fell below the normal range (``0.5 *
    5e-324`` is 0)."""
    products = []
    for value, weight in pairs:
        product = value * weight
        if math.isinf(product) or (
            abs(product) < sys.float_info.min and value != 0 and weight != 0
        ):
            return None
        products.append(product)
    return products


def float_sum(pairs: Sequence[tuple[float, float]]) -> float:
    """``math.fsum`` of the float products ``v * w``, as rewardkit sums them
    (exactly rounded, where rewardkit adds left to right) and as grades
    published by earlier versions hold them, bit for bit; :func:`weighted_sum`
    when a product leaves the normal range or the sum overflows, where the
    floats lose it."""
    products = _float_products(pairs)
    if products is not None:
        try:
            return math.fsum(products)
        except OverflowError:
            pass
    return weighted_sum(pairs)


def float_mean(pairs: Sequence[tuple[float, float]]) -> float:
    """``fsum(v * w) / fsum(w)`` in floats, as :func:`float_sum` (a result
    may lie outside the values by its last bit: ``0.37`` weighted 3 and 0.1
    gives ``0.36999999999999994``, which published grades hold);
    :func:`weighted_mean` when a product leaves the normal range or a sum
    overflows. Weights as :func:`weighted_mean` takes them."""
    products = _float_products(pairs)
    if products is not None:
        try:
            total = math.fsum(weight for _, weight in pairs)
            if 0 < total < math.inf:
                return math.fsum(products) / total
        except OverflowError:
            pass
    return weighted_mean(pairs)
