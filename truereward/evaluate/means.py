"""The weighted mean every part of the evaluation model uses: composite
scores (weights) and distributions (counts)."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["weighted_mean"]


def weighted_mean(pairs: Sequence[tuple[float, float]]) -> float:
    """``sum(w * v) / sum(w)`` over ``(value, weight)`` pairs (finite
    values, finite weights > 0), exactly summed (``math.fsum``). Weights and
    values are first rescaled by powers of two, so that the largest of each
    lies in [0.5, 1): a power-of-two scaling is exact, so the mean is the
    same, but neither tiny weights (two weights of ``5e-324`` over 0.5 and
    1.0 give 0.75, not the 0.5 their underflowing products would) nor huge
    weights or values (no product or sum overflows) lose it. Clamped to
    [min, max] of the values against rounding. ``ValueError`` when there is
    no pair."""
    if not pairs:
        raise ValueError("a weighted mean needs at least one value")
    _, weight_exponent = math.frexp(max(weight for _, weight in pairs))
    _, value_exponent = math.frexp(max(abs(value) for value, _ in pairs))
    scaled = [
        (math.ldexp(value, -value_exponent), math.ldexp(weight, -weight_exponent))
        for value, weight in pairs
    ]
    scaled_mean = math.fsum(value * weight for value, weight in scaled) / math.fsum(
        weight for _, weight in scaled
    )
    mean = math.ldexp(scaled_mean, value_exponent)
    low = min(value for value, _ in pairs)
    high = max(value for value, _ in pairs)
    return min(max(mean, low), high)
