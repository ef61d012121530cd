"""What grading a sweep came to: the summary, what publishing did, a table.

:class:`GradeRunReport` takes each run's
:class:`~truereward.grading.steps.PublishedRun` as it comes and builds a
:class:`GradeRunResult`: the sweep summary over every run's grade, this
flow run's counts, what publishing did, the failures, a table, the entries
not graded and the retried runs. Its memory is bounded whatever the sweep's
size (:data:`TABLE_LIMIT`, :data:`FAILURE_LIMIT`). docs/prefect.md, "States,
artifacts and the result", describes each field.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from ..sweeps.numbers import real
from ..sweeps.record import RunRecord, RunState
from ..sweeps.retries import RetriedRun, RetriesListing, RetriesTally
from ..sweeps.summary import SummaryBuilder, SweepSummary
from ..util.exceptions import TruerewardError
from .steps import PublishedRun

__all__ = [
    "FAILURE_LIMIT",
    "GRADED",
    "GRADED_WITH_REFUSALS",
    "NOT_PUBLISHED",
    "TABLE_LIMIT",
    "GradeRunReport",
    "GradeRunResult",
    "NotGraded",
    "PublishFailed",
    "RunFailure",
    "RunLine",
]

#: Lines of the per-run table kept at most.
TABLE_LIMIT = 2000
#: Publishing failures named at most (all are counted).
FAILURE_LIMIT = 100
#: Characters of a run's reasons kept in its table line.
WHY_LIMIT = 300
#: Retried or grader-refused runs listed attempt by attempt at most.
RETRY_LINES = 50

#: The names of the flow's final states.
GRADED = "Graded"
GRADED_WITH_REFUSALS = "Graded with refusals"
NOT_PUBLISHED = "Publish failed"

_FROZEN = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class RunLine(BaseModel):
    """One run in the table: its reward or its refusal codes and who is to
    blame, how many attempts it took, the codes of its earlier attempts
    (``earlier``: ``"1: EVIDENCE_UNREADABLE"`` per attempt, so a run that
    healed shows what it healed from), what publishing did, and why it has
    no reward (``why``: the refusals' reasons, or why no grade was read)."""

    model_config = _FROZEN

    run: str
    state: str
    reward: float | None
    codes: list[str]
    blame: list[str]
    attempts: int
    earlier: list[str] = Field(default_factory=list)
    published: str
    why: str = ""

    def cells(self) -> dict[str, str | int | float]:
        """The line as table cells, in the order shown (an absent reward is
        ``—``, never 0)."""
        # What a reader looks for first comes first: a wide table scrolls.
        return {
            "run": self.run,
            "state": self.state,
            "reward": "—" if self.reward is None else self.reward,
            "codes": ", ".join(self.codes) or "—",
            "why": self.why or "—",
            "earlier": "; ".join(self.earlier) or "—",
            "attempts": self.attempts,
            "blame": ", ".join(self.blame) or "—",
            "published": self.published,
        }


class NotGraded(BaseModel):
    """An entry of the sweep (or a listed run) that was not graded, and why:
    it is not a run (a symlink, a name starting with ``.``), or its name
    cannot be a run id."""

    model_config = _FROZEN

    entry: str
    why: str


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
    graded: Count = 0
    regraded: Count = 0
    unchanged: Count = 0
    retried: Count = 0
    healed: Count = 0
    already_graded: Count
    retried_earlier: Count = 0
    distrusted: Count = 0
    failed: Count
    failures: list[RunFailure]
    runs: list[RunLine]
    retry_lines: list[RetriedRun] = Field(default_factory=list)
    retry_tally: RetriesTally = Field(default_factory=RetriesTally)
    not_graded: list[NotGraded] = Field(default_factory=list)

    @property
    def state_name(self) -> str:
        """``Publish failed`` when some grade could not be published,
        ``Graded`` when every run is gradable, ``Graded with refusals``
        otherwise."""
        if self.failed:
            return NOT_PUBLISHED
        return GRADED if self.summary.gradable == self.summary.runs else GRADED_WITH_REFUSALS

    def headline(self) -> str:
        """One line: the grades (runs, gradable, mean reward or its absence,
        written as the reports write it, refused), what this flow run did
        (graded, regraded, retried), what it kept (already graded, retried
        earlier), what was not published."""
        summary = self.summary
        mean = summary.reward.mean
        reward = "no gradable run" if mean is None else f"mean reward {real(mean)}"
        grades = (
            f"{summary.runs} runs: {summary.gradable} gradable ({reward}), "
            f"{summary.ungradable} refused"
        )
        if summary.grader_refused:
            # What grading again can do for them; the other refused runs
            # are the runs' own fault (final).
            grades += f" ({summary.retryable} retryable, {summary.needs_fix} needing a fix)"
        if summary.unreadable:
            grades += f", {summary.unreadable} without a grade"
        now = f"graded now {self.graded}"
        if self.regraded:
            now += f" ({self.regraded} regraded"
            if self.unchanged:
                now += f", {self.unchanged} with nothing changed"
            if self.distrusted:
                now += f", {self.distrusted} over an untrusted grade"
            now += ")"
        now += f", {self.retried} retried"
        if self.retried:
            now += f" ({self.healed} healed)"
        parts = [grades, now]
        if self.already_graded:
            kept = f"{self.already_graded} already graded"
            if self.retried_earlier:
                kept += f" ({self.retried_earlier} retried earlier)"
            parts.append(kept)
        if self.failed:
            parts.append(f"{self.failed} not published")
        if self.not_graded:
            parts.append(f"{len(self.not_graded)} entries not graded (not runs)")
        return "; ".join(parts)


class PublishFailed(TruerewardError):
    """Some grade of the sweep could not be published. ``result`` is the
    :class:`GradeRunResult` all the same (what was published, what failed):
    a failed Prefect flow run carries an exception, so the summary rides on
    it. Read back from a persisted flow-run result, which keeps an
    exception's message alone, it is made from that message (the state
    name and the headline) and ``result`` is ``None``."""

    def __init__(self, result: GradeRunResult | str) -> None:
        if isinstance(result, str):
            super().__init__(result)
            self.result: GradeRunResult | None = None
            return
        super().__init__(f"{result.state_name}: {result.headline()}")
        self.result = result

    def __reduce__(self) -> tuple[type[PublishFailed], tuple[GradeRunResult | str]]:
        return (PublishFailed, (self.result if self.result is not None else str(self),))


def _why(record: RunRecord) -> str:
    """The reasons a run has no reward, in one short line."""
    if record.problem is not None:
        return record.problem[:WHY_LIMIT]
    reasons = dict.fromkeys(item.why for item in record.refusals if item.why)
    return "; ".join(reasons)[:WHY_LIMIT]


class GradeRunReport:
    """Builds a :class:`GradeRunResult` one published run at a time."""

    def __init__(self) -> None:
        self._summary = SummaryBuilder()
        self._retries = RetriesListing(limit=RETRY_LINES)
        self._published: dict[str, int] = {}
        self._already = self._retried_earlier = 0
        self._graded = self._regraded = self._retried = self._distrusted = 0
        self._unchanged = self._healed = 0
        self._failed = 0
        self._failures: list[RunFailure] = []
        self._not_graded: list[NotGraded] = []
        self._notable: list[RunLine] = []
        self._plain: list[RunLine] = []

    def skip(self, entry: str, why: str) -> None:
        """Name an entry that is not graded (see :class:`NotGraded`)."""
        if len(self._not_graded) < FAILURE_LIMIT:
            self._not_graded.append(NotGraded(entry=entry, why=why))

    def add(self, published: PublishedRun) -> None:
        """Count one run."""
        record = published.record
        self._summary.add(record)
        self._retries.add(record)
        self._published[published.decision] = self._published.get(published.decision, 0) + 1
        if published.stored:
            self._already += 1
            self._retried_earlier += record.retried
        elif record.state is not RunState.UNREADABLE:
            self._graded += 1
            self._regraded += published.regraded
            self._retried += published.attempts_now > 1
            self._healed += published.attempts_now > 1 and record.graded
            self._unchanged += published.regraded and record.unchanged
            self._distrusted += published.distrusted is not None
        if published.error is not None:
            self._failed += 1
            if len(self._failures) < FAILURE_LIMIT:
                self._failures.append(RunFailure(run=record.run, why=published.error))
        line = RunLine(
            run=record.run,
            state=(
                "not graded"
                if record.state is RunState.UNREADABLE and published.failed
                else "not published"
                if published.failed
                else record.state.value
            ),
            reward=record.reward,
            codes=list(record.codes),
            blame=list(record.blames),
            attempts=record.attempts,
            earlier=[
                f"{note.attempt}: {', '.join(note.codes) or 'gradable'}" for note in record.history
            ],
            published=published.decision,
            why=_why(record),
        )
        plain = record.state is RunState.GRADABLE and not record.retried
        kept = self._plain if plain else self._notable
        if len(kept) < TABLE_LIMIT:
            kept.append(line)

    def decisions(self) -> dict[str, int]:
        """Runs so far per publish decision (a copy: safe to take from
        another thread while runs are added)."""
        return dict(self._published)

    def result(self) -> GradeRunResult:
        """The result so far."""
        lines = self._notable + self._plain[: max(0, TABLE_LIMIT - len(self._notable))]
        lines.sort(key=lambda line: line.run)
        return GradeRunResult(
            summary=self._summary.result(),
            retry_lines=list(self._retries.runs),
            not_graded=list(self._not_graded),
            retry_tally=dataclasses.replace(self._retries.tally),
            published=dict(sorted(self._published.items())),
            graded=self._graded,
            regraded=self._regraded,
            unchanged=self._unchanged,
            retried=self._retried,
            healed=self._healed,
            already_graded=self._already,
            retried_earlier=self._retried_earlier,
            distrusted=self._distrusted,
            failed=self._failed,
            failures=list(self._failures),
            runs=lines,
        )
