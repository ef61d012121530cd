"""Grading chunks through a task runner: read, then fold, then publish.

:func:`grade_chunks` keeps at most ``concurrency`` chunks in flight. A chunk
moves to its next step only when the previous one has finished (the flow
submits ``fold`` once ``read`` is done, passing the finished future, so with
Dask the readings stay on the worker), so no task run waits idle in a
worker thread for its input, and the number of task runs at work is
bounded by ``concurrency`` whatever the runner. Chunks are taken from the
iterable as room frees up, and each published chunk is handed to the
report and dropped: memory holds the chunks in flight, not the sweep.

A chunk whose task run failed for good (a bug, or a step that raised after
its retries) is reported with its runs as not published; the flow then
ends failed. Nothing is lost: its runs are graded by the next run of the
flow.
"""

from __future__ import annotations

import queue
from collections.abc import Iterable, Iterator
from typing import Any

from prefect import Task
from prefect.futures import PrefectFuture
from prefect.task_runners import TaskRunner

from ..grading.chunks import Chunk
from ..grading.report import GradeRunReport
from ..grading.steps import PublishedRun
from ..sweeps.record import RunRecord
from .tasks import ChunkPublished

__all__ = ["grade_chunks"]

_STEPS = ("read", "fold", "publish")


def _failed(chunk: Chunk, step: str, error: BaseException | None) -> list[PublishedRun]:
    why = f"the {step} task failed: {type(error).__name__}: {error}" if error else step
    return [
        PublishedRun(
            record=RunRecord.unreadable(job.run, why),
            decision="failed",
            error=why,
        )
        for job in chunk.jobs
    ]


def grade_chunks(
    chunks: Iterable[Chunk],
    runner: TaskRunner[Any],
    *,
    concurrency: int,
    steps: tuple[Task[Any, Any], Task[Any, Any], Task[Any, Any]],
    report: GradeRunReport,
) -> None:
    """Run ``steps`` (the read, fold and publish tasks) over every chunk on
    the started ``runner``, adding each run's outcome to ``report``."""
    done: queue.Queue[tuple[int, Chunk, PrefectFuture[Any]]] = queue.Queue()
    pending: Iterator[Chunk] = iter(chunks)
    parameter = ("chunk", "readings", "grades")

    def submit(step: int, chunk: Chunk, argument: Any) -> None:
        future = runner.submit(steps[step], {parameter[step]: argument})
        future.add_done_callback(lambda finished: done.put((step, chunk, finished)))

    def start_next() -> bool:
        chunk = next(pending, None)
        if chunk is None:
            return False
        submit(0, chunk, chunk)
        return True

    in_flight = 0
    while in_flight < concurrency and start_next():
        in_flight += 1
    while in_flight:
        step, chunk, future = done.get()
        outcome = future.result(raise_on_failure=False)
        if isinstance(outcome, BaseException) or outcome is None:
            for item in _failed(chunk, _STEPS[step], outcome):
                report.add(item)
        elif step < 2:
            submit(step + 1, chunk, future)
            continue
        else:
            published: ChunkPublished = outcome
            for item in published.published:
                report.add(item)
        in_flight -= 1
        if start_next():
            in_flight += 1
