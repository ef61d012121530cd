"""Grading whole sweeps: runs in, one published grade per run out.

The Prefect-free core of the ``grade-run`` flow (:mod:`truereward.prefect`
wraps it in tasks):

- :class:`GradeRequest` (:mod:`.request`): what to grade and how;
- :func:`plan_runs` (:mod:`.plan`): one :class:`RunJob` per run;
- :func:`triage` (:mod:`.triage`): whether a run with a grade is graded
  again (the regrade policy), decided once per run;
- :func:`read_run` (:mod:`.reading`): one attempt at reading a run, every
  problem a refusal; :func:`worth_retrying`: whether a refusal may pass;
- :class:`ChunkProgress` (:mod:`.progress`): attempts over a chunk of runs;
- :func:`fold_reading`, :func:`publish_graded` (:mod:`.steps`);
- :class:`GradeRunReport` (:mod:`.report`): the summary, what publishing
  did, the per-run table; :class:`GradeRunOutcome` (:mod:`.outcome`): the
  small part of it a grade-run flow run returns and persists;
- :class:`~.halt.Halt` (:mod:`.halt`): stopping a sweep's grading without
  cutting a run's publish;
- :func:`grade_request` (:mod:`.loop`): all of it in a plain loop.

Importing this package is cheap; names load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:
    from .chunks import Chunk, chunk_size_for, chunked
    from .loop import grade_request
    from .outcome import GradeRunOutcome
    from .plan import GradeSettings, RunJob, plan_runs
    from .progress import ChunkProgress, read_chunk, retry_delays
    from .reading import RunReading, read_run, worth_retrying
    from .report import GradeRunReport, GradeRunResult, PublishFailed, RunLine
    from .request import GradeRequest
    from .steps import GradedRun, PublishedRun, fold_reading, publish_graded
    from .stored import stored_grade
    from .triage import selects, triage, triaged

_LAZY = {
    "Chunk": "chunks",
    "chunk_size_for": "chunks",
    "chunked": "chunks",
    "grade_request": "loop",
    "GradeRunOutcome": "outcome",
    "GradeSettings": "plan",
    "RunJob": "plan",
    "plan_runs": "plan",
    "ChunkProgress": "progress",
    "read_chunk": "progress",
    "retry_delays": "progress",
    "RunReading": "reading",
    "read_run": "reading",
    "worth_retrying": "reading",
    "GradeRunReport": "report",
    "GradeRunResult": "report",
    "PublishFailed": "report",
    "RunLine": "report",
    "GradeRequest": "request",
    "GradedRun": "steps",
    "PublishedRun": "steps",
    "fold_reading": "steps",
    "publish_graded": "steps",
    "stored_grade": "stored",
    "selects": "triage",
    "triage": "triage",
    "triaged": "triage",
}

__all__ = [
    "Chunk",
    "ChunkProgress",
    "GradeRequest",
    "GradeRunOutcome",
    "GradeRunReport",
    "GradeRunResult",
    "GradeSettings",
    "GradedRun",
    "PublishFailed",
    "PublishedRun",
    "RunJob",
    "RunLine",
    "RunReading",
    "chunk_size_for",
    "chunked",
    "fold_reading",
    "grade_request",
    "plan_runs",
    "publish_graded",
    "read_chunk",
    "read_run",
    "retry_delays",
    "selects",
    "stored_grade",
    "triage",
    "triaged",
    "worth_retrying",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
