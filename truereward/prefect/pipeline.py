"""Grading chunks through a task runner: read, then fold, then publish.

:func:`grade_chunks` keeps at most ``concurrency`` chunks in flight and
submits a chunk's next step only once the previous one has finished (on a
runner in other processes, such as Dask, it passes the finished step's
future, not its value). A chunk whose task run failed for good is reported
with its runs as not published, and the flow ends failed; once a
:class:`~truereward.grading.halt.Halt` stops (:mod:`.lifeline`), nothing
more is submitted and :class:`Halted` names the runs left. docs/prefect.md,
"How grade-run schedules its chunks", says why it is built this way.
"""

from __future__ import annotations

import gc
import queue
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from prefect import Task
from prefect import tags as prefect_tags
from prefect.client.schemas.objects import TaskRunResult
from prefect.futures import PrefectFuture
from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

from ..grading.chunks import Chunk, Payload
from ..grading.halt import Halt
from ..grading.report import GradeRunReport
from ..grading.steps import PublishedRun
from ..sweeps.record import RunRecord
from .records import result_of
from .tasks import ChunkPublished

__all__ = ["HALT_POLL_SECONDS", "Halted", "grade_chunks"]

_STEPS = ("read", "fold", "publish")
_PARAMETERS = ("chunk", "readings", "grades")


def _outcome(future: PrefectFuture[Any], *, value: bool) -> tuple[bool, Any]:
    """Whether the finished task run completed, and (when ``value``) what it
    returned or raised. The value is taken from the state's in-memory result
    record when there is one: ``State.result()`` goes through Prefect's async
    machinery (tens of milliseconds each, in the flow's one thread). A task
    run whose engine raised before it had a final state (it could not take
    its tag's concurrency slot because the API did not answer, say) did not
    complete, and the error is what it raised: its state is not asked of the
    API, which may be the thing that failed."""
    try:
        future.wait()
    except Exception as error:  # noqa: BLE001 - whatever the engine raised is the why
        return False, error
    state = future.state
    if not state.is_final():
        return False, _never_finished(future, state.type.value)
    if not value:
        return state.is_completed(), None
    return state.is_completed(), result_of(state)


def _never_finished(future: PrefectFuture[Any], state: str) -> RuntimeError:
    """Why a finished future's task run has no final state: the runner never
    ran it to its end (a Dask cluster that could not unpickle it, a worker
    lost with it: KilledWorker), so the API still says ``PENDING`` or
    ``RUNNING``. The runner's own error says why, when it has one."""
    why = f"the task run never finished (its state is still {state})"
    exception = getattr(getattr(future, "wrapped_future", None), "exception", None)
    if callable(exception):
        try:
            # Done already (its callback ran); Dask's client answers
            # through its event loop, which a zero timeout does not wait for.
            cause = exception(timeout=10)
        except Exception as error:  # noqa: BLE001 - whatever the runner raises, it is the why
            cause = error
        said: list[str] = []
        while isinstance(cause, BaseException) and len(said) < 3:  # and what it came from
            said.append(f"{type(cause).__name__}: {' '.join(str(cause).split())[:300]}")
            cause = cause.__cause__ or cause.__context__
        if said:
            why += ": " + "; from ".join(said)
    return RuntimeError(why)


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


@dataclass(frozen=True)
class Halted:
    """Where grading stood when its :class:`~truereward.grading.halt.Halt`
    stopped it: ``why``; ``unfinished``, the runs of the chunks then in
    flight that were not published (at most ``concurrency`` chunks' runs);
    ``taken``, how many runs had been taken from the plan (the runs after
    them were never started); ``cut``, the runs still publishing when the
    drain bound passed (their publish was left unfinished)."""

    why: str
    unfinished: list[str]
    taken: int
    cut: list[str] = field(default_factory=list)


#: Seconds between looks at the halt while the flow waits for a task run.
HALT_POLL_SECONDS = 0.5

_Finished = tuple[int, Chunk, Any, PrefectFuture[Any]]


def grade_chunks(
    chunks: Iterable[Chunk],
    runner: TaskRunner[Any],
    *,
    concurrency: int,
    steps: tuple[Task[Any, Any], Task[Any, Any], Task[Any, Any]],
    report: GradeRunReport,
    tags: Iterable[str] = (),
    halt: Halt | None = None,
    drain_seconds: float = 0.0,
) -> Halted | None:
    """Run ``steps`` (the read, fold and publish tasks) over every chunk on
    the started ``runner``, adding each run's outcome to ``report``. Every
    task run carries ``tags`` (the sweep), so a tag concurrency limit
    (``prefect concurrency-limit create sweep:nightly 8``) bounds a sweep's
    task runs across flow runs; the runs of a chunk are in its task runs'
    names (``read-run-0042``), not in tags (see the module docstring).

    Once ``halt`` is stopped (the flow run lost its API), no task run is
    submitted, the runs being published finish (at most ``drain_seconds``;
    on a runner whose task runs are in other processes, where the halt
    cannot see them, the publish task runs in flight are waited for as
    long), the outcomes that came meanwhile are added to ``report``, and
    :class:`Halted` says what was left; read and fold task runs in flight
    are abandoned (they publish nothing). Returns ``None`` when every chunk
    went through."""
    pipeline = _Pipeline(chunks, runner, steps, report, tuple(tags), halt)
    # Every full garbage collection scans every object alive, and a flow
    # process holds some 200,000 from before grading (Prefect, the imports):
    # frozen for the time of grading, they are not scanned (22 full
    # collections over 10,000 runs cost seconds). Unfrozen after, so a
    # process that goes on (a notebook, a test) collects them as before.
    gc.freeze()
    try:
        return pipeline.run(concurrency, drain_seconds)
    finally:
        gc.unfreeze()


