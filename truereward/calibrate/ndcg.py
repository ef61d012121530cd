"""Normalised discounted cumulative gain of a ranking."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence

from ..judging.numbers import finite_float, is_number
from .errors import CalibrationError

__all__ = ["DEFAULT_K", "ndcg"]

#: The default cutoff.
DEFAULT_K = 10


def _gain(grade: float, where: str) -> float:
    try:
        gain = float(2.0**grade) - 1.0
    except OverflowError:
        gain = math.inf
    if not math.isfinite(gain):
        raise CalibrationError(f"{where}: the gain 2**{grade:g} - 1 is not finite")
    return gain


def _dcg(gains: Sequence[float], what: str) -> float:
    total = 0.0
    for position, gain in enumerate(gains):
        total += gain / math.log2(position + 2)
        if not math.isfinite(total):
            raise CalibrationError(f"{what}: the cumulative gain is not finite")
    return total


def ndcg(
    order: Sequence[Hashable], grades: Mapping[Hashable, float], k: int = DEFAULT_K
) -> float | None:
    """NDCG@k of ``order`` (ids, best first) against relevance ``grades``.

    The gain of a grade ``g`` is ``2**g - 1`` and position ``i`` (zero-based)
    is discounted by ``log2(i + 2)``. DCG sums the first ``k`` ids of
    ``order``; an id without a grade has grade 0. The ideal DCG sums the
    ``k`` best grades over **every** graded id, including ids missing from
    ``order`` (so leaving a relevant id out costs). Returns DCG / ideal DCG,
    from 0 to 1, or ``None`` when the ideal gain is 0 (no graded id has a
    positive grade: nothing to rank).

    Raises CalibrationError for a non-finite or negative grade, a gain or
    cumulative gain that overflows, an id listed twice in ``order``, and a
    ``k`` that is not a positive integer.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise CalibrationError(f"k: a positive integer, got {k!r}")
    if not isinstance(grades, Mapping):
        raise CalibrationError(f"grades: a mapping of id to grade, got {type(grades).__name__}")
    gains: dict[Hashable, float] = {}
    for key, grade in grades.items():
        where = f"grades[{key!r}]"
        if not is_number(grade):
            raise CalibrationError(f"{where}: a number, got {grade!r}")
        number = finite_float(grade)
        if number is None or number < 0:
            raise CalibrationError(f"{where}: a finite grade >= 0, got {grade!r}")
        gains[key] = _gain(number, where)
    ranked = list(order)
    seen: set[Hashable] = set()
    for position, item in enumerate(ranked):
        if item in seen:
            raise CalibrationError(f"order[{position}]: {item!r} is listed twice")
        seen.add(item)
    ideal = _dcg(sorted(gains.values(), reverse=True)[:k], "grades")
    if ideal == 0.0:
        return None
    actual = _dcg([gains.get(item, 0.0) for item in ranked[:k]], "order")
    return actual / ideal
