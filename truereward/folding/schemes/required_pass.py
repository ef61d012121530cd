"""``required-pass/1``: 1.0 when every required case passes, else 0.0.

A case is required unless the task says ``required = false`` for it
(rewardkit's ``optional``); optional cases never change the reward. A run
with no required case is refused (``CASE_INVALID``): rewardkit warns and
scores it 0.0, which says nothing about the run.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..registry import Weighed
from ..weighing import weighing_scheme


def required_pass(inputs: Sequence[Weighed], threshold: float | None = None) -> float:
    """1.0 when every required input passes."""
    return 1.0 if all(item.passed for item in inputs if item.required) else 0.0


SCHEME = weighing_scheme(
    "required-pass/1",
    "1.0 when every required case passes, else 0.0",
    required_pass,
    needs_required=True,
)
