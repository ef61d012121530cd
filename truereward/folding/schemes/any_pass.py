"""``any-pass/1``: 1.0 when at least one case passes, else 0.0.

Passing as for ``all-pass/1``. Weights are not read (a negative one is
refused, as in rewardkit).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..registry import Weighed
from ..weighing import weighing_scheme


def any_pass(inputs: Sequence[Weighed], threshold: float | None = None) -> float:
    """1.0 when some input passes."""
    return 1.0 if any(item.passed for item in inputs) else 0.0


SCHEME = weighing_scheme("any-pass/1", "1.0 when at least one case passes, else 0.0", any_pass)
