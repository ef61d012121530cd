"""What every trajectory criterion takes (not a kind).

Option ``path``: the trajectory to read, when not the reader's (the
``trajectory`` reader's evidence; the ``workspace`` reader's option
``trajectory``, by default Harbor's ``/logs/agent/trajectory.json`` in a
verifier and the run's ``logs/agent/trajectory.json`` over a stored run).
A relative path is taken from the run's directory (over a stored run) or
the current directory (in a verifier); an absolute one only in a verifier.
A trajectory absent is ``TRAJECTORY_MISSING``, one that is not ATIF
``TRAJECTORY_MALFORMED``: the harness writes it, so neither is the run's
failure, and neither is ever scored.
"""

from __future__ import annotations

from ..kind import Options
from ..options import Path


class TrajectoryOptions(Options):
    path: Path | None = None
