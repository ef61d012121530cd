"""The ``checks`` reader: criteria checks on a run's answer.

The evidence is the answer the run produced: a file whose whole text is the
answer (default), or a JSON document holding it (reader option ``answer``:
a JSON Pointer such as ``/output``). Each declared case is one criterion,
given in its options exactly as a case of a ``truereward checks`` case file
(ai-eval-forge's format) without its ``id`` and ``actual``:

.. code-block:: json

    {"id": "mentions-paris", "kind": "fail_to_pass", "options": {
        "checks": [{"type": "contains", "value": ["Paris"]}]}}
    {"id": "close-to-reference", "kind": "fail_to_pass", "options": {
        "expected": "Paris is the capital of France."}}

Every case is scored with :func:`truereward.checks.score_case` (a case
without checks gets ``token_f1`` with min 0.65). A case that passes is
``pass``, else ``fail``; its score goes to ``measures["score"]`` (what the
``mean-score/1`` scheme averages), each check to an observation, and the
whole to an evaluation report (metric ``checks/case``, one detail per check
with metric ``checks/<type>`` and the check's parameters). A criterion whose
checks are not valid (an unknown type, a regex that does not compile) is
``CASE_INVALID``: the task is broken, not the run; so is a regex over the
compile bounds (too long, nested too deeply, too large once its
repetitions are expanded). A criterion whose check *gave up* (a regex that
backtracks catastrophically on this answer and runs out of its time bound,
or the criterion's time budget running out) is ``CHECK_GAVE_UP``
(:mod:`truereward.check_codes`: the grader's, not retried): nothing was
measured, so the run gets no reward from it, never a 0.0 it did not earn.
Reader options ``regex_timeout`` (seconds per search, default 1) and
``case_budget`` (seconds per criterion, default 5) set the bounds. Grade
with ``--scheme mean-score/1`` for a dense reward, or ``gated-binary/1``
for all-or-nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..cases import CaseResult, Observation
from ..check_codes import CHECK_GAVE_UP
from ..codes import Ungradable
from ..strictjson import StrictJSONError, loads
from ..taskspec import TaskSpec
from .evidence import Evidence
from .outcomes import case_invalid

__all__ = ["READER", "ChecksReader"]


def _answer(evidence: Evidence, pointer: Any) -> str:
    text = evidence.read_text()
    if pointer is None:
        return text
    from ..jsonvalues import MISSING, json_pointer

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


def _report(outcome: Any) -> Any:
    from ..evaluate import EvaluationReport, EvaluationVerdict, Metric

    details = [
        EvaluationReport(
            metric=Metric(namespace="checks", name=check.type, parameters=dict(check.params)),
            verdict=EvaluationVerdict.of(check.passed),
            score=check.score,
            feedback=check.detail,
        )
        for check in outcome.checks
    ]
    return EvaluationReport(
        metric=Metric(namespace="checks", name="case"),
        verdict=EvaluationVerdict.of(outcome.passed),
        score=outcome.score,
        details=details,
    )


def _options(options: Mapping[str, Any]) -> Any:
    from ..checks import ScoringOptions

    bounds = {name: options[name] for name in ("regex_timeout", "case_budget") if name in options}
    try:
        return ScoringOptions(**bounds)
    except ValueError as error:
        raise Ungradable("CASE_INVALID", f"reader option {error}") from None


class ChecksReader:
    """Criteria checks (exact, contains, regex, token_f1, json_valid,
    json_field, citation_coverage) on a run's answer."""

    name = "checks"
    default_evidence = "logs/agent/answer.txt"

    def read(
        self, evidence: Evidence, spec: TaskSpec, options: Mapping[str, Any]
    ) -> list[CaseResult]:
        from ..checks import score_case

        scoring = _options(options)
        answer = _answer(evidence, options.get("answer"))
        rows = []
        for index, case in enumerate(spec.cases):
            fields = {
                key: value
                for key, value in case.options.items()
                if key not in ("id", "actual", "output")
            }
            outcome = score_case({**fields, "id": case.id, "actual": answer}, index, scoring)
            if outcome.gave_up:
                rows.append(
                    CaseResult(
                        id=case.id,
                        kind=case.kind,
                        verdict="ungradable",
                        code=CHECK_GAVE_UP,
                        why=str(outcome.error)[:500],
                    )
                )
                continue
            if outcome.errored:
                rows.append(case_invalid(case, f"options: {outcome.error}"))
                continue
            failing = [check for check in outcome.checks if check.required and not check.passed]
            report = _report(outcome)
            rows.append(
                CaseResult(
                    id=case.id,
                    kind=case.kind,
                    verdict=report.verdict.to_row(),  # the one mapping (evaluate.verdict)
                    why=""
                    if outcome.passed
                    else "; ".join(
                        f"{check.type}: {check.detail}" for check in failing or outcome.checks
                    )[:500],
                    measures={"score": float(outcome.score or 0.0)},
                    observations=[
                        Observation(
                            name=check.type,
                            verdict="passed" if check.passed else "failed",
                            why=check.detail,
                        )
                        for check in outcome.checks
                    ],
                    report=report,
                )
            )
        return rows


READER = ChecksReader()
