"""The refusal code of the weighing schemes, declared ahead of them.

:data:`SCORE_OUT_OF_RANGE`: a case's score lies outside [0, 1] where a
weighing scheme would fold it: refused, never clipped nor merely warned
about (a criterion that computes 1.5 has a bug). The grader's (the score is
what the criterion computed, not what the run produced), not retried. The
entry point ``scores`` of the ``truereward.codes`` group names
:data:`DECLARATION`; importing this module declares it too.
docs/scoring.md.
"""

from __future__ import annotations

from typing import Any

from . import declare

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
