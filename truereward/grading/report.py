"""What grading a sweep came to: the summary, what publishing did, a table.

:class:`GradeRunReport` takes each run's :class:`~truereward.grading.steps.PublishedRun`
as it comes and builds a :class:`GradeRunResult`:

- ``summary``: the sweep summary of :mod:`truereward.sweeps` (the same code
  ``truereward sweep summary`` runs over the published files): runs,
  gradable runs, the reward distribution over **gradable runs only** (its
  mean is absent, never 0, when none is), refusals by code and blame,
  attempts. A run whose grade could not be published counts as
  *unreadable*, as it would when the sweep is summarised from its files.
- ``published``: runs per publish decision (``created``, ``replaced``,
  ``unchanged``, ``repaired``, ``failed``); ``already_graded``: runs that
  had a grade published before (not graded again);
- ``failures``: the runs whose grade could not be published, and why;
- ``runs``: one line per run for the table artifact.

Memory stays bounded whatever the sweep's size: the summary's tallies are
bounded by the codes and attempt counts, and the table and the failures keep
at most :data:`TABLE_LIMIT` and :data:`FAILURE_LIMIT` lines (runs that were
refused, retried or not published first; counts cover every run).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from ..sweeps.record import RunState
from ..sweeps.summary import SummaryBuilder, SweepSummary
from .steps import PublishedRun

__all__ = [
    "FAILURE_LIMIT",
    "GRADED",
    "GRADED_WITH_REFUSALS",
    "NOT_PUBLISHED",
    "TABLE_LIMIT",
    "GradeRunReport",
    "GradeRunResult",
    "PublishFailed",
    "RunFailure",
    "RunLine",
]

#: Lines of the per-run table kept at most.
TABLE_LIMIT = 2000
#: Publishing failures named at most (all are counted).
FAILURE_LIMIT = 100

#: The names of the flow's final states.
GRADED = "Graded"
GRADED_WITH_REFUSALS = "Graded with refusals"
NOT_PUBLISHED = "Publish failed"

_FROZEN = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class RunLine(BaseModel):
    """One run in the table: its reward or its refusal codes and who is to
    blame, how many attempts it took, and what publishing did."""

    model_config = _FROZEN

    run: str
    state: str
    reward: float | None
    codes: list[str]
    blame: list[str]
    attempts: int
    published: str

    def cells(self) -> dict[str, str | int | float]:
        """The line as table cells (an absent reward is ``—``, never 0)."""
        return {
            "run": self.run,
            "state": self.state,
            "reward": "—" if self.reward is None else self.reward,
            "codes": ", ".join(self.codes) or "—",
            "blame": ", ".join(self.blame) or "—",
            "attempts": self.attempts,
            "published": self.published,
        }


class RunFailure(BaseModel):
    """A run whose grade could not be published."""

    model_config = _FROZEN

    run: str
    why: str


Count = Annotated[int, Field(ge=0)]


class GradeRunResult(BaseModel):
    """The outcome of grading a sweep (module docstring)."""

    model_config = _FROZEN

    summary: SweepSummary
    published: dict[str, int]
    already_graded: Count
    failed: Count
    failures: list[RunFailure]
    runs: list[RunLine]

    @property
    def state_name(self) -> str:
        """``Publish failed`` when some grade could not be published,
        ``Graded`` when every run is gradable, ``Graded with refusals``
        otherwise."""
        if self.failed:
            return NOT_PUBLISHED
        return GRADED if self.summary.gradable == self.summary.runs else GRADED_WITH_REFUSALS

    def headline(self) -> str:
        """One line: runs, gradable, mean reward (or its absence), failures."""
        summary = self.summary
        mean = summary.reward.mean
        reward = "no gradable run" if mean is None else f"mean reward {mean:.4g}"
        line = (
            f"{summary.runs} runs, {summary.gradable} gradable ({reward}), "
            f"{summary.ungradable} refused, {summary.attempts.retried} retried"
        )
        if self.already_graded:
            line += f", {self.already_graded} already graded"
        if self.failed:
            line += f"; {self.failed} could not be published"
        return line


class PublishFailed(Exception):
    """Some grade of the sweep could not be published. ``result`` is the
    :class:`GradeRunResult` all the same (what was published, what failed):
    a failed Prefect flow run carries an exception, so the summary rides on
    it."""

    def __init__(self, result: GradeRunResult) -> None:
        super().__init__(f"{result.state_name}: {result.headline()}")
        self.result = result

    def __reduce__(self) -> tuple[type[PublishFailed], tuple[GradeRunResult]]:
        return (PublishFailed, (self.result,))


class GradeRunReport:
    """Builds a :class:`GradeRunResult` one published run at a time."""

    def __init__(self) -> None:
        self._summary = SummaryBuilder()
        self._published: dict[str, int] = {}
        self._already = 0
        self._failed = 0
        self._failures: list[RunFailure] = []
        self._notable: list[RunLine] = []
        self._plain: list[RunLine] = []

    def add(self, published: PublishedRun) -> None:
        """Count one run."""
        record = published.record
        self._summary.add(record)
        self._published[published.decision] = self._published.get(published.decision, 0) + 1
        self._already += published.stored
        if published.error is not None:
            self._failed += 1
            if len(self._failures) < FAILURE_LIMIT:
                self._failures.append(RunFailure(run=record.run, why=published.error))
        line = RunLine(
            run=record.run,
            state="not published" if published.failed else record.state.value,
            reward=record.reward,
            codes=list(record.codes),
            blame=list(record.blames),
            attempts=record.attempts,
            published=published.decision,
        )
        plain = record.state is RunState.GRADABLE and record.attempts == 1
        kept = self._plain if plain else self._notable
        if len(kept) < TABLE_LIMIT:
            kept.append(line)

    def result(self) -> GradeRunResult:
        """The result so far."""
        lines = self._notable + self._plain[: max(0, TABLE_LIMIT - len(self._notable))]
        lines.sort(key=lambda line: line.run)
        return GradeRunResult(
            summary=self._summary.result(),
            published=dict(sorted(self._published.items())),
            already_graded=self._already,
            failed=self._failed,
            failures=list(self._failures),
            runs=lines,
        )
