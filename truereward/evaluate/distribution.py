"""Distribution: count, mean and nearest-rank percentiles of one numeric signal.

Percentiles are nearest-rank with no interpolation: over the ``n`` values in
ascending order, the ``q`` percentile is the value at (0-based) index
``ceil(q * n) - 1``, computed in exact integer arithmetic (``0.1 * 30`` is
not 3 in floating point). So ``p50`` of ``[0, 1]`` is ``0``, and ``p10``,
``p50``, ``p90`` of ``1..10`` are 1, 5, 9. Every reported statistic is one of
the values, except the mean.

The mean never overflows: the mean of two copies of the largest float is
that float. A distribution of no values is **absent**: ``count`` is 0 and
every statistic is ``None``, so it cannot be mistaken for values that are
all zero.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..util.means import weighted_mean

__all__ = ["Distribution", "DistributionDelta", "ValueCounts", "mean_of_counts", "nearest_rank"]

_FROZEN = ConfigDict(frozen=True, strict=True, extra="forbid", allow_inf_nan=False)


def _finite(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"a distribution takes numbers, got {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"a distribution takes finite numbers, got {number!r}")
    return number


def mean_of_counts(counts: Mapping[float, int]) -> float | None:
    """The mean of values given as ``{value: how many}``; ``None`` when there
    is none: the :func:`~truereward.util.means.weighted_mean` of the
    values weighted by their counts (exact, and neither overflowing nor
    underflowing, whatever the values and counts)."""
    pairs = [(value, float(count)) for value, count in sorted(counts.items()) if count]
    return weighted_mean(pairs) if pairs else None


def _rank_index(numerator: int, denominator: int, n: int) -> int:
    # ceil(q * n) - 1 with q = numerator / denominator, exactly.
    return max(-(-numerator * n // denominator) - 1, 0)


def nearest_rank(ordered: Sequence[float], numerator: int, denominator: int) -> float:
    """The ``numerator / denominator`` percentile of ``ordered`` (ascending,
    not empty), nearest rank as in the module docstring (a calibration's
    latency p95 is ``nearest_rank(ordered, 95, 100)``)."""
    return ordered[_rank_index(numerator, denominator, len(ordered))]


class Distribution(BaseModel):
    """Count, mean, minimum, p10, p50, p90 and maximum of some values.

    Build one with :meth:`of` (from values) or :meth:`from_counts` (from
    ``{value: how many}``, for streams with few distinct values). ``count``
    0 means absent: every other field is then ``None``.
    """

    model_config = _FROZEN

    count: Annotated[int, Field(ge=0)]
    mean: float | None = None
    minimum: float | None = None
    p10: float | None = None
    p50: float | None = None
    p90: float | None = None
    maximum: float | None = None

    @model_validator(mode="after")
    def _absent_or_ordered(self) -> Distribution:
        stats = (self.mean, self.minimum, self.p10, self.p50, self.p90, self.maximum)
        if self.count == 0:
            if any(value is not None for value in stats):
                raise ValueError("an absent distribution (count 0) has no statistics")
            return self
        if any(value is None for value in stats):
            raise ValueError("a distribution with values has every statistic")
        assert self.mean is not None and self.minimum is not None and self.maximum is not None
        assert self.p10 is not None and self.p50 is not None and self.p90 is not None
        if not self.minimum <= self.p10 <= self.p50 <= self.p90 <= self.maximum:
            raise ValueError("minimum <= p10 <= p50 <= p90 <= maximum must hold")
        if not self.minimum <= self.mean <= self.maximum:
            raise ValueError("the mean lies between the minimum and the maximum")
        return self

    @property
    def present(self) -> bool:
        """True when there is at least one value."""
        return self.count > 0

    @classmethod
    def of(cls, values: Iterable[float]) -> Distribution:
        """The distribution of ``values`` (ints or floats). ``ValueError`` on
        NaN or infinities, ``TypeError`` on a bool or a non-number."""
        counts = ValueCounts()
        for value in values:
            counts.add(value)
        return counts.distribution()

    @classmethod
    def from_counts(cls, counts: Mapping[float, int]) -> Distribution:
        """The distribution of values given as ``{value: how many}`` (values
        finite, counts non-negative ints; zero counts are ignored)."""
        tally: dict[float, int] = {}
        for value, count in counts.items():
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise ValueError(f"a count is a non-negative int, got {count!r}")
            if count:
                number = _finite(value)
                tally[number] = tally.get(number, 0) + count
        n = sum(tally.values())
        if n == 0:
            return cls(count=0)
        ordered = sorted(tally.items())
        # Values at or below ordered[i] are seen[i]; the value at a 0-based
        # rank is the first whose count of values at or below passes it.
        seen = list(itertools.accumulate(count for _, count in ordered))

        def percentile(numerator: int, denominator: int) -> float:
            return ordered[bisect.bisect_right(seen, _rank_index(numerator, denominator, n))][0]

        return cls(
            count=n,
            mean=mean_of_counts(tally),
            minimum=ordered[0][0],
            p10=percentile(1, 10),
            p50=percentile(1, 2),
            p90=percentile(9, 10),
            maximum=ordered[-1][0],
        )


class ValueCounts:
    """A streaming tally of values for a :class:`Distribution`: memory grows
    with the number of distinct values, not with the number of values (a
    reward stream of 0.0 and 1.0 takes two entries however long it is)."""

    __slots__ = ("_counts",)

    def __init__(self) -> None:
        self._counts: dict[float, int] = {}

    def add(self, value: float, count: int = 1) -> None:
        """Count ``value`` (finite; ``ValueError``/``TypeError`` otherwise)."""
        number = _finite(value)
        if number == 0.0:
            number = 0.0  # -0.0 and 0.0 are one value
        self._counts[number] = self._counts.get(number, 0) + count

    def __len__(self) -> int:
        return sum(self._counts.values())

    def counts(self) -> dict[float, int]:
        """How many times each distinct value was added (a copy)."""
        return dict(self._counts)

    def distribution(self) -> Distribution:
        """The distribution of every value added so far."""
        return Distribution.from_counts(self._counts)


class DistributionDelta(BaseModel):
    """Candidate mean minus baseline mean.

    ``present`` is False, and ``mean`` ``None``, when either side has no
    values: an absent side is never taken as zero. ``ArithmeticError`` is
    raised by :meth:`between` when the difference is not a finite float
    (means near the largest float of opposite signs).
    """

    model_config = _FROZEN

    present: bool
    mean: float | None = None

    @model_validator(mode="after")
    def _value_exactly_when_present(self) -> DistributionDelta:
        if self.present != (self.mean is not None):
            raise ValueError("a delta has a value exactly when it is present")
        return self

    @classmethod
    def between(cls, baseline: Distribution, candidate: Distribution) -> DistributionDelta:
        """``candidate.mean - baseline.mean`` when both are present."""
        if baseline.mean is None or candidate.mean is None:
            return cls(present=False)
        difference = candidate.mean - baseline.mean
        if not math.isfinite(difference):
            raise ArithmeticError(
                f"the difference of means {candidate.mean!r} - {baseline.mean!r} is not finite"
            )
        return cls(present=True, mean=difference)
