"""Grading whole sweeps: runs in, one published grade per run out.

The Prefect-free core of the ``grade-run`` flow (:mod:`truereward.prefect`
wraps it in tasks): :mod:`.request` (what to grade), :mod:`.plan` and
:mod:`.triage` (which runs, decided once), :mod:`.reading` and
:mod:`.progress` (attempts), :mod:`.steps` (fold, publish), :mod:`.report`
(what it came to), :mod:`.outcome` (the part a flow run persists),
:mod:`.halt` (stopping without cutting a publish) and :func:`grade_request`
(:mod:`.loop`, all of it in a plain loop). Names load on first use.
docs/prefect.md and docs/scale.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..util.lazy import lazy_names

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
