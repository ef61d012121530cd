"""The refusal code of the weighing schemes, declared ahead of them.

:data:`SCORE_OUT_OF_RANGE`: a case's score (``measures["score"]``) lies
outside [0, 1] where a weighing scheme (``weighted-mean/1`` and the others
of :mod:`truereward.folding.weighing`) would fold it. Refused, never
clipped and never warned about: a criterion that computes 1.5 or -3 has a
bug, and no reward may rest on it (rewardkit accepts both with a warning).

- **Blame: grader.** The score is what the criterion, the reader or the
  judge computed, not what the run produced.
- **Retry: no.** The same evidence gives the same score.

The entry point ``scores`` of the ``truereward.codes`` group names
:data:`DECLARATION`, so every process knows the code without importing the
fold; importing this module also declares it (an identical redeclaration
is a no-op).
"""

from __future__ import annotations

from typing import Any

from .codes import declare

__all__ = ["DECLARATION", "SCORE_OUT_OF_RANGE"]

#: A case's score is outside [0, 1] where a weighing scheme folds it.
SCORE_OUT_OF_RANGE = "SCORE_OUT_OF_RANGE"

#: The declaration in the shape :func:`truereward.codes.declare` takes.
DECLARATION: dict[str, dict[str, Any]] = {
    SCORE_OUT_OF_RANGE: {
        "meaning": "a case's score is outside [0, 1] where a weighing scheme folds it: "
        "refused, never clipped",
        "blame": "grader",
        "retry": False,
    },
}

declare(DECLARATION)
