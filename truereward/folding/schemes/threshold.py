"""``threshold/1``: 1.0 when the weighted mean reaches the threshold, else 0.0.

The weighted mean is ``weighted-mean/1``'s; the threshold is the task's
(``scoring.threshold``, or a dimension's ``threshold``), 0.5 when it gives
none, as in rewardkit. Reaching it counts (``mean >= threshold``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..registry import Weighed
from ..weighing import weighing_scheme
from .weighted_mean import weighted_mean

#: The threshold when the task gives none (rewardkit's default).
DEFAULT_THRESHOLD = 0.5


def threshold(inputs: Sequence[Weighed], threshold: float | None = None) -> float:
    """1.0 when the weighted mean is at least ``threshold``."""
    bar = DEFAULT_THRESHOLD if threshold is None else threshold
    return 1.0 if weighted_mean(inputs) >= bar else 0.0


SCHEME = weighing_scheme(
    "threshold/1",
    "1.0 when the weighted mean of the case values reaches the threshold, else 0.0",
    threshold,
    threshold=DEFAULT_THRESHOLD,
    needs_weight=True,
)
