"""The refusal codes of the criteria, declared ahead of them.

Each is the grader's: the run cannot cause any of them by what it was asked
to produce (docs/criteria.md gives the rule criterion by criterion).

- :data:`WORKSPACE_MISSING`: the workspace directory is not there. The
  harness makes it (Harbor's ``/app``) or copies it for a separate verifier;
  a verifier pointed at the wrong path is far likelier than a run that
  removed its own working directory. Not retried: grading again finds the
  same directory.
- :data:`TRAJECTORY_MISSING`, :data:`TRAJECTORY_MALFORMED`: the agent's
  trajectory (ATIF) is absent, or not a trajectory. The harness writes it
  from the agent's logs after the run; it is not the graded agent's work
  product, so the run is not blamed. Not retried.
- :data:`TOOL_MISSING`: a program a criterion runs (named by the task, not
  by a path inside the workspace) is not installed where the verifier runs.
  Not retried.
- :data:`SERVICE_UNREACHABLE`: an HTTP request could not be made (refused,
  reset, name not resolved, TLS failed). Retried: a service that was
  starting may answer later. A request that runs out of time is the shared
  ``GRADER_TIMEOUT``.

The entry point ``criteria`` of the ``truereward.codes`` group names
:data:`DECLARATION`, so every process knows the codes without importing the
criteria; importing this module also declares them (an identical
redeclaration is a no-op).
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
