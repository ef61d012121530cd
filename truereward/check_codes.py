"""The refusal code of the criteria checks, declared ahead of them.

:data:`CHECK_GAVE_UP`: a check of a case could not decide within the
grader's bounds (a regular expression that backtracks catastrophically on
the answer runs out of its time bound, or the case's time budget runs out
before its checks are done). Nothing was measured, so the case has no
score: never a 0.0 that the run did not earn.

- **Blame: grader.** The pattern and the bounds are the task's and the
  grader's; the answer is only the text they were applied to.
- **Retry: no.** The bounds count CPU time, not wall time, so the same
  pattern on the same answer gives up again whatever the machine's load;
  only a faster CPU could change the answer, by some factor, while
  catastrophic backtracking grows exponentially with the text. Grading
  again would spend the same budget to give up again. What helps is a
  decision (fix the pattern, or regrade with a larger bound), not a retry.

A pattern that is over the compile bounds (too long, nested too deeply,
too large once its repetitions are expanded) is refused before anything is
compiled, like a pattern that does not compile: that is ``CASE_INVALID``,
the task's case is broken whatever the answer.

The entry point ``checks`` of the ``truereward.codes`` group names
:data:`DECLARATION`, so every process knows the code without importing
the checks; importing this module also declares it (an identical
redeclaration is a no-op).
"""

from __future__ import annotations

from typing import Any

from .codes import declare

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
