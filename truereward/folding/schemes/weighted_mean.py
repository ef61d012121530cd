"""``weighted-mean/1``: the weighted mean of the case values.

The value of weighed inputs is ``sum(value * weight) / sum(weight)``, as
rewardkit's ``weighted-mean`` computes it, in floats
(:func:`truereward.util.means.float_mean`: exactly rounded sums, the bits
earlier grades hold), and exactly where a float product underflows or a sum
overflows: tiny or huge weights keep the mean. A case's value is its score, or 1/0 by verdict
(:mod:`truereward.folding.weighing`); scores outside [0, 1] are refused.
Weights are the task's (1.0 when it gives none), never negative, and must
not sum to zero: rewardkit scores such a mean 0.0, which no case earned.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...util import means
from ..registry import Weighed
from ..weighing import weighing_scheme


def weighted_mean(inputs: Sequence[Weighed], threshold: float | None = None) -> float:
    """``sum(value * weight) / sum(weight)``."""
    return means.float_mean([(item.value, item.weight) for item in inputs])


SCHEME = weighing_scheme(
    "weighted-mean/1",
    "the weighted mean of the case values (scores, else 1/0 by verdict)",
    weighted_mean,
    needs_weight=True,
)
