"""The ``checks`` reader: criteria checks on a run's answer.

Each declared case is a criterion written as a case of a ``truereward
checks`` case file, scored with :func:`truereward.checks.score_case` on the
run's answer; its score goes to ``measures["score"]``. A check that gave up
is ``CHECK_GAVE_UP`` (nothing measured, never a 0). docs/readers.md,
"checks", gives the options and the refusals.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..codes import Ungradable
from ..codes.checks import CHECK_GAVE_UP
from ..record.cases import CaseResult, Observation
from ..record.taskspec import CaseSpec, TaskSpec
from ..util.strictjson import StrictJSONError, loads
from .evidence import Evidence
from .outcomes import case_invalid

__all__ = ["READER", "ChecksReader"]


def _answer(evidence: Evidence, pointer: Any) -> str:
    text = evidence.read_text()
    if pointer is None:
        return text
    from ..util.jsonvalues import MISSING, json_pointer

    if not isinstance(pointer, str):
        raise Ungradable("CASE_INVALID", "answer: a JSON Pointer such as /output")
    try:
        document = loads(text)
    except StrictJSONError as error:
        raise Ungradable(
            "EVIDENCE_MALFORMED", f"{evidence.describe()}: not JSON: {error}"
        ) from None
    found = json_pointer(document, pointer)
    if found is MISSING:
        raise Ungradable("EVIDENCE_MALFORMED", f"{evidence.describe()}: no answer at {pointer}")
    if isinstance(found, str):
        return found
    return json.dumps(found)  # a structured answer is checked as its JSON text


def _options(options: Mapping[str, Any]) -> Any:
    from ..checks import ScoringOptions

    bounds = {name: options[name] for name in ("regex_timeout", "case_budget") if name in options}
    try:
        return ScoringOptions(**bounds)
    except ValueError as error:
        raise Ungradable("CASE_INVALID", f"reader option {error}") from None


def _row(case: CaseSpec, index: int, answer: str, scoring: Any) -> CaseResult:
    """The row of the criterion ``case`` (the ``index``-th) on ``answer``."""
    from ..checks import score_case

    fields = {
        key: value for key, value in case.options.items() if key not in ("id", "actual", "output")
    }
    outcome = score_case({**fields, "id": case.id, "actual": answer}, index, scoring)
    if outcome.gave_up:
        return CaseResult(
            id=case.id,
            kind=case.kind,
            verdict="ungradable",
            code=CHECK_GAVE_UP,
            why=str(outcome.error)[:500],
        )
    if outcome.errored:
        return case_invalid(case, f"options: {outcome.error}")
    why = ""
    if not outcome.passed:  # a passing case says nothing: no text to build for it
        failing = [check for check in outcome.checks if check.required and not check.passed]
        why = "; ".join(f"{check.type}: {check.detail}" for check in failing or outcome.checks)
    report = outcome.report()
    verdict = report.verdict.to_row()  # the one mapping (evaluate.verdict)
    assert verdict is not None  # a scored case passed or failed
    return CaseResult(
        id=case.id,
        kind=case.kind,
        verdict=verdict,
        why=why[:500],
        measures={"score": float(outcome.score or 0.0)},
        observations=[
            Observation(
                name=check.type,
                verdict="passed" if check.passed else "failed",
                why=check.detail,
            )
            for check in outcome.checks
        ],
        report=report.model_dump(mode="json"),
    )


class ChecksReader:
    """Criteria checks (exact, contains, regex, token_f1, json_valid,
    json_field, citation_coverage) on a run's answer."""

    name = "checks"
    default_evidence = "logs/agent/answer.txt"

    def read(
        self, evidence: Evidence, spec: TaskSpec, options: Mapping[str, Any]
    ) -> list[CaseResult]:
        scoring = _options(options)
        answer = _answer(evidence, options.get("answer"))
        return [_row(case, index, answer, scoring) for index, case in enumerate(spec.cases)]


READER = ChecksReader()
