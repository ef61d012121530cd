"""SuiteEvaluator: several evaluators side by side, every report kept.

A suite does not collapse its children into one score. It evaluates every
child (at most ``max_concurrency`` at once, default 4), keeps each report in
``details`` in order, and records the ordered child metrics in its own
metric (``suite``, parameters ``{"metrics": [...]}``), so suites of
different make-up are never summarised together.

Its verdict: ``fail`` when any decided child fails; ``pass`` when at least
one child passes and none fails; ``unspecified`` when no child decided
(every child measurement-only or qualitative). A child that raises makes the
suite raise (the others are cancelled): a suite with a missing child report
would look better than it is.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Generic, TypeVar

from .evaluator import Evaluator, call_evaluator, check_evaluator
from .metric import SUITE, Metric
from .report import EvaluationReport
from .scheduling import check_limit, run_bounded
from .verdict import EvaluationVerdict

__all__ = ["SuiteEvaluator", "suite_verdict"]

T = TypeVar("T")


def suite_verdict(verdicts: Sequence[EvaluationVerdict]) -> EvaluationVerdict:
    """The suite rule: any fail fails; else any pass passes; else unspecified."""
    if EvaluationVerdict.FAIL in verdicts:
        return EvaluationVerdict.FAIL
    if EvaluationVerdict.PASS in verdicts:
        return EvaluationVerdict.PASS
    return EvaluationVerdict.UNSPECIFIED


class SuiteEvaluator(Generic[T]):
    """Evaluates every child and keeps every report; see the module
    docstring. ``evaluators`` must not be empty; ``max_concurrency`` None or
    0 selects 4."""

    def __init__(
        self,
        evaluators: Sequence[Evaluator[T]],
        max_concurrency: int | None = None,
        *,
        namespace: str = "",
    ) -> None:
        self.evaluators: tuple[Evaluator[T], ...] = tuple(evaluators)
        if not self.evaluators:
            raise ValueError("a suite needs at least one evaluator")
        for index, evaluator in enumerate(self.evaluators):
            check_evaluator(evaluator, f"evaluators[{index}]")
        self.max_concurrency = check_limit(max_concurrency)
        Metric(namespace=namespace, name=SUITE)  # validates the namespace now
        self.namespace = namespace

    async def evaluate(self, subject: T) -> EvaluationReport:
        """Evaluate every child; the suite report keeps them all."""
        reports = await run_bounded(
            [
                functools.partial(call_evaluator, evaluator, subject)
                for evaluator in self.evaluators
            ],
            self.max_concurrency,
        )
        return self.aggregate(reports)

    def aggregate(self, reports: Sequence[EvaluationReport]) -> EvaluationReport:
        """The suite report of the children's reports (in order). Pure."""
        if len(reports) != len(self.evaluators):
            raise ValueError(f"expected {len(self.evaluators)} reports, got {len(reports)}")
        metric = Metric(
            namespace=self.namespace,
            name=SUITE,
            parameters={"metrics": [report.metric.model_dump(mode="json") for report in reports]},
        )
        verdict = suite_verdict([report.verdict for report in reports])
        return EvaluationReport(metric=metric, verdict=verdict, details=list(reports))
