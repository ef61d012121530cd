"""The ``figure`` reader: a measured number, a direction and a threshold.

The evidence is a JSON document of figures (``{"latency_ms": {"p50": 212.5},
"throughput": 950}``) or a text file holding one number. Each declared case
names its figure and its bar in its options:

.. code-block:: json

    {"id": "p50-under-250ms", "kind": "fail_to_pass", "options": {
        "figure": "/latency_ms/p50", "direction": "lower_is_better",
        "threshold": 250}}

- ``figure``: a JSON Pointer (``/a/b``) or a top-level key (``throughput``)
  into the evidence; absent (or ``""``, the whole document) for a text file
  holding one number. Absent against evidence that holds several figures (a
  JSON object or array) is an invalid option of that case;
- ``direction``: ``higher_is_better`` (passes at ``value >= threshold``) or
  ``lower_is_better`` (passes at ``value <= threshold``);
- ``threshold``: a finite number. Values and thresholds are compared as
  exact decimals of their shortest representation, so ``0.1 + 0.2`` written
  as ``0.30000000000000004`` does not pass ``<= 0.3``, and ``0.3`` does.

The figure goes into the row's ``measures``. A figure that is absent from
the evidence fails its case (the run did not measure what the task asks).
A value that is not a finite number (a string, null, NaN) makes the evidence
``EVIDENCE_MALFORMED``; evidence that is not JSON (or not one number) too.
Options that are not valid (a missing ``figure`` when the evidence holds
several) make that case ungradable with ``CASE_INVALID``; the other cases
are still graded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ..cases import CaseResult
from ..codes import Ungradable
from ..jsonvalues import MISSING as _MISSING
from ..jsonvalues import json_pointer
from ..strictjson import StrictJSONError, loads
from ..taskspec import CaseSpec, TaskSpec
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
