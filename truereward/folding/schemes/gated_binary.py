"""``gated-binary/1``: all or nothing.

The reward of a gradable run is ``1.0`` when every graded pass-to-pass case
(guard) passed and every graded fail-to-pass case passed, and ``0.0``
otherwise. An untouched codebase scores 0 because its fail-to-pass cases
fail; a fix that breaks a guard scores 0 because the guard is the contract.
(A gradable run has no ungradable row, so "graded" is every row.)
"""

from __future__ import annotations

from ..registry import Scheme
from ..rules import Tally


def gated_binary(tally: Tally) -> float:
    """1.0 when every guard holds and every fix passes, else 0.0."""
    fix = tally.cases.fail_to_pass
    return 1.0 if tally.guards_hold and fix.passed == fix.graded else 0.0


SCHEME = Scheme(
    name="gated-binary/1",
    description="1.0 when every guard holds and every fail-to-pass case passes, else 0.0",
    reward=gated_binary,
    bounds=(0.0, 1.0),
)
