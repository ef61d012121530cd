"""What a grade-run flow run returns: :class:`GradeRunOutcome`, the headline
and its counts, small and JSON-native, so Prefect persists it as the flow
run's result and a caller of ``run_deployment`` reads it back. Never a line
per run; ``detail`` holds the whole
:class:`~truereward.grading.report.GradeRunResult` in the process that ran
the flow only. docs/prefect.md, "The flow run's result, for a caller".
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ..sweeps.summary import SweepSummary
from .report import GradeRunResult

__all__ = ["GradeRunOutcome"]

Count = Annotated[int, Field(ge=0)]


class GradeRunOutcome(BaseModel):
    """The outcome of one grade-run flow run (module docstring). ``state``
    is the flow run's state name (``Graded``, ``Graded with refusals``,
    ``Publish failed``); ``sweep`` the sweep's label (None for a list of
    runs); ``target`` where grades were published (None: in each run's own
    directory); ``report`` where the HTML report was written (None when it
    could not be); the counts are :class:`GradeRunResult`'s, with
    ``not_graded`` the number of entries that were not runs."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    state: str
    headline: str
    sweep: str | None
    target: str | None
    report: str | None
    summary: SweepSummary
    published: dict[str, int]
    graded: Count
    regraded: Count
    retried: Count
    already_graded: Count
    retried_earlier: Count
    distrusted: Count
    failed: Count
    not_graded: Count

    _detail: GradeRunResult | None = PrivateAttr(default=None)

    @property
    def detail(self) -> GradeRunResult | None:
        """The whole result, in the process that graded; ``None`` when this
        outcome was read back from a persisted result."""
        return self._detail

    @classmethod
    def of(
        cls,
        result: GradeRunResult,
        *,
        sweep: str | None,
        target: str | None,
        report: str | None,
    ) -> GradeRunOutcome:
        """The outcome of ``result``, which it keeps as :attr:`detail`."""
        outcome = cls(
            state=result.state_name,
            headline=result.headline(),
            sweep=sweep,
            target=target,
            report=report,
            summary=result.summary,
            published=result.published,
            graded=result.graded,
            regraded=result.regraded,
            retried=result.retried,
            already_graded=result.already_graded,
            retried_earlier=result.retried_earlier,
            distrusted=result.distrusted,
            failed=result.failed,
            not_graded=len(result.not_graded),
        )
        outcome._detail = result
        return outcome
