"""The summary of one sweep: rewards, refusals, attempts.

:func:`summarize` is a pure function over records (or grade documents), in
one pass, and :class:`SummaryBuilder` the same one record at a time; the
reward distribution is over gradable runs only (never a 0 for a refused
run), and memory does not grow with the number of runs. docs/sweeps.md,
"Summary", gives every field.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..evaluate.distribution import Distribution, ValueCounts
from .record import RunRecord, RunState

if TYPE_CHECKING:
    from ..grade.document import GradeDocument

__all__ = [
    "EXAMPLES",
    "AttemptCount",
    "AttemptsSummary",
    "BlameCount",
    "RefusalCount",
    "RewardBucket",
    "SummaryBuilder",
    "SweepSummary",
    "UnreadableRun",
    "as_record",
    "reward_histogram",
    "summarize",
]

#: How many unreadable runs a summary names (it counts them all).
EXAMPLES = 20

#: The configuration of the sweep result models (frozen, strict, no extra field, finite floats).
FROZEN = ConfigDict(frozen=True, strict=True, extra="forbid", allow_inf_nan=False)
Count = Annotated[int, Field(ge=0)]


class RewardBucket(BaseModel):
    """``runs`` gradable runs with a reward from ``low`` to ``high``: the
    bucket holds ``low`` and excludes ``high``, but the last bucket holds
    both; a bucket of one value has ``low == high``."""

    model_config = FROZEN

    low: float
    high: float
    runs: Count


#: Buckets of a histogram of rewards that are not all 0 or 1.
BUCKETS = 10


def reward_histogram(counts: dict[float, int]) -> list[RewardBucket]:
    """The histogram of rewards tallied as ``counts`` (value: runs): one
    bucket for 0 and one for 1 when every reward is one of them (both
    shown, a count of 0 included), else :data:`BUCKETS` buckets of equal
    width from 0 to 1 when every reward lies there, from the least to the
    greatest reward otherwise (one bucket when they are all equal). Pure."""
    if not counts:
        return []
    if set(counts) <= {0.0, 1.0}:
        return [
            RewardBucket(low=value, high=value, runs=counts.get(value, 0)) for value in (0.0, 1.0)
        ]
    low, high = min(counts), max(counts)
    if low >= 0.0 and high <= 1.0:
        low, high = 0.0, 1.0
    if low == high:
        return [RewardBucket(low=low, high=high, runs=sum(counts.values()))]
    # Each edge weighs both ends, so that nothing overflows: weighted-sum/1
    # rewards may be any finite numbers, and high - low of -1e308 and 1e308
    # is inf. Edges rounded, so that 0.3 falls in [0.3, 0.4) and not, by a
    # float's last bit, in [0.2, 0.3); never below the edge before.
    edges = [low]
    for index in range(1, BUCKETS):
        share = index / BUCKETS
        edges.append(max(edges[-1], round(low * (1 - share) + high * share, 12)))
    edges.append(high)
    runs = [0] * BUCKETS
    for value, count in counts.items():
        runs[min(bisect.bisect_right(edges, value) - 1, BUCKETS - 1)] += count
    return [
        RewardBucket(low=edges[index], high=edges[index + 1], runs=count)
        for index, count in enumerate(runs)
    ]


class RefusalCount(BaseModel):
    """One refusal code with its blame: ``refusals`` in all, over ``runs``
    runs (a run refused twice under one code counts once in ``runs``)."""

    model_config = FROZEN

    code: str
    blame: str
    refusals: Count
    runs: Count


class BlameCount(BaseModel):
    """Refusals and runs per blame (``run`` or ``grader``). A run refused
    for both reasons counts under both."""

    model_config = FROZEN

    blame: str
    refusals: Count
    runs: Count


class AttemptCount(BaseModel):
    """``runs`` runs took ``attempts`` attempts."""

    model_config = FROZEN

    attempts: Annotated[int, Field(ge=1)]
    runs: Count


class AttemptsSummary(BaseModel):
    """Attempts over the readable runs: ``total`` attempts, the histogram
    (``by_count``, ascending), ``retried`` runs (more than one attempt) and,
    of those, ``recovered`` (gradable in the end)."""

    model_config = FROZEN

    total: Count
    retried: Count
    recovered: Count
    by_count: list[AttemptCount]


class UnreadableRun(BaseModel):
    """A run without a readable grade, and why."""

    model_config = FROZEN

    run: str
    why: str


class SweepSummary(BaseModel):
    """The summary of one sweep (see the module docstring)."""

    model_config = FROZEN

    runs: Count
    gradable: Count
    ungradable: Count
    unreadable: Count
    reward: Distribution
    reward_histogram: list[RewardBucket] = Field(default_factory=list)
    schemes: dict[str, int]
    refusals: list[RefusalCount]
    blame: list[BlameCount]
    attempts: AttemptsSummary
    unreadable_runs: list[UnreadableRun]
    grader_refused: Count = 0
    retried_runs: list[str] = Field(default_factory=list)
    grader_refused_runs: list[str] = Field(default_factory=list)
    retryable: Count = 0
    needs_fix: Count = 0
    unchanged: Count = 0
    needs_fix_runs: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _counts_add_up(self) -> SweepSummary:
        if self.runs != self.gradable + self.ungradable + self.unreadable:
            raise ValueError("runs must equal gradable + ungradable + unreadable")
        if self.reward.count != self.gradable:
            raise ValueError("the reward distribution counts the gradable runs")
        histogram = self.reward_histogram
        if histogram and sum(item.runs for item in histogram) != self.gradable:
            raise ValueError("the reward histogram counts the gradable runs")
        if self.grader_refused > self.ungradable:
            raise ValueError("grader-refused runs are ungradable runs")
        if self.retryable + self.needs_fix != self.grader_refused:
            raise ValueError("grader-refused runs are retryable or need a fix")
        if self.unchanged > self.needs_fix:
            raise ValueError("runs graded again with nothing changed need a fix")
        return self


class _Run(Protocol):
    """Anything with a run id (an unreadable run, a retried run's line)."""

    @property
    def run(self) -> str: ...


T = TypeVar("T", bound=str | _Run)


def _run_of(item: str | _Run) -> str:
    return item if isinstance(item, str) else item.run


def keep_first(kept: list[T], item: T, limit: int = EXAMPLES) -> None:
    """Keep in ``kept`` the ``limit`` items (strings or anything with a
    ``run``) of the smallest run ids seen, in id order: the same runs
    whatever order they arrive in (a sweep read in name order keeps its
    first ones; a flow adds runs as they finish). ``limit`` 0 keeps none."""
    if kept and len(kept) >= limit and _run_of(item) >= _run_of(kept[-1]):
        return
    bisect.insort(kept, item, key=_run_of)
    del kept[limit:]


def as_record(item: RunRecord | GradeDocument, position: int = 0) -> RunRecord:
    """A record from a record or a :class:`~truereward.GradeDocument` (run
    id: the document's, else ``#<position>``)."""
    if isinstance(item, RunRecord):
        return item
    from ..grade.document import GradeDocument

    if isinstance(item, GradeDocument):
        has_id = item.run is not None and item.run.id is not None
        return RunRecord.from_document(item, None if has_id else f"#{position}", with_cases=False)
    raise TypeError(f"a sweep holds RunRecords or GradeDocuments, got {type(item).__name__}")


K = TypeVar("K")


def _tally(tallies: dict[K, list[int]], counts: Counter[K]) -> None:
    """Add one run's refusals per key (``counts``) to ``tallies``, each
    ``[refusals, runs]``."""
    for key, count in counts.items():
        tally = tallies.setdefault(key, [0, 0])
        tally[0] += count
        tally[1] += 1


class SummaryBuilder:
    """Adds runs one at a time; :meth:`result` is the summary so far."""

    def __init__(self) -> None:
        self._runs = self._ungradable = self._unreadable = 0
        self._rewards = ValueCounts()
        self._schemes: Counter[str] = Counter()
        self._codes: dict[tuple[str, str], list[int]] = {}
        self._blame: dict[str, list[int]] = {}
        self._attempts: Counter[int] = Counter()
        self._retried = self._recovered = self._grader_refused = 0
        self._examples: list[UnreadableRun] = []
        self._retried_runs: list[str] = []
        self._grader_refused_runs: list[str] = []
        self._retryable = self._needs_fix = self._unchanged = 0
        self._needs_fix_runs: list[str] = []

    def add(self, item: RunRecord | GradeDocument) -> None:
        """Count one run."""
        record = as_record(item, self._runs)
        self._runs += 1
        if record.state is RunState.UNREADABLE:
            self._unreadable += 1
            keep_first(self._examples, UnreadableRun(run=record.run, why=record.problem or ""))
            return
        if record.reward is not None:
            self._rewards.add(record.reward)
        else:
            self._ungradable += 1
        if record.scheme is not None:
            self._schemes[record.scheme] += 1
        if record.refusals:  # most runs have none: no Counter to build for them
            _tally(self._codes, Counter((code, blame) for code, blame, _ in record.refusals))
            _tally(self._blame, Counter(blame for _, blame, _ in record.refusals))
        self._attempts[record.attempts] += 1
        if record.retried:
            self._retried += 1
            self._recovered += record.graded
            keep_first(self._retried_runs, record.run)
        if record.grader_refused:
            self._grader_refused += 1
            keep_first(self._grader_refused_runs, record.run)
            if record.needs_fix:
                self._needs_fix += 1
                self._unchanged += record.unchanged
                keep_first(self._needs_fix_runs, record.run)
            else:
                self._retryable += 1

    def result(self) -> SweepSummary:
        """The summary of the runs added so far."""
        refusals = [
            RefusalCount(code=code, blame=blame, refusals=tally[0], runs=tally[1])
            for (code, blame), tally in self._codes.items()
        ]
        refusals.sort(key=lambda item: (-item.runs, -item.refusals, item.code, item.blame))
        return SweepSummary(
            runs=self._runs,
            gradable=len(self._rewards),
            ungradable=self._ungradable,
            unreadable=self._unreadable,
            reward=self._rewards.distribution(),
            reward_histogram=reward_histogram(self._rewards.counts()),
            schemes=dict(sorted(self._schemes.items())),
            refusals=refusals,
            blame=[
                BlameCount(blame=blame, refusals=tally[0], runs=tally[1])
                for blame, tally in sorted(self._blame.items())
            ],
            attempts=AttemptsSummary(
                total=sum(count * runs for count, runs in self._attempts.items()),
                retried=self._retried,
                recovered=self._recovered,
                by_count=[
                    AttemptCount(attempts=count, runs=runs)
                    for count, runs in sorted(self._attempts.items())
                ],
            ),
            unreadable_runs=list(self._examples),
            grader_refused=self._grader_refused,
            retried_runs=list(self._retried_runs),
            grader_refused_runs=list(self._grader_refused_runs),
            retryable=self._retryable,
            needs_fix=self._needs_fix,
            unchanged=self._unchanged,
            needs_fix_runs=list(self._needs_fix_runs),
        )


def summarize(runs: Iterable[RunRecord | GradeDocument]) -> SweepSummary:
    """The summary of a sweep's runs, in one streaming pass (see the module
    docstring). Records come from :meth:`SweepSource.records
    <truereward.sweeps.SweepSource.records>`; grade documents are accepted
    as they are."""
    builder = SummaryBuilder()
    for item in runs:
        builder.add(item)
    return builder.result()