class _Pipeline:
    """The state of :func:`grade_chunks`: the chunks in flight, each at one
    step, and what a halt left."""

    def __init__(
        self,
        chunks: Iterable[Chunk],
        runner: TaskRunner[Any],
        steps: tuple[Task[Any, Any], Task[Any, Any], Task[Any, Any]],
        report: GradeRunReport,
        tags: tuple[str, ...],
        halt: Halt | None,
    ) -> None:
        self.pending: Iterator[Chunk] = iter(chunks)
        self.runner = runner
        self.steps = steps
        self.report = report
        self.tags = tags
        self.halt = halt
        self.threads = isinstance(runner, ThreadPoolTaskRunner)
        self.done: queue.Queue[_Finished] = queue.Queue()
        self.flying: dict[int, tuple[Chunk, int]] = {}  # id(chunk) -> (chunk, its step)
        self.taken = 0
        self.unfinished: list[str] = []

    @property
    def stopped(self) -> bool:
        return self.halt is not None and self.halt.why is not None

    def run(self, concurrency: int, drain_seconds: float) -> Halted | None:
        poll = HALT_POLL_SECONDS if self.halt is not None else None
        while True:
            while len(self.flying) < concurrency and self.start_next():
                pass
            if not self.flying:
                return None
            try:
                finished = self.done.get(timeout=poll)
            except queue.Empty:
                finished = None
            if finished is not None:
                self.settle(*finished)
            if self.stopped:
                return self.drain(drain_seconds)

    def submit(
        self, step: int, chunk: Chunk, argument: Any, upstream: PrefectFuture[Any] | None = None
    ) -> None:
        name = _PARAMETERS[step]
        with prefect_tags(*self.tags):
            future = self.runner.submit(
                self.steps[step],
                {name: argument},
                dependencies=(
                    {name: {TaskRunResult(id=upstream.task_run_id)}}
                    if upstream is not None
                    else None
                ),
            )
        self.flying[id(chunk)] = (chunk, step)
        done = self.done
        future.add_done_callback(lambda finished: done.put((step, chunk, argument, finished)))

    def start_next(self) -> bool:
        if self.stopped:
            return False
        chunk = next(self.pending, None)
        if chunk is None:
            return False
        self.taken += len(chunk.jobs)
        self.submit(0, chunk, chunk)
        return True

    def settle(self, step: int, chunk: Chunk, argument: Any, future: PrefectFuture[Any]) -> None:
        """Take a finished step of ``chunk``: submit its next step, or count
        its runs."""
        if step and isinstance(argument, Payload):
            argument.release()  # the previous step's output, now used: see Payload.release
        completed, outcome = _outcome(future, value=True)
        if not completed or isinstance(outcome, BaseException):
            error = outcome if isinstance(outcome, BaseException) else None
            self.account(chunk, _failed(chunk, _STEPS[step], error), seen=step == 2)
        elif step < 2 and not self.stopped:
            self.submit(step + 1, chunk, outcome if self.threads else future, future)
        elif step < 2:  # abandoned: it has published nothing
            self.account(chunk, [], seen=False)
        else:
            published: ChunkPublished = outcome
            for item in published.published:
                self.report.add(item)
            self.unfinished.extend(published.halted)
            published.release()
            self.forget(chunk)

    def account(self, chunk: Chunk, failed: list[PublishedRun], *, seen: bool) -> None:
        """A chunk whose step gave no result: each run's publish the halt saw
        (``seen``) counts as it went; any other run as ``failed`` says, or
        as unfinished once grading stopped."""
        outcomes = self.halt.outcomes(chunk.name) if seen and self.halt is not None else {}
        stopped = self.stopped
        for index, job in enumerate(chunk.jobs):
            found = outcomes.get(job.run)
            if found is not None:
                self.report.add(found)
            elif stopped or not failed:
                self.unfinished.append(job.run)
            else:
                self.report.add(failed[index])
        self.forget(chunk)

    def forget(self, chunk: Chunk) -> None:
        self.flying.pop(id(chunk), None)
        if self.halt is not None:
            self.halt.collected(chunk.name)

    def drain(self, drain_seconds: float) -> Halted:
        """The end of a halted pipeline (see :func:`grade_chunks`)."""
        assert self.halt is not None
        deadline = time.monotonic() + drain_seconds
        cut = self.halt.wait_idle(drain_seconds)
        while self.flying:
            publishing = any(step == 2 for _, step in self.flying.values())
            # Other processes' publishes are invisible to the halt: wait for
            # their task runs, as long as the bound allows.
            wait = 0.0
            if publishing and not self.threads:
                wait = max(0.0, deadline - time.monotonic())
            try:
                finished = self.done.get(timeout=wait) if wait else self.done.get_nowait()
            except queue.Empty:
                break
            self.settle(*finished)
        for chunk, step in list(self.flying.values()):
            self.account(chunk, [], seen=step == 2)
        return Halted(
            why=self.halt.why or "stopped", unfinished=self.unfinished, taken=self.taken, cut=cut
        )
