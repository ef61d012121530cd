"""The ``figure`` reader: a number, a direction and a threshold.

The evidence is a JSON document of figures or a text file holding one
number; each declared case names its ``figure`` (a JSON Pointer or a key),
a ``direction`` and a ``threshold``, compared as exact decimals. An absent
figure fails its case; a value that is not a finite number is
``EVIDENCE_MALFORMED``. docs/readers.md, "figure", gives the rules.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ..codes import Ungradable
from ..record.cases import CaseResult
from ..record.taskspec import CaseSpec, TaskSpec
from ..util.jsonvalues import MISSING as _MISSING
from ..util.jsonvalues import json_pointer
from ..util.strictjson import StrictJSONError, loads
from .evidence import Evidence
from .outcomes import case_invalid
from .state import InvalidExpectation, checked

__all__ = ["READER", "FigureReader"]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


class _Bar(BaseModel):
    """The shape of a ``figure`` case's options (the module docstring)."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
    figure: str | None = None
    direction: Literal["higher_is_better", "lower_is_better"]
    threshold: float


def _passes(value: float, direction: str, threshold: float) -> bool:
    exact_value, exact_threshold = Decimal(repr(value)), Decimal(repr(threshold))
    if direction == "higher_is_better":
        return exact_value >= exact_threshold
    return exact_value <= exact_threshold


class FigureReader:
    """A measured figure against a threshold."""

    name = "figure"
    default_evidence = "logs/verifier/figures.json"

    def _figures(self, evidence: Evidence) -> Any:
        text = evidence.read_text().strip()
        try:
            return loads(text)
        except StrictJSONError as error:
            raise Ungradable(
                "EVIDENCE_MALFORMED", f"{evidence.describe()}: not JSON nor one number: {error}"
            ) from None

    def _row(self, evidence: Evidence, figures: Any, case: CaseSpec) -> CaseResult:
        try:
            options = checked(_Bar, case.options)
            figure, direction, threshold = options.figure, options.direction, options.threshold
            if not figure and isinstance(figures, dict | list):
                raise InvalidExpectation(
                    f"figure is required: {evidence.describe()} holds several figures "
                    f"(a JSON {'object' if isinstance(figures, dict) else 'array'}), not one number"
                )
        except InvalidExpectation as error:
            return case_invalid(case, f"options: {error}")
        if not figure:
            raw = figures
        elif figure.startswith("/") or figure == "":
            raw = json_pointer(figures, figure)
        else:
            raw = figures.get(figure, _MISSING) if isinstance(figures, dict) else _MISSING
        name = figure or "value"
        if raw is _MISSING:
            return CaseResult(
                id=case.id,
                kind=case.kind,
                verdict="fail",
                why=f"the figure {name} is not in {evidence.describe()}",
            )
        value = _number(raw)
        if value is None:
            raise Ungradable(
                "EVIDENCE_MALFORMED",
                f"{evidence.describe()}: the figure {name} is {raw!r:.80}, not a finite number",
            )
        passed = _passes(value, direction, threshold)
        bar = ">=" if direction == "higher_is_better" else "<="
        return CaseResult(
            id=case.id,
            kind=case.kind,
            verdict="pass" if passed else "fail",
            why="" if passed else f"{name} is {value!r}, the bar is {bar} {threshold!r}",
            measures={name: value},
        )

    def read(
        self, evidence: Evidence, spec: TaskSpec, options: Mapping[str, Any]
    ) -> list[CaseResult]:
        figures = self._figures(evidence)
        return [self._row(evidence, figures, case) for case in spec.cases]


READER = FigureReader()
