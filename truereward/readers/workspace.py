"""The ``workspace`` reader: criteria over the workspace a run leaves, at
the breadth of Harbor's reward kit.

Each declared case is one criterion (its kind, a module of
:mod:`truereward.criteria.kinds`, and options in the case's options); every
row has its score in ``measures["score"]``. Commands and HTTP requests run
only in a live workspace, never over a stored run; a workspace that is not
there is ``WORKSPACE_MISSING``. docs/criteria.md gives each criterion's
options, the reader options (``trajectory``, ``allowed_hosts``,
``regex_timeout``) and what is the run's failure and what the grader's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..codes import Ungradable
from ..record.taskspec import TaskSpec
from .evidence import Evidence
from .trajectory import DEFAULT_TRAJECTORY, HARBOR_TRAJECTORY, is_live, trajectory_loader

if TYPE_CHECKING:
    from ..criteria.kind import Needs
    from ..record.cases import CaseResult

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
    from ..record.validation import describe

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
