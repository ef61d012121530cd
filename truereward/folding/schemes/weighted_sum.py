"""``weighted-sum/1``: the weighted sum of the case values.

The value of weighed inputs is ``sum(value * weight)``, as rewardkit's
``weighted-sum``, in floats (:func:`truereward.util.means.float_sum`), and
exactly where a float product underflows or the sum overflows. The one scheme that takes
negative weights (a penalty), as in rewardkit; its reward is any finite
number, not a value in [0, 1] (it has no bounds): weights whose sum of
products is beyond the float range are refused (``CASE_INVALID``), as
rewardkit's ``inf`` is not a reward. Case scores outside [0, 1] are
refused all the same: the weights carry the scale, never the scores.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...util import means
from ..registry import Weighed
from ..weighing import weighing_scheme


def weighted_sum(inputs: Sequence[Weighed], threshold: float | None = None) -> float:
    """``sum(value * weight)``; ``inf`` or ``-inf`` beyond the float range."""
    return means.float_sum([(item.value, item.weight) for item in inputs])


SCHEME = weighing_scheme(
    "weighted-sum/1",
    "the weighted sum of the case values (negative weights allowed)",
    weighted_sum,
    bounds=None,
    signed=True,
)
