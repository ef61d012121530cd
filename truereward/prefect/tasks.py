"""The Prefect tasks: ``read``, ``fold`` and ``publish`` a chunk of runs.

Thin wrappers over the Prefect-free steps of :mod:`truereward.grading`, on
a :class:`~truereward.grading.Chunk` of runs: ``read`` retries a run whose
refusals are all the grader's and may pass (as a Prefect retry of the task
run), ``fold`` is pure, ``publish`` retries only failures that may pass;
:func:`~truereward.prefect.retry.retry_transient` lets nothing else retry.
No caching, no persisted results. docs/prefect.md, "The tasks, in your own
flows" and "Retries, routed by blame", says how to use them.
"""

from __future__ import annotations

from collections.abc import Iterable

from prefect import State, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.context import TaskRunContext
from prefect.states import Completed

from ..grading.chunks import Chunk, Payload
from ..grading.progress import ChunkProgress, PublishProgress, retry_delays
from ..grading.reading import RunReading
from ..grading.steps import GradedRun, PublishedRun, fold_reading
from ..record.refusal import Refusal
from ..util.terminal import printable
from .carry import Carry
from .lifeline import halt_for
from .retry import GraderFault, PublishRetry, retry_transient

__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "ChunkGrades",
    "ChunkPublished",
    "ChunkReadings",
    "fold",
    "fold_chunk",
    "publish",
    "publish_attempt",
    "read",
    "read_attempt",
]

#: Attempts per run when the tasks are used as they are (the flow sets its
#: own from the request).
DEFAULT_MAX_ATTEMPTS = 3
#: The name of a ``read`` task run's Completed state when some run of its
#: chunk stands refused for the grader's reasons after its last attempt.
GRADER_REFUSED = "Grader-refused"


class ChunkReadings(Payload):
    """What ``read`` gives: one reading per run of the chunk, in order."""

    __slots__ = ("name", "readings")
    name: str
    readings: list[RunReading]

    def __init__(self, name: str, readings: list[RunReading]) -> None:
        self._set(name=name, readings=readings)


class ChunkGrades(Payload):
    """What ``fold`` gives: one document per run of the chunk, in order."""

    __slots__ = ("graded", "name")
    name: str
    graded: list[GradedRun]

    def __init__(self, name: str, graded: list[GradedRun]) -> None:
        self._set(name=name, graded=graded)


class ChunkPublished(Payload):
    """What ``publish`` gives: what publishing did for each run, in order;
    ``halted``: the runs not published because the flow run stopped
    grading first (its Prefect API was lost: see :mod:`.lifeline`)."""

    __slots__ = ("halted", "name", "published")
    name: str
    published: list[PublishedRun]
    halted: list[str]

    def __init__(
        self, name: str, published: list[PublishedRun], halted: list[str] | None = None
    ) -> None:
        self._set(name=name, published=published, halted=list(halted or ()))


# Progress kept between the attempts of a task run (see .carry). The task
# functions reach it only through the module-level functions below: Dask
# pickles a task's function by value, and these are pickled by reference,
# so a worker uses its own registry.
_reading: Carry[ChunkProgress] = Carry()
_publishing: Carry[PublishProgress] = Carry()


def _own_context(step: str) -> TaskRunContext | None:
    """The task run of the step ``step`` of this module (or of a copy made
    by ``with_options``), or ``None`` when its function is called directly,
    outside Prefect or from inside another task."""
    context = TaskRunContext.get()
    if context is None or context.task.name != step or context.task.fn.__module__ != __name__:
        return None
    return context


def _last_attempt(context: TaskRunContext, attempts_so_far: int) -> bool:
    # The attempt about to run is the last one when the task has no retry
    # left for it (retries + 1 attempts in all).
    return attempts_so_far + 1 >= context.task.retries + 1


