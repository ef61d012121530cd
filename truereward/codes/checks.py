"""The refusal code of the criteria checks, declared ahead of them.

:data:`CHECK_GAVE_UP`: a check could not decide within the grader's bounds,
so the case has no score (never a 0.0 the run did not earn); the grader's,
not retried, since the bounds count CPU time and the same pattern gives up
again. The entry point ``checks`` of the ``truereward.codes`` group names
:data:`DECLARATION`; importing this module declares it too.
docs/checks.md, "Bounds and give-ups", says why.
"""

from __future__ import annotations

from typing import Any

from . import declare

__all__ = ["CHECK_GAVE_UP", "DECLARATION"]

#: A check gave up within the grader's bounds: the case is not graded.
CHECK_GAVE_UP = "CHECK_GAVE_UP"

#: The declaration in the shape :func:`truereward.codes.declare` takes.
DECLARATION: dict[str, dict[str, Any]] = {
    CHECK_GAVE_UP: {
        "meaning": "a criteria check gave up within the grader's bounds (a regular "
        "expression ran out of its time bound on this answer, or the case's time budget "
        "ran out): the task's pattern is at fault, nothing was measured",
        "blame": "grader",
        "retry": False,
    },
}

declare(DECLARATION)
