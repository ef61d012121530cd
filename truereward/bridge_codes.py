"""The refusal code of the rewardkit bridge (:mod:`truereward.readers.rewardkit`),
declared ahead of it.

:data:`REWARDKIT_FAILED`: rewardkit exited non-zero (a criterion raised, a
judge could not connect: it writes nothing then), was killed, or left its
output incomplete (``reward.json`` without ``reward-details.json``, a file
that is not JSON, or one that disagrees with the scores it computed).

- **Blame: grader.** rewardkit, the task's criteria or a judge failed, not
  the run.
- **Retry: yes.** A judge that could not connect may answer later.

The faults rewardkit scores 0 without a word are refused with the workspace
criteria's own codes (:mod:`truereward.criteria.codes`: ``WORKSPACE_MISSING``,
``TRAJECTORY_MISSING``, ``TRAJECTORY_MALFORMED``, ``TOOL_MISSING``,
``SERVICE_UNREACHABLE``) and the shared ones (``GRADER_TIMEOUT``,
``PROVIDER_FAILED``, ``SCORE_OUT_OF_RANGE``, ``CASE_INVALID``): a criterion
graded by the bridge or by the ``workspace`` reader is refused the same way.

The entry point ``rewardkit`` of the ``truereward.codes`` group names
:data:`DECLARATION`, so every process knows the code without importing the
bridge; importing this module also declares it.
"""

from __future__ import annotations

from typing import Any

from .codes import declare

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
