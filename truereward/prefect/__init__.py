"""truereward as a Prefect task library (needs the ``prefect`` extra).

:mod:`.tasks` (``read``, ``fold``, ``publish`` over chunks, grader faults
retried as task retries), :mod:`.pipeline` (:func:`grade_chunks`) and
:mod:`.runner` (threads or Dask), :mod:`.artifacts`, :mod:`.events`,
:mod:`.lifeline` and :mod:`.lost` (a flow run that loses its API), :mod:`.block`
(:class:`TargetBlock`). The flow is ``flows/grade_run.py``; the
Prefect-free core is :mod:`truereward.grading`. Prefect is imported only
when one of these names is first used. docs/prefect.md is the guide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..util.lazy import lazy_names

if TYPE_CHECKING:
    from .artifacts import create_artifacts
    from .block import TargetBlock
    from .pipeline import grade_chunks
    from .retry import GraderFault, PublishRetry, retry_transient
    from .runner import task_runner_for
    from .tasks import ChunkGrades, ChunkPublished, ChunkReadings, fold, publish, read

_LAZY = {
    "create_artifacts": "artifacts",
    "TargetBlock": "block",
    "grade_chunks": "pipeline",
    "GraderFault": "retry",
    "PublishRetry": "retry",
    "retry_transient": "retry",
    "task_runner_for": "runner",
    "ChunkGrades": "tasks",
    "ChunkPublished": "tasks",
    "ChunkReadings": "tasks",
    "fold": "tasks",
    "publish": "tasks",
    "read": "tasks",
}

__all__ = [
    "ChunkGrades",
    "ChunkPublished",
    "ChunkReadings",
    "GraderFault",
    "PublishRetry",
    "TargetBlock",
    "create_artifacts",
    "fold",
    "grade_chunks",
    "publish",
    "read",
    "retry_transient",
    "task_runner_for",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
