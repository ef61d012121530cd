"""``all-pass/1``: 1.0 when every case passes, else 0.0.

A case passes when its verdict is ``pass``; a dimension folded into another
passes when its value is 1.0 (rewardkit counts an input as passing when its
value is at least 1.0, and values above 1 are refused here). Weights are
not read, but a negative one is refused, as rewardkit refuses it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..registry import Weighed
from ..weighing import weighing_scheme


def all_pass(inputs: Sequence[Weighed], threshold: float | None = None) -> float:
    """1.0 when every input passes."""
    return 1.0 if all(item.passed for item in inputs) else 0.0


SCHEME = weighing_scheme("all-pass/1", "1.0 when every case passes, else 0.0", all_pass)
