"""Reading a chunk of runs, attempt after attempt.

:class:`ChunkProgress` holds the runs settled (gradable, refused for good,
or read for the last time) and the attempts of those worth reading again;
each :meth:`ChunkProgress.attempt` reads only the unsettled runs once more.
:class:`PublishProgress` does the same for publishing. The Prefect ``read``
task keeps one per task run and calls :meth:`attempt` once per Prefect
attempt, so the retries the UI shows are these; :func:`read_chunk` does it
in a plain loop. docs/prefect.md, "Retries, routed by blame".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from ..codes import Blame
from ..grade.document import Attempt
from ..record.refusal import Refusal
from ..util.io import ordered_map
from .chunks import Chunk
from .halt import Halt
from .reading import RunReading, kept, read_run, worth_retrying
from .steps import GradedRun, PublishedRun, publish_graded, settle_published

__all__ = ["ChunkProgress", "PublishProgress", "read_chunk", "retry_delays"]


def retry_delays(first: float, max_attempts: int) -> list[float]:
    """The delay before each retry: ``first``, then doubled each time
    (``max_attempts - 1`` delays; none for a single attempt)."""
    return [first * 2**index for index in range(max(0, max_attempts - 1))]


class ChunkProgress:
    """The reading of one chunk so far (module docstring)."""

    def __init__(self, chunk: Chunk) -> None:
        self.chunk = chunk
        self.attempts = 0
        self._settled: dict[int, RunReading] = {}
        self._final: dict[int, list[Refusal]] = {}
        self._history: dict[int, list[Attempt]] = {}
        self._pending = list(range(len(chunk.jobs)))

    @property
    def unsettled(self) -> list[str]:
        """Ids of the runs that will be read again."""
        return [self.chunk.jobs[index].run for index in self._pending]

    def refused(self) -> list[tuple[str, Attempt]]:
        """Each run that will be read again, with its last attempt (its
        number and the refusals that make it worth reading again)."""
        return [(self.chunk.jobs[index].run, self._history[index][-1]) for index in self._pending]

    @property
    def done(self) -> bool:
        """Whether every run is settled."""
        return not self._pending

    def attempt(self, *, last: bool) -> bool:
        """Read every unsettled run once (attempt ``attempts + 1``); with
        ``last``, settle them whatever they gave. Returns whether some run is
        still worth reading again."""
        self.attempts += 1
        still: list[int] = []
        jobs = self.chunk.jobs

        def read_one(index: int) -> RunReading:
            job = jobs[index]
            if job.standing is not None:
                return kept(job)
            # Attempts are numbered on from the ones earlier flow runs made.
            return read_run(job, job.after + self.attempts)

        budget = jobs[0].settings.io_budget
        for index, reading in zip(
            self._pending, ordered_map(read_one, self._pending, budget), strict=True
        ):
            if reading.stored is not None:
                self._settled[index] = reading
                continue
            reading = reading.with_fold()  # folded once, for this decision and the document
            refusals = reading.refusals()
            if not last and worth_retrying(refusals):
                self._history.setdefault(index, []).append(reading.as_attempt(refusals))
                still.append(index)
            else:
                self._settled[index] = reading.with_history(self._history.pop(index, []))
                self._final[index] = refusals
        self._pending = still
        return bool(still)

    def grader_refused(self) -> list[tuple[str, list[Refusal]]]:
        """The runs read in this flow run that stand refused with every
        refusal the grader's, and their refusals (kept grades aside)."""
        return [
            (self.chunk.jobs[index].run, refusals)
            for index, refusals in sorted(self._final.items())
            if refusals and all(item.blame is Blame.GRADER for item in refusals)
        ]

    def readings(self) -> list[RunReading]:
        """Every run's reading, in chunk order (all must be settled)."""
        if self._pending:
            raise RuntimeError(f"runs not settled yet: {', '.join(self.unsettled)}")
        return [self._settled[index] for index in range(len(self.chunk.jobs))]


