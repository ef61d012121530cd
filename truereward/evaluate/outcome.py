"""CaseOutcome: what an experiment got for one case."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any

from pydantic import Field, PlainSerializer, PlainValidator

from ..util.dumped import Dumped
from ..util.frozen import is_absent, is_empty
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


def _described(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


@dataclass(frozen=True, slots=True)
class EvaluationOutcome(Dumped):
    """One case of an experiment: its id and metadata (a copy), and either a
    ``report`` (status ``evaluated``) or an ``error`` (status ``error`` or
    ``not_evaluated``), never both. Its JSON (:meth:`to_json`) has ``id``,
    ``status``, ``metadata`` unless empty, and ``report`` or ``error`` (the
    exception's type and message)."""

    id: str
    status: CaseStatus
    report: Annotated[EvaluationReport | None, Field(exclude_if=is_absent)] = None
    error: Annotated[
        BaseException | None,
        PlainValidator(lambda error: error),  # an exception has no schema; never validated
        PlainSerializer(_described),
        Field(exclude_if=is_absent),
    ] = None
    metadata: Annotated[dict[str, Any], Field(exclude_if=is_empty)] = field(default_factory=dict)

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
        """Deprecated: :meth:`to_json` (one name for a JSON form)."""
        warnings.warn("as_json() is deprecated; use to_json()", DeprecationWarning, stacklevel=2)
        return self.to_json()
