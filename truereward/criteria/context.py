"""What a criterion is evaluated with: the workspace, the trajectory, the
hosts it may ask, and the grader's bounds.

Built by the ``workspace`` and ``trajectory`` readers for one reading. The
trajectory is read once per path and kept (a refusal too), however many
criteria ask for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..codes import Ungradable
from .atif import Trajectory, parse
from .codes import TRAJECTORY_MALFORMED, TRAJECTORY_MISSING
from .files import WorkspaceFiles

__all__ = ["Context", "Trajectories", "TrajectoryLoader"]

#: Reads the trajectory at a path (``None``: the reader's default) and
#: answers with its bytes and its name; raises ``Ungradable`` with the
#: evidence codes (missing, malformed, unreadable).
TrajectoryLoader = Callable[[str | None], tuple[bytes, str]]


class Trajectories:
    """Trajectories by path, each read and parsed once."""

    def __init__(self, load: TrajectoryLoader) -> None:
        self._load = load
        self._kept: dict[str | None, Trajectory | Ungradable] = {}

    def get(self, path: str | None) -> Trajectory:
        """The trajectory at ``path``; ``TRAJECTORY_MISSING`` when absent,
        ``TRAJECTORY_MALFORMED`` when it is not a regular file, is too
        large or is not ATIF; ``EVIDENCE_UNREADABLE`` on an I/O error."""
        if path not in self._kept:
            self._kept[path] = self._read(path)
        found = self._kept[path]
        if isinstance(found, Ungradable):
            raise Ungradable(found.code, found.why)
        return found

    def _read(self, path: str | None) -> Trajectory | Ungradable:
        try:
            data, where = self._load(path)
            return parse(data, where)
        except Ungradable as refused:
            if refused.code == "EVIDENCE_MISSING":
                return Ungradable(TRAJECTORY_MISSING, refused.why)
            if refused.code == "EVIDENCE_MALFORMED":
                return Ungradable(TRAJECTORY_MALFORMED, refused.why)
            return refused


@dataclass
class Context:
    """One reading's criteria context. ``files`` is ``None`` when there is
    no workspace (the ``trajectory`` reader)."""

    files: WorkspaceFiles | None
    trajectories: Trajectories
    allowed_hosts: tuple[str, ...]
    regex_timeout: float = 1.0

    def workspace(self) -> WorkspaceFiles:
        """The workspace; ``CASE_INVALID`` when this reader has none."""
        if self.files is None:
            raise Ungradable(
                "CASE_INVALID",
                "this criterion reads a workspace: grade it with the workspace reader",
            )
        return self.files

    def live(self, what: str) -> WorkspaceFiles:
        """The workspace, when it is live and local (a verifier's): only there
        do criteria run programs or ask services. ``CASE_INVALID`` over a
        stored run of a sweep or a workspace given as a URL: the task spec
        comes with the run, and a run must not make the grader run anything."""
        files = self.workspace()
        if not (files.live and files.evidence.is_local):
            raise Ungradable(
                "CASE_INVALID",
                f"{what} only in a live local workspace (a verifier's), never over a stored "
                "run of a sweep",
            )
        return files