def read_chunk(
    chunk: Chunk,
    max_attempts: int,
    delays: Sequence[float] = (),
    sleep: Callable[[float], None] = time.sleep,
) -> list[RunReading]:
    """Read ``chunk`` with up to ``max_attempts`` attempts per run, waiting
    ``delays[i]`` (the last one repeated) before retry ``i + 1``: the
    Prefect-free loop."""
    progress = ChunkProgress(chunk)
    while progress.attempt(last=progress.attempts + 1 >= max_attempts):
        index = progress.attempts - 1
        if delays:
            sleep(delays[min(index, len(delays) - 1)])
    return progress.readings()


class PublishProgress:
    """Publishing a chunk's grades, attempt after attempt: each
    :meth:`attempt` publishes the runs not yet published (all of them the
    first time); a run whose publish failed for a reason that may pass
    (:attr:`~truereward.grading.steps.PublishedRun.transient`) is tried
    again on the next attempt unless this one is the last.

    With a :class:`~truereward.grading.halt.Halt`, each run's publish checks
    in with it (``chunk`` names the chunk there): once it is stopped, no
    other run's publish starts, and the runs left are :attr:`halted`."""

    def __init__(
        self, graded: Sequence[GradedRun], halt: Halt | None = None, chunk: str = ""
    ) -> None:
        self.graded = list(graded)
        self.attempts = 0
        self.halt = halt
        self.chunk = chunk
        self._done: dict[int, PublishedRun] = {}
        self._pending = list(range(len(self.graded)))

    @property
    def halted(self) -> list[str]:
        """The runs not published because the halt stopped first (empty
        unless it did)."""
        if self.halt is None or self.halt.why is None:
            return []
        return [self.graded[index].job.run for index in self._pending]

    def attempt(self, *, last: bool) -> list[PublishedRun]:
        """Publish the pending runs once; returns the failures that will be
        tried again (empty when done, or when the halt stopped: then the
        runs left are :attr:`halted`)."""
        self.attempts += 1
        pending = self._pending
        if not pending:
            return []
        budget = self.graded[pending[0]].job.settings.io_budget
        # With runs in flight at once (an object store), the last look of
        # each set's publish is taken for the chunk at once, with one listing.
        together = budget > 1
        outcomes = list(
            ordered_map(lambda index: self._publish(index, settle=not together), pending, budget)
        )
        if together:
            published = [
                (self.graded[index], outcome)
                for index, outcome in zip(pending, outcomes, strict=True)
                if outcome is not None
            ]
            looked = iter(settle_published(published))
            outcomes = [None if outcome is None else next(looked) for outcome in outcomes]
        again: list[int] = []
        halted: list[int] = []
        failures: list[PublishedRun] = []
        for index, outcome in zip(pending, outcomes, strict=True):
            if outcome is None:  # halted before it began: stays pending
                halted.append(index)
            elif outcome.failed and outcome.transient and not last:
                again.append(index)
                failures.append(outcome)
            else:
                self._done[index] = outcome
        self._pending = again + halted
        return [] if halted else failures

    def _publish(self, index: int, *, settle: bool = True) -> PublishedRun | None:
        """Publish one run; ``None`` when the halt stopped before it began."""
        graded = self.graded[index]
        if self.halt is None:
            return publish_graded(graded, settle=settle)
        with self.halt.publishing(graded.job.run) as allowed:
            if not allowed:
                return None
            published = publish_graded(graded, settle=settle)
            self.halt.ended(self.chunk, published)
            return published

    def results(self) -> list[PublishedRun]:
        """What publishing did for every run, in chunk order (all done; when
        halted, the runs published, without the :attr:`halted` ones)."""
        if self._pending and not self.halted:
            raise RuntimeError("some runs are still to be published")
        return [self._done[index] for index in range(len(self.graded)) if index in self._done]
