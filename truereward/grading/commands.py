"""The commands that grade a request again, for people to copy.

The flow's artifacts and ``truereward sweep retries`` end with the command
that grades the runs still refused for the grader's reasons, once the fault
is fixed: the same request with ``regrade: grader-refusals``, through a
deployment (:func:`deployment_command`) or on this machine with
``flows/grade_run.py`` (:func:`local_command`: flags when every field has
one, else ``--request '{...}'``). A request is written with its non-default
fields only, as compact JSON with sorted keys, quoted for a POSIX shell.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from .request import GradeRequest, Regrade

__all__ = ["DEFAULT_DEPLOYMENT", "deployment_command", "local_command", "regrade_request"]

#: The deployment of ``infra/prefect.yaml`` a command names by default.
DEFAULT_DEPLOYMENT = "grade-run/local"

#: Request fields ``flows/grade_run.py`` takes as flags (field -> flag).
_FLAGS = {
    "target": "--target",
    "reader": "--reader",
    "regrade": "--regrade",
    "max_attempts": "--max-attempts",
    "retry_delay_seconds": "--retry-delay",
    "concurrency": "--concurrency",
    "chunk_size": "--chunk-size",
    "task_runner": "--task-runner",
}


def regrade_request(request: GradeRequest, policy: Regrade = "grader-refusals") -> GradeRequest:
    """``request`` with ``regrade`` set to ``policy``."""
    return request.model_copy(update={"regrade": policy})


def _fields(request: GradeRequest) -> dict[str, Any]:
    return request.model_dump(mode="json", exclude_defaults=True)


def _json(request: GradeRequest) -> str:
    return json.dumps(_fields(request), sort_keys=True, separators=(", ", ": "))


def deployment_command(request: GradeRequest, deployment: str = DEFAULT_DEPLOYMENT) -> str:
    """``prefect deployment run '<deployment>' -p request='<json>' --watch``."""
    # Quoted always, as Prefect's docs write it (shlex leaves a/b bare).
    name = f"'{deployment}'" if "'" not in deployment else shlex.quote(deployment)
    return f"prefect deployment run {name} -p request={shlex.quote(_json(request))} --watch"


def local_command(request: GradeRequest) -> str:
    """``python flows/grade_run.py SWEEP --flag value ...``, or
    ``python flows/grade_run.py --request '<json>'`` when some field has no
    flag (a list of runs, an inline case set, options...)."""
    fields = _fields(request)
    sweep = fields.pop("sweep", None)
    if sweep is None or any(name not in _FLAGS for name in fields):
        return f"python flows/grade_run.py --request {shlex.quote(_json(request))}"
    words = ["python", "flows/grade_run.py", shlex.quote(str(sweep))]
    for name, value in sorted(fields.items()):
        words += [_FLAGS[name], shlex.quote(str(value))]
    return " ".join(words)
