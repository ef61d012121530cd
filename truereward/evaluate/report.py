"""EvaluationReport: the result of one evaluation.

A report names its :class:`~truereward.evaluate.Metric` and carries any of
three independent outcomes: a ``verdict`` (pass, fail or unspecified), a
normalised ``score`` in [0, 1] and a raw ``measurement`` (in the metric's
unit). None of them implies another: a measurement-only evaluation does not
invent a threshold, a qualitative one does not invent a score. ``feedback``
is free text, ``metadata`` strict JSON values, ``details`` the reports of
sub-evaluations (a composite's or a suite's children), owned by this report.

Rules, checked on construction:

- at least one outcome: a decided verdict, a score, a measurement, feedback
  that is not blank, or at least one detail. Metadata alone is not an
  outcome, nor is feedback of only whitespace;
- ``measurement`` is a finite float (no NaN, no infinity); ``score`` a
  :class:`~truereward.evaluate.Score`;
- reports nest at most 64 deep (a report without details has depth 1), and
  ``metadata`` nests JSON values at most 64 deep;
- strict JSON both ways: :meth:`EvaluationReport.to_json` writes canonical bytes
  (unset fields left out), :meth:`EvaluationReport.from_json` refuses NaN, infinities
  and duplicate keys and gives back an equal report.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    model_validator,
)

from ..util.frozen import is_absent, is_empty, thaw
from ..util.strictjson import canonical_bytes, loads
from .jsondepth import MAX_DEPTH, check_json_depth
from .metric import Metric
from .score import Score
from .verdict import EvaluationVerdict

__all__ = ["MAX_DEPTH", "EvaluationReport"]


def _metadata(value: dict[str, JsonValue]) -> dict[str, JsonValue]:
    check_json_depth(value, "metadata")
    return value


#: An outcome in JSON Schema terms (what the model checks in Python).
_OUTCOME_RULE: dict[str, Any] = {
    "anyOf": [
        {"required": ["verdict"], "properties": {"verdict": {"enum": ["pass", "fail"]}}},
        {"required": ["score"], "properties": {"score": {"type": "number"}}},
        {"required": ["measurement"], "properties": {"measurement": {"type": "number"}}},
        {"required": ["feedback"], "properties": {"feedback": {"pattern": "\\S"}}},
        {"required": ["details"], "properties": {"details": {"minItems": 1}}},
    ]
}


def _unspecified(verdict: EvaluationVerdict) -> bool:
    return verdict is EvaluationVerdict.UNSPECIFIED


class EvaluationReport(BaseModel):
    """One evaluation result; see the module docstring for its rules.

    Construction raises ``pydantic.ValidationError`` naming the field.
    ``verdict`` accepts a :class:`EvaluationVerdict` or its string; ``score`` a
    :class:`Score`, an int or a float in [0, 1]; ``measurement`` an int or a
    float. Reports are frozen; ``metadata`` is copied on construction.
    """

    model_config = ConfigDict(
        frozen=True,
        strict=True,
        extra="forbid",
        allow_inf_nan=False,
        json_schema_extra=_OUTCOME_RULE,
    )

    # Unset fields are absent from the JSON, as the seed's `omitzero`: an
    # unspecified verdict is not written as a value to be read back.
    metric: Metric
    verdict: Annotated[EvaluationVerdict, Field(strict=False, exclude_if=_unspecified)] = (
        EvaluationVerdict.UNSPECIFIED
    )
    score: Annotated[Score | None, Field(exclude_if=is_absent)] = None
    measurement: Annotated[float | None, Field(exclude_if=is_absent)] = None
    feedback: Annotated[str, Field(exclude_if=is_empty)] = ""
    metadata: Annotated[
        dict[str, JsonValue], Field(exclude_if=is_empty), AfterValidator(_metadata)
    ] = Field(default_factory=dict)
    details: Annotated[list[EvaluationReport], Field(exclude_if=is_empty)] = Field(
        default_factory=list
    )

    @model_validator(mode="after")
    def _has_an_outcome_and_bounded_depth(self) -> EvaluationReport:
        if not self.has_outcome:
            raise ValueError(
                "a report needs at least one outcome: a pass or fail verdict, a score, a "
                "measurement, feedback that is not blank, or details (metadata alone is not one)"
            )
        if self.depth > MAX_DEPTH:
            raise ValueError(f"details: reports nest at most {MAX_DEPTH} deep")
        return self

    @property
    def has_outcome(self) -> bool:
        """Whether the report says anything: a decided verdict, a score, a
        measurement, non-blank feedback or details."""
        return (
            self.verdict.decided
            or self.score is not None
            or self.measurement is not None
            or bool(self.feedback.strip())
            or bool(self.details)
        )

    @property
    def depth(self) -> int:
        """1 for a report without details, else 1 + the deepest detail."""
        deepest = 0
        stack: list[tuple[EvaluationReport, int]] = [(self, 1)]
        while stack:
            report, level = stack.pop()
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in report.details)
        return deepest

    def walk(self) -> Iterator[EvaluationReport]:
        """This report and every detail below it, depth first, in order."""
        stack: list[EvaluationReport] = [self]
        while stack:
            report = stack.pop()
            yield report
            stack.extend(reversed(report.details))

    def to_json(self) -> bytes:
        """Canonical strict JSON bytes (sorted keys, compact, final newline);
        unset fields are left out."""
        return canonical_bytes(self.model_dump(mode="json"), indent=None)

    @classmethod
    def from_json(cls, data: str | bytes) -> EvaluationReport:
        """The report in ``data``: strict JSON (``StrictJSONError`` on NaN,
        infinities, duplicate keys, bad UTF-8) holding a valid report
        (``pydantic.ValidationError`` otherwise)."""
        return cls.model_validate(loads(data))

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> EvaluationReport:
        """The report whose JSON form is ``data``: a plain or frozen object
        (a row's ``report`` holds it frozen: tuples and
        :class:`~truereward.util.frozen.FrozenDict`). ``pydantic.ValidationError``
        naming the field when it is not a valid report."""
        return cls.model_validate(thaw(data))
