"""The ``trajectory`` reader: criteria on the agent's ATIF trajectory.

Each declared case is a trajectory criterion (docs/criteria.md); a
trajectory that is absent or not ATIF is ``TRAJECTORY_MISSING`` or
``TRAJECTORY_MALFORMED``, never scored. :func:`trajectory_loader` is how
this reader and ``workspace`` find a trajectory. docs/readers.md,
"trajectory", gives the rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..codes import Ungradable
from ..record.taskspec import TaskSpec
from .evidence import Evidence

if TYPE_CHECKING:
    from ..criteria.context import TrajectoryLoader
    from ..criteria.kind import Needs
    from ..record.cases import CaseResult

__all__ = ["DEFAULT_TRAJECTORY", "HARBOR_TRAJECTORY", "READER", "TrajectoryReader"]

#: Where a run's trajectory lies inside its directory.
DEFAULT_TRAJECTORY = "logs/agent/trajectory.json"
#: Where Harbor leaves it in the environment a verifier runs in.
HARBOR_TRAJECTORY = "/logs/agent/trajectory.json"


def is_live(evidence: Evidence) -> bool:
    """Whether ``evidence`` is graded where it lives (a verifier's local
    files), not as a stored run of a sweep (which has a run directory)."""
    return evidence.is_local and evidence.root is None


def trajectory_loader(evidence: Evidence, default: str | None) -> TrajectoryLoader:
    """A :data:`truereward.criteria.context.TrajectoryLoader` for criteria
    graded on ``evidence``: a path (or ``default``, or the evidence itself
    when both are ``None``) read as the module docstring says; digests go to
    ``evidence``'s."""
    from ..util import urls

    def load(path: str | None) -> tuple[bytes, str]:
        where = path if path is not None else default
        if where is None:
            return evidence.read_bytes(), evidence.describe()
        if where.startswith("/"):
            if not is_live(evidence):
                raise Ungradable(
                    "CASE_INVALID",
                    f"trajectory {where}: an absolute path is read only in a verifier, "
                    "never over a stored run of a sweep",
                )
            source = Evidence(url=where)
        elif evidence.root is not None:
            source = Evidence(
                url=urls.join(evidence.root, where),
                storage_options=evidence.storage_options,
                root=evidence.root,
            )
        else:
            source = Evidence(url=where)
        try:
            return source.read_bytes(), source.describe()
        finally:
            evidence.digests.extend(source.digests)

    return load


class TrajectoryReader:
    """Criteria on an agent's ATIF trajectory."""

    name = "trajectory"
    default_evidence = DEFAULT_TRAJECTORY

    def read(
        self, evidence: Evidence, spec: TaskSpec, options: Mapping[str, Any]
    ) -> list[CaseResult]:
        from ..criteria.context import Context, Trajectories
        from ..criteria.grading import grade_case
        from ..criteria.http import DEFAULT_HOSTS

        trajectories = Trajectories(trajectory_loader(evidence, None))
        trajectories.get(None)  # the evidence itself: refused as a whole when absent or broken
        context = Context(files=None, trajectories=trajectories, allowed_hosts=DEFAULT_HOSTS)
        reads: frozenset[Needs] = frozenset({"trajectory"})
        return [grade_case(case, context, reads=reads) for case in spec.cases]


READER = TrajectoryReader()
