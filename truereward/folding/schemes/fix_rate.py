"""``fix-rate/1``: a dense reward for partial fixes.

The reward of a gradable run is its ``fix_rate`` (passed / graded
fail-to-pass cases) when every guard holds, and ``0.0`` when any guard
failed: breaking what worked is never partly right. A gradable run always has
a graded fail-to-pass case (otherwise it is refused with ``NO_FAIL_TO_PASS``
or ``NOTHING_GRADED``), so the rate is defined.
"""

from __future__ import annotations

from ..registry import Scheme
from ..rules import Tally


def fix_rate(tally: Tally) -> float:
    """The fix rate when the guards hold, else 0.0."""
    if not tally.guards_hold or tally.fix_rate is None:
        return 0.0
    return float(tally.fix_rate)


SCHEME = Scheme(
    name="fix-rate/1",
    description="passed / graded fail-to-pass cases when every guard holds, else 0.0",
    reward=fix_rate,
    bounds=(0.0, 1.0),
)
