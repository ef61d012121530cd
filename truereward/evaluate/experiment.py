"""Experiment: evaluate every case of a dataset, with bounded concurrency.

``Experiment(dataset=..., evaluator=..., max_concurrency=4,
error_policy="collect")`` is an immutable plan. :meth:`Experiment.run` is
**synchronous** (it runs the plan on a fresh event loop and returns an
:class:`~truereward.evaluate.ExperimentReport`); :meth:`Experiment.run_async`
is the coroutine it wraps, for callers already in an event loop.

- **Concurrency**: at most ``max_concurrency`` cases (default 4) are
  evaluated at once, started in dataset order.
- **Errors** are kept apart from verdicts: an evaluator that raises (or
  returns something that is not a EvaluationReport) gives the case status ``error``,
  never a failing or unjudged report.
- ``collect`` (default): every case is evaluated; errors are recorded.
- ``fail_fast``: at the first error no further case starts, the running ones
  are cancelled, and every case without a report other than the first error
  is marked ``not_evaluated`` (an error of type
  :class:`~truereward.evaluate.NotEvaluated` naming the case that stopped
  the run). The report is returned, not raised: it says what happened to
  every case; :attr:`ExperimentReport.stopped_by` names the case.

Synchronous evaluators run in worker threads and cannot be interrupted: when
a ``fail_fast`` run cancels one, it runs to its end and its answer is
dropped; :meth:`run` returns once such threads have finished.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import Generic, TypeVar

from ..util.exceptions import TruerewardError
from .comparison import ExperimentComparison, compare_summaries
from .dataset import Dataset, EvaluationCase
from .errors import NotEvaluated
from .evaluator import Evaluator, call_evaluator, check_evaluator, require_no_running_loop
from .outcome import CaseStatus, EvaluationOutcome
from .scheduling import check_limit, run_bounded
from .summary import ExperimentSummary, summarize

__all__ = ["ErrorPolicy", "Experiment", "ExperimentReport"]

T = TypeVar("T")


class ErrorPolicy(StrEnum):
    """What an experiment does when a case's evaluation raises."""

    COLLECT = "collect"
    FAIL_FAST = "fail_fast"


class _Stop(TruerewardError):
    """A fail_fast case failed: stop the run (internal)."""


class ExperimentReport:
    """The outcome of every case, in dataset order, and their summary."""

    __slots__ = ("_cases", "_stopped_by", "_summary")

    def __init__(self, cases: tuple[EvaluationOutcome, ...], stopped_by: str | None = None) -> None:
        self._cases = cases
        self._stopped_by = stopped_by
        self._summary: ExperimentSummary | None = None

    @property
    def cases(self) -> tuple[EvaluationOutcome, ...]:
        """Every case's outcome, in dataset order."""
        return self._cases

    @property
    def stopped_by(self) -> str | None:
        """The id of the case whose error stopped a ``fail_fast`` run, or
        ``None`` when every case was attempted."""
        return self._stopped_by

    @property
    def summary(self) -> ExperimentSummary:
        """Counts and per-metric distributions (computed once)."""
        if self._summary is None:
            self._summary = summarize(self._cases)
        return self._summary

    def compare(self, candidate: ExperimentReport) -> ExperimentComparison:
        """``candidate`` against this report (the baseline): candidate minus
        baseline, metrics paired by identity."""
        if not isinstance(candidate, ExperimentReport):
            raise TypeError(f"compare() takes an ExperimentReport, got {type(candidate).__name__}")
        return compare_summaries(self.summary, candidate.summary)

    def __repr__(self) -> str:
        summary = self.summary
        return (
            f"ExperimentReport(total={summary.total}, passed={summary.passed}, "
            f"failed={summary.failed}, unjudged={summary.unjudged}, errors={summary.errors})"
        )


class Experiment(Generic[T]):
    """A plan to evaluate ``dataset`` with ``evaluator``; see the module
    docstring. ``max_concurrency`` None or 0 selects 4."""

    __slots__ = ("dataset", "error_policy", "evaluator", "max_concurrency")

    def __init__(
        self,
        dataset: Dataset[T],
        evaluator: Evaluator[T],
        max_concurrency: int | None = None,
        error_policy: ErrorPolicy | str = ErrorPolicy.COLLECT,
    ) -> None:
        if not isinstance(dataset, Dataset):
            raise TypeError(f"dataset is a Dataset, got {type(dataset).__name__}")
        check_evaluator(evaluator)
        self.dataset = dataset
        self.evaluator = evaluator
        self.max_concurrency = check_limit(max_concurrency)
        self.error_policy = ErrorPolicy(error_policy)

    def run(self) -> ExperimentReport:
        """Run the experiment to its end on a fresh event loop (synchronous;
        ``RuntimeError`` when called inside a running loop: await
        :meth:`run_async` there)."""
        require_no_running_loop("Experiment.run()", "await experiment.run_async()")
        return asyncio.run(self.run_async())

    async def run_async(self) -> ExperimentReport:
        """Run the experiment (coroutine). Cancelling it cancels every
        running case."""
        cases = self.dataset.cases
        outcomes: list[EvaluationOutcome | None] = [None] * len(cases)
        fail_fast = self.error_policy is ErrorPolicy.FAIL_FAST
        stopped_by: list[str] = []

        def job(position: int, case: EvaluationCase[T]) -> Callable[[], Awaitable[None]]:
            async def evaluate() -> None:
                try:
                    report = await call_evaluator(self.evaluator, case.subject)
                except Exception as error:
                    outcomes[position] = EvaluationOutcome(
                        id=case.id, status=CaseStatus.ERROR, error=error, metadata=case.metadata
                    )
                    if fail_fast:
                        stopped_by.append(case.id)
                        raise _Stop from error
                    return
                outcomes[position] = EvaluationOutcome(
                    id=case.id, status=CaseStatus.EVALUATED, report=report, metadata=case.metadata
                )

            return evaluate

        # A fail_fast stop is how the run ends early, not an error of the run.
        with contextlib.suppress(_Stop):
            await run_bounded(
                [job(position, case) for position, case in enumerate(cases)],
                self.max_concurrency,
            )
        first = stopped_by[0] if stopped_by else None
        final = tuple(
            outcome
            if outcome is not None
            else EvaluationOutcome(
                id=case.id,
                status=CaseStatus.NOT_EVALUATED,
                error=NotEvaluated(f"not evaluated: the run stopped at case {first!r}'s error"),
                metadata=case.metadata,
            )
            for outcome, case in zip(outcomes, cases, strict=True)
        )
        return ExperimentReport(final, stopped_by=first)
