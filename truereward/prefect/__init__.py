"""truereward as a Prefect task library (needs the ``prefect`` extra).

- :mod:`.tasks`: the ``read``, ``fold`` and ``publish`` tasks over chunks of
  runs, with grader faults retried as Prefect task retries;
- :mod:`.pipeline`: :func:`grade_chunks`, the chunks through a task runner,
  a bounded number at a time; :mod:`.runner`: the task runner a request
  asks for (threads, or Dask);
- :mod:`.artifacts`: the flow's table and markdown artifacts;
  :mod:`.events`: the events it emits as it ends, for automations;
- :mod:`.lifeline`: a flow run that loses its Prefect API stops grading
  and ends its process within a bound, saying (:mod:`.lost`) what it
  published and how to resume;
- :mod:`.block`: :class:`TargetBlock`, a publish target with secret
  credentials, for deployments.

The flow itself is ``flows/grade_run.py`` (deployment: ``infra/prefect.yaml``);
the Prefect-free core is :mod:`truereward.grading`. Prefect is imported only
when one of these names is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

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
