"""Retried runs and runs refused for the grader's reasons: what ops look at.

:func:`retried_runs` streams a sweep's records and yields a
:class:`RetriedRun`, every attempt oldest first, for each run retried (over
every flow run) or standing refused for the grader's reasons, filtered by
:class:`RetryFilter` (``code``, ``blame``, ``still_refused``).
:class:`RetriesTally` counts as it goes for a footer, and
:class:`RetriesListing` takes records one at a time (keeping the first
lines and the tally); memory holds one record. docs/sweeps.md, "Retries".
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from .record import RefusalNote, RunRecord, RunState
from .summary import keep_first

__all__ = [
    "AttemptLine",
    "RetriedRun",
    "RetriesListing",
    "RetriesTally",
    "RetryFilter",
    "retried_runs",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class AttemptLine(BaseModel):
    """One attempt at grading a run: ``codes``, ``blame`` (distinct, in
    refusal order) and ``why`` (the reasons, joined) of its refusals; none
    when it was gradable."""

    model_config = _FROZEN

    attempt: int
    gradable: bool
    codes: list[str]
    blame: list[str]
    why: str

    @classmethod
    def of(cls, attempt: int, gradable: bool, refusals: Iterable[RefusalNote]) -> AttemptLine:
        """The line of one attempt's refusals."""
        items = list(refusals)
        return cls(
            attempt=attempt,
            gradable=gradable,
            codes=list(dict.fromkeys(item.code for item in items)),
            blame=list(dict.fromkeys(item.blame for item in items)),
            why="; ".join(dict.fromkeys(item.why for item in items if item.why)),
        )

    def text(self) -> str:
        """``2: EVIDENCE_UNREADABLE (grader): the store timed out``, or
        ``3: gradable``."""
        if self.gradable:
            return f"{self.attempt}: gradable"
        why = f": {self.why}" if self.why else ""
        return f"{self.attempt}: {', '.join(self.codes)} ({', '.join(self.blame)}){why}"


class RetriedRun(BaseModel):
    """A run that was retried or stands refused for the grader's reasons:
    its final state and reward (``None`` when refused, never 0), whether it
    ``still_refused`` (for the grader's reasons), and every attempt, the
    standing grade last."""

    model_config = _FROZEN

    run: str
    state: str
    gradable: bool
    reward: float | None
    still_refused: bool
    attempts: list[AttemptLine]
    outlook: str = "gradable"
    fix: str | None = None
    unchanged: bool = False


@dataclass(frozen=True)
class RetryFilter:
    """Which runs to list: ``code`` and ``blame`` match any attempt's
    refusals; ``still_refused`` keeps only the runs that stand refused for
    the grader's reasons."""

    code: str | None = None
    blame: str | None = None
    still_refused: bool = False

    def keeps(self, run: RetriedRun) -> bool:
        """Whether ``run`` passes the filter."""
        if self.still_refused and not run.still_refused:
            return False
        if self.code is not None and not any(self.code in item.codes for item in run.attempts):
            return False
        return self.blame is None or any(self.blame in item.blame for item in run.attempts)


@dataclass
class RetriesTally:
    """Counts over the runs read so far: ``runs`` read, ``unreadable`` (no
    grade to look at), ``retried`` and ``healed`` (retried, gradable in the
    end), ``still_refused`` (refused for the grader's reasons), of them
    ``retryable`` and ``needs_fix``, of those ``unchanged`` (graded again
    with nothing changed), ``listed`` (passed the filter), and the first
    listed still-refused runs that are retryable (``examples``)."""

    runs: int = 0
    unreadable: int = 0
    retried: int = 0
    healed: int = 0
    still_refused: int = 0
    retryable: int = 0
    needs_fix: int = 0
    unchanged: int = 0
    listed: int = 0
    listed_still_refused: int = 0
    examples: list[str] = field(default_factory=list)

    #: How many still-refused runs :attr:`examples` names at most.
    EXAMPLES = 20


def _line(record: RunRecord) -> RetriedRun:
    history = [
        AttemptLine.of(note.attempt, note.gradable, note.refusals) for note in record.history
    ]
    fix = None
    if record.needs_fix:
        from ..record.refusal import outlook, what_to_change

        blocking = [
            item.code
            for item in record.refusals
            if outlook([(item.code, item.blame)]) == "needs-fix"
        ]
        fix = "; ".join(
            f"{code}: change {what_to_change(code)}" for code in dict.fromkeys(blocking)
        )
    return RetriedRun(
        run=record.run,
        state=record.state.value,
        gradable=record.graded,
        reward=record.reward,
        still_refused=record.grader_refused,
        attempts=[*history, AttemptLine.of(record.attempts, record.graded, record.refusals)],
        outlook=record.outlook,
        fix=fix,
        unchanged=record.unchanged,
    )


def retried_runs(
    records: Iterable[RunRecord], tally: RetriesTally, keep: RetryFilter = RetryFilter()
) -> Iterator[RetriedRun]:
    """The retried and grader-refused runs among ``records`` that ``keep``
    passes, in the order read; ``tally`` counts every run as it goes."""
    for record in records:
        tally.runs += 1
        if record.state is RunState.UNREADABLE:
            tally.unreadable += 1
            continue
        if not (record.retried or record.grader_refused):
            continue
        tally.retried += record.retried
        tally.healed += record.retried and record.graded
        tally.still_refused += record.grader_refused
        tally.retryable += record.retryable
        tally.needs_fix += record.needs_fix
        tally.unchanged += record.unchanged
        line = _line(record)
        if not keep.keeps(line):
            continue
        tally.listed += 1
        if line.still_refused and line.outlook == "retryable":
            tally.listed_still_refused += 1
            keep_first(tally.examples, line.run, tally.EXAMPLES)
        yield line


@dataclass
class RetriesListing:
    """:func:`retried_runs` one record at a time: :meth:`add` counts the
    record in :attr:`tally` and keeps its line in :attr:`runs` while fewer
    than ``limit`` are kept (``limit`` 0 keeps none). Memory is bounded by
    ``limit``, whatever the number of records; :attr:`more` is how many
    listed lines were not kept."""

    limit: int = 50
    keep: RetryFilter = field(default_factory=RetryFilter)
    tally: RetriesTally = field(default_factory=RetriesTally)
    runs: list[RetriedRun] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.limit < 0:
            raise ValueError(f"limit is at least 0, got {self.limit}")

    def add(self, record: RunRecord) -> None:
        """Count one record, and keep its line if it is listed and there is room."""
        for line in retried_runs((record,), self.tally, self.keep):
            # The lines of the smallest run ids, whatever order runs arrive in.
            keep_first(self.runs, line, self.limit)

    @property
    def more(self) -> int:
        """Listed lines not kept (past ``limit``)."""
        return self.tally.listed - len(self.runs)
