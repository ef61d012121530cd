"""The refusal codes of the criteria, declared ahead of them.

Each is the grader's (the run cannot cause it by what it was asked to
produce): :data:`WORKSPACE_MISSING`, :data:`TRAJECTORY_MISSING`,
:data:`TRAJECTORY_MALFORMED`, :data:`TOOL_MISSING` (not retried) and
:data:`SERVICE_UNREACHABLE` (retried). The entry point ``criteria`` of the
``truereward.codes`` group names :data:`DECLARATION`, so every process
knows them; importing this module declares them too. docs/criteria.md
gives each code's meaning and why it is the grader's.
"""

from __future__ import annotations

from typing import Any

from ..codes import declare

__all__ = [
    "DECLARATION",
    "SERVICE_UNREACHABLE",
    "TOOL_MISSING",
    "TRAJECTORY_MALFORMED",
    "TRAJECTORY_MISSING",
    "WORKSPACE_MISSING",
]

WORKSPACE_MISSING = "WORKSPACE_MISSING"
TRAJECTORY_MISSING = "TRAJECTORY_MISSING"
TRAJECTORY_MALFORMED = "TRAJECTORY_MALFORMED"
TOOL_MISSING = "TOOL_MISSING"
SERVICE_UNREACHABLE = "SERVICE_UNREACHABLE"

#: The declaration in the shape :func:`truereward.codes.declare` takes.
DECLARATION: dict[str, dict[str, Any]] = {
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