def read_attempt(chunk: Chunk) -> ChunkReadings | State[ChunkReadings]:
    """The body of ``read``: one attempt over the chunk's unsettled runs
    (module docstring). Inside its task run, a chunk that leaves runs refused
    for the grader's reasons ends in a Completed state named
    :data:`GRADER_REFUSED` whose message names them."""
    context = _own_context("read")
    if context is None:
        progress = ChunkProgress(chunk)
        progress.attempt(last=True)
        return ChunkReadings(name=chunk.name, readings=progress.readings())
    key = context.task_run.id
    progress = _reading.get(key, lambda: ChunkProgress(chunk))
    try:
        again = progress.attempt(last=_last_attempt(context, progress.attempts))
    except BaseException:
        _reading.drop(key)
        raise
    if again:
        reasons = [_reason(attempt.refusals) for _, attempt in progress.refused()]
        logger = get_run_logger()
        for (run, attempt), reason in zip(progress.refused(), reasons, strict=True):
            logger.warning(
                "run %s: attempt %d refused: %s; reading it again", run, attempt.attempt, reason
            )
        raise GraderFault(progress.unsettled, reasons)
    _reading.drop(key)
    readings = ChunkReadings(name=chunk.name, readings=progress.readings())
    refused = progress.grader_refused()
    if not refused:
        return readings
    # Completed (the flow goes on), under a name that tells ops which task
    # runs left runs refused for the grader's reasons.
    told = "; ".join(f"{run}: {_reason(refusals)}" for run, refusals in refused[:5])
    more = f"; and {len(refused) - 5} more" if len(refused) > 5 else ""
    get_run_logger().warning("still refused for the grader's reasons: %s%s", told, more)
    return Completed(name=GRADER_REFUSED, message=f"{told}{more}"[:2000], data=readings)


def _reason(refusals: Iterable[Refusal]) -> str:
    """``CODE (blame): why`` for each refusal, :func:`printable` (a worker
    prints its flow runs' logs on its terminal)."""
    return "; ".join(
        f"{item.code} ({item.blame.value}): {printable(item.why)}" for item in refusals
    )


def fold_chunk(readings: ChunkReadings) -> ChunkGrades:
    """The body of ``fold``: each reading becomes its run's document."""
    return ChunkGrades(
        name=readings.name, graded=[fold_reading(reading) for reading in readings.readings]
    )


def publish_attempt(grades: ChunkGrades) -> ChunkPublished:
    """The body of ``publish``: one attempt over the runs not yet published.
    Inside a flow run whose grading was halted (:mod:`.lifeline`), a run's
    publish that has begun finishes and no other begins."""
    context = _own_context("publish")
    if context is None:
        progress = PublishProgress(grades.graded)
        progress.attempt(last=True)
        return ChunkPublished(name=grades.name, published=progress.results())
    key = context.task_run.id
    halt = halt_for(context.task_run.flow_run_id)
    progress = _publishing.get(key, lambda: PublishProgress(grades.graded, halt, grades.name))
    try:
        failures = progress.attempt(last=_last_attempt(context, progress.attempts))
    except BaseException:
        _publishing.drop(key)
        raise
    if failures:
        raise PublishRetry([(item.record.run, item.error or "") for item in failures])
    _publishing.drop(key)
    return ChunkPublished(name=grades.name, published=progress.results(), halted=progress.halted)


@task(
    name="read",
    task_run_name="read-{chunk.name}",
    retries=DEFAULT_MAX_ATTEMPTS - 1,
    retry_delay_seconds=retry_delays(5.0, DEFAULT_MAX_ATTEMPTS),
    retry_condition_fn=retry_transient,
    cache_policy=NO_CACHE,
    persist_result=False,
)
def read(chunk: Chunk) -> ChunkReadings | State[ChunkReadings]:
    """Read every run of ``chunk`` (module docstring)."""
    return read_attempt(chunk)


@task(
    name="fold",
    task_run_name="fold-{readings.name}",
    retries=0,
    cache_policy=NO_CACHE,
    persist_result=False,
)
def fold(readings: ChunkReadings) -> ChunkGrades:
    """Each reading of the chunk becomes its run's grade document."""
    return fold_chunk(readings)


@task(
    name="publish",
    task_run_name="publish-{grades.name}",
    retries=2,
    retry_delay_seconds=[2.0, 8.0],
    retry_condition_fn=retry_transient,
    cache_policy=NO_CACHE,
    persist_result=False,
)
def publish(grades: ChunkGrades) -> ChunkPublished:
    """Publish each grade of the chunk at its run's target (module docstring)."""
    return publish_attempt(grades)
