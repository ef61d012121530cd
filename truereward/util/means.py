"""Weighted sums and means of floats computed exactly and rounded once:
the fold's weighing schemes, composite scores and distributions use these
(docs/scoring.md, "Differences from rewardkit's arithmetic")."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = ["weighted_mean", "weighted_sum"]


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
