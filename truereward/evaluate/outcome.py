"""CaseOutcome: what an experiment got for one case."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .report import EvaluationReport
from .verdict import EvaluationVerdict

__all__ = ["CaseStatus", "EvaluationOutcome"]


class CaseStatus(StrEnum):
    """``evaluated``: the evaluator gave a report. ``error``: it raised (or
    gave something that is not a report). ``not_evaluated``: a ``fail_fast``
    run stopped before the case started, or cancelled it while it ran."""

    EVALUATED = "evaluated"
    ERROR = "error"
    NOT_EVALUATED = "not_evaluated"


@dataclass(frozen=True, slots=True)
class EvaluationOutcome:
    """One case of an experiment: its id and metadata (a copy), and either a
    ``report`` (status ``evaluated``) or an ``error`` (status ``error`` or
    ``not_evaluated``), never both."""

    id: str
    status: CaseStatus
    report: EvaluationReport | None = None
    error: BaseException | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if (self.status is CaseStatus.EVALUATED) != (self.report is not None):
            raise ValueError("an evaluated case has a report, and only an evaluated case has one")
        if (self.status is CaseStatus.EVALUATED) == (self.error is not None):
            raise ValueError("a case that was not evaluated has an error, an evaluated one none")

    @property
    def verdict(self) -> EvaluationVerdict | None:
        """The report's verdict; ``None`` when there is no report (an error
        is not a verdict, not even ``unspecified``)."""
        return None if self.report is None else self.report.verdict

    def as_json(self) -> dict[str, Any]:
        """A JSON-ready dict: ``id``, ``status``, ``metadata``, and
        ``report`` or ``error`` (the exception's type and message)."""
        out: dict[str, Any] = {"id": self.id, "status": self.status.value}
        if self.metadata:
            out["metadata"] = self.metadata
        if self.report is not None:
            out["report"] = self.report.model_dump(mode="json")
        if self.error is not None:
            out["error"] = f"{type(self.error).__name__}: {self.error}"
        return out
