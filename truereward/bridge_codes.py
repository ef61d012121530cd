"""The refusal codes of the rewardkit bridge (:mod:`truereward.readers.rewardkit`),
declared ahead of it.

Every one is the grader's: rewardkit, the verifier's environment, a service
or a judge failed, never the run.

- :data:`REWARDKIT_FAILED`: rewardkit exited non-zero (a criterion raised, a
  judge could not connect), was killed, or left its output incomplete
  (``reward.json`` without ``reward-details.json``, a file that is not
  JSON). Retried: a judge that could not connect may answer later.
- :data:`WORKSPACE_MISSING`, :data:`TRAJECTORY_MISSING`,
  :data:`TRAJECTORY_MALFORMED`, :data:`TOOL_MISSING`,
  :data:`SERVICE_UNREACHABLE`: the faults rewardkit scores 0, which the
  bridge finds and refuses; their declarations are the criteria's own
  (a workspace criterion refuses the same faults with the same codes), so
  either module may declare them first (an identical redeclaration is a
  no-op).

The entry point ``rewardkit`` of the ``truereward.codes`` group names
:data:`DECLARATION`, so every process knows the codes without importing the
bridge; importing this module also declares them.
"""

from __future__ import annotations

from typing import Any

from .codes import declare

__all__ = [
    "DECLARATION",
    "REWARDKIT_FAILED",
    "SERVICE_UNREACHABLE",
    "TOOL_MISSING",
    "TRAJECTORY_MALFORMED",
    "TRAJECTORY_MISSING",
    "WORKSPACE_MISSING",
]

REWARDKIT_FAILED = "REWARDKIT_FAILED"
WORKSPACE_MISSING = "WORKSPACE_MISSING"
TRAJECTORY_MISSING = "TRAJECTORY_MISSING"
TRAJECTORY_MALFORMED = "TRAJECTORY_MALFORMED"
TOOL_MISSING = "TOOL_MISSING"
SERVICE_UNREACHABLE = "SERVICE_UNREACHABLE"

#: The declaration in the shape :func:`truereward.codes.declare` takes.
DECLARATION: dict[str, dict[str, Any]] = {
    REWARDKIT_FAILED: {
        "meaning": "rewardkit exited non-zero (a criterion raised, a judge could not "
        "connect), was killed, or left its output incomplete",
        "blame": "grader",
        "retry": True,
    },
    WORKSPACE_MISSING: {
        "meaning": "the workspace directory the criteria read is not there (the harness did "
        "not provide it, or the verifier names another path)",
        "blame": "grader",
        "retry": False,
    },
    TRAJECTORY_MISSING: {
        "meaning": "the agent's trajectory (ATIF), which the harness writes, is absent",
        "blame": "grader",
        "retry": False,
    },
    TRAJECTORY_MALFORMED: {
        "meaning": "the agent's trajectory is not an ATIF trajectory (not JSON, wrong shape, "
        "over the size read, or not a regular file)",
        "blame": "grader",
        "retry": False,
    },
    TOOL_MISSING: {
        "meaning": "a program a criterion runs is not installed where the verifier runs",
        "blame": "grader",
        "retry": False,
    },
    SERVICE_UNREACHABLE: {
        "meaning": "an HTTP request a criterion makes could not be made (connection refused "
        "or reset, name not resolved, TLS failed)",
        "blame": "grader",
        "retry": True,
    },
}

declare(DECLARATION)
