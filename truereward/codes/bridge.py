"""The refusal code of the rewardkit bridge (:mod:`truereward.readers.rewardkit`),
declared ahead of it.

:data:`REWARDKIT_FAILED`: rewardkit exited non-zero, was killed, or left its
output incomplete or inconsistent; the grader's, retried (a judge that
could not connect may answer later). The faults rewardkit scores 0 without
a word get the workspace criteria's codes and the shared ones, so a
criterion is refused alike by the bridge and the ``workspace`` reader. The
entry point ``rewardkit`` of the ``truereward.codes`` group names
:data:`DECLARATION`. docs/rewardkit.md, "Refused, never scored".
"""

from __future__ import annotations

from typing import Any

from . import declare

__all__ = ["DECLARATION", "REWARDKIT_FAILED"]

REWARDKIT_FAILED = "REWARDKIT_FAILED"

#: The declaration in the shape :func:`truereward.codes.declare` takes.
DECLARATION: dict[str, dict[str, Any]] = {
    REWARDKIT_FAILED: {
        "meaning": "rewardkit exited non-zero (a criterion raised, a judge could not "
        "connect), was killed, or left its output incomplete",
        "blame": "grader",
        "retry": True,
    },
}

declare(DECLARATION)
