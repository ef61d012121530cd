"""The ``workspace`` reader: criteria over the workspace a run leaves, at
the breadth of Harbor's reward kit.

The evidence is the workspace directory (Harbor's ``/app`` in a verifier;
in a stored run, ``workspace``). Each declared case is one criterion, its
kind and options in the case's options:

.. code-block:: json

    {"id": "tests-pass", "kind": "fail_to_pass", "options": {
        "criterion": "command_succeeds", "cmd": ["python", "-m", "pytest", "-q"]}}
    {"id": "report", "kind": "fail_to_pass", "options": {
        "criterion": "json_path_equals", "path": "out/report.json",
        "json_path": "summary.failed", "expected": 0}}

Kinds (each a module of :mod:`truereward.criteria.kinds`, found through the
entry-point group ``truereward.criteria``): files (``file_exists``,
``file_not_exists``, ``file_contains``, ``file_contains_regex``,
``file_matches``, ``files_equal``, ``diff_ratio``), structured files
(``json_key_equals``, ``json_path_equals``, ``csv_cell_equals``,
``xlsx_cell_equals``, ``sqlite_query_equals``), images
(``image_size_equals``, ``image_similarity``), commands
(``command_succeeds``, ``command_output_contains``,
``command_output_matches``, ``command_output_matches_regex``), HTTP
(``http_status_equals``, ``http_response_contains``) and the agent's
trajectory (``trajectory_tool_used``, ``trajectory_tool_not_used``,
``trajectory_turn_count``). docs/criteria.md gives each one's options, and
what is the run's failure and what the grader's.

Every row has its score in ``measures["score"]`` (1.0 or 0.0, or the degree
for ``diff_ratio``, ``image_similarity`` and ``trajectory_turn_count``).

Reader options (the task spec's ``options``, or the caller's; other keys
are left to other parts):

- ``trajectory``: where the agent's trajectory is (default: Harbor's
  ``/logs/agent/trajectory.json`` in a verifier, the run's
  ``logs/agent/trajectory.json`` over a stored run);
- ``allowed_hosts``: the hosts HTTP criteria may ask (default loopback:
  ``localhost``, ``127.0.0.1``, ``::1``);
- ``regex_timeout``: seconds of CPU a regular expression may search (default 1).

**Live or stored.** Commands run and HTTP requests are made only in a
*live* workspace: a local directory graded where it lives (``truereward
grade /app --reader workspace``, :func:`truereward.read`), never over a
stored run of a sweep (the ``grade-run`` flow, ``grade_request``), whose
task spec comes with the run: a run must not make the grader run anything.
There they are ``CASE_INVALID``; file criteria read stored workspaces (local
or fsspec URLs) as well. Absolute paths likewise name files of a live
environment only.

A workspace that is not there is ``WORKSPACE_MISSING`` (the grader's:
rewardkit scores every criterion 0 then).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..codes import Ungradable
from ..taskspec import TaskSpec
from .evidence import Evidence
from .trajectory import DEFAULT_TRAJECTORY, HARBOR_TRAJECTORY, is_live, trajectory_loader

if TYPE_CHECKING:
    from ..cases import CaseResult
    from ..criteria.kind import Needs

__all__ = ["READER", "WorkspaceReader"]

Host = Annotated[str, Field(min_length=1, max_length=253)]


class WorkspaceSettings(BaseModel):
    """The reader's options (module docstring); other keys are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True, allow_inf_nan=False)

    trajectory: Annotated[str, Field(min_length=1, max_length=4096)] | None = None
    allowed_hosts: Annotated[list[Host], Field(max_length=256)] | None = None
    regex_timeout: Annotated[float, Field(gt=0, le=60)] = 1.0


def settings(options: Mapping[str, Any]) -> WorkspaceSettings:
    """The reader's options, validated; ``CASE_INVALID`` naming the field."""
    from ..validation import describe

    try:
        return WorkspaceSettings.model_validate(dict(options))
    except ValidationError as error:
        raise Ungradable("CASE_INVALID", f"reader options: {describe(error)}") from None


class WorkspaceReader:
    """Criteria over a workspace (module docstring)."""

    name = "workspace"
    default_evidence = "workspace"

    def read(
        self, evidence: Evidence, spec: TaskSpec, options: Mapping[str, Any]
    ) -> list[CaseResult]:
        from ..criteria.context import Context, Trajectories
        from ..criteria.files import WorkspaceFiles
        from ..criteria.grading import grade_case
        from ..criteria.http import DEFAULT_HOSTS

        chosen = settings(options)
        live = is_live(evidence)
        files = WorkspaceFiles(evidence, live=live)
        files.check()
        default = chosen.trajectory or (HARBOR_TRAJECTORY if live else DEFAULT_TRAJECTORY)
        context = Context(
            files=files,
            trajectories=Trajectories(trajectory_loader(evidence, default)),
            allowed_hosts=tuple(chosen.allowed_hosts or DEFAULT_HOSTS),
            regex_timeout=chosen.regex_timeout,
        )
        reads: frozenset[Needs] = frozenset({"workspace", "trajectory"})
        return [grade_case(case, context, reads=reads) for case in spec.cases]


READER = WorkspaceReader()
