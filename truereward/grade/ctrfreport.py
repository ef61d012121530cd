"""The grade as a CTRF report (``ctrf.json``), for people and dashboards.

Current CTRF: one test per row, one ``other`` test for every refusal no
row shows, and for an ungradable grade one ``failed`` test that stands for
the grade (:data:`UNGRADABLE_TEST`), so the view never looks greener than
the grade; reruns as ``retries``/``retryAttempts``/``flaky``;
``extra.truereward`` carries the grade's reward and digest, the view's only
floats (:func:`truereward.grade.files.render` relies on it). README.md, "File
formats", describes the view.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..codes import Blame
from ..record.cases import KINDS, UNGRADABLE
from .document import GradeDocument

__all__ = ["SPEC_VERSION", "UNGRADABLE_TEST", "ctrf"]

SPEC_VERSION = "1.0.0"
#: The name of the test that stands for an ungradable grade.
UNGRADABLE_TEST = "ungradable: no reward"

_STATUS = {"pass": "passed", "fail": "failed", UNGRADABLE: "other"}


def _epoch_ms(value: datetime | None) -> int:
    return 0 if value is None else int(value.timestamp() * 1000)


def _message(why: str) -> dict[str, str]:
    return {"message": why} if why else {}


def _blame_of(code: str, document: GradeDocument) -> str | None:
    for item in document.refusals:
        if item.code == code:
            return item.blame.value
    return None


def _ungradable_test(document: GradeDocument) -> dict[str, Any]:
    """The test that stands for an ungradable grade: failed, naming each
    refusal code once (with who is blamed), in the grade's order."""
    codes = list(dict.fromkeys((item.code, Blame(item.blame).value) for item in document.refusals))
    return {
        "name": UNGRADABLE_TEST,
        "status": "failed",
        "rawStatus": "ungradable",
        "duration": 0,
        "suite": ["grade"],
        "message": "the run has no reward: "
        + (", ".join(f"{code} ({blame})" for code, blame in codes) or "ungradable"),
        "extra": {"truereward": {"grade": "ungradable", "codes": [code for code, _ in codes]}},
    }


def ctrf(document: GradeDocument) -> dict[str, Any]:
    """The CTRF report of ``document`` as a JSON-ready dict (see the module
    docstring); valid against the official CTRF schema. Tests of one kind
    that were graded share their ``suite`` and ``extra`` values (the dict
    is made to be written, once)."""
    tests: list[dict[str, Any]] = []
    shown: set[tuple[str, str, str]] = set()
    counts = {"passed": 0, "failed": 0, "other": 0}
    flaky = 0
    # What every graded row of a kind says beside its own fields, made once
    # per report: a row's dicts were most of the cost of the view.
    graded_extra = {
        kind: ([kind], {"truereward": {"kind": kind, "code": None, "blame": None}})
        for kind in KINDS
    }
    for row in document.detail:
        verdict = row.verdict
        if verdict == UNGRADABLE:
            suite: list[str] = [row.kind]
            extra: dict[str, Any] = {
                "truereward": {
                    "kind": row.kind,
                    "code": row.code,
                    "blame": _blame_of(row.code, document),
                }
            }
            shown.add((row.id, row.code, row.why))
        else:
            suite, extra = graded_extra[row.kind]
        status = _STATUS[verdict]
        counts[status] += 1
        test: dict[str, Any] = {
            "name": row.id,
            "status": status,
            "rawStatus": verdict,
            "duration": round(row.duration_s * 1000),
            "suite": suite,
            "extra": extra,
        }
        if row.why:
            test["message"] = row.why
        if row.reruns:
            # The executions before the row's own, oldest first (the row is
            # the final attempt); retries is their number.
            test["retries"] = len(row.reruns)
            test["retryAttempts"] = [
                {"attempt": number, "status": _STATUS[item.verdict], **_message(item.why)}
                for number, item in enumerate(row.reruns, 1)
            ]
            test["flaky"] = row.flaky
            flaky += row.flaky
        tests.append(test)
    declared = document.inputs.case_set or {}
    for item in document.refusals:
        if item.case is not None and (item.case, item.code, item.why) in shown:
            continue
        counts["other"] += 1
        tests.append(
            {
                "name": f"{item.case} [{item.code}]" if item.case else item.code,
                "status": "other",
                "rawStatus": "refused",
                "duration": 0,
                "suite": ["refusals"],
                "message": item.why or item.code,
                "extra": {
                    "truereward": {
                        "code": item.code,
                        "blame": Blame(item.blame).value,
                        "case": item.case,
                        "kind": declared.get(item.case) if item.case else None,
                    }
                },
            }
        )
    if not document.gradable:
        counts["failed"] += 1
        tests.append(_ungradable_test(document))
    run = document.run
    summary = {
        "tests": len(tests),
        "passed": counts["passed"],
        "failed": counts["failed"],
        "skipped": 0,
        "pending": 0,
        "other": counts["other"],
        "start": _epoch_ms(run.started if run else None),
        "stop": _epoch_ms(run.finished if run else None),
    }
    if flaky:  # said only when there is one: views of grades without reruns keep their bytes
        summary["flaky"] = flaky
    return {
        "reportFormat": "CTRF",
        "specVersion": SPEC_VERSION,
        "generatedBy": document.grader.name,
        "results": {
            "tool": {"name": document.grader.name, "version": document.grader.version},
            "summary": summary,
            "tests": tests,
        },
        "extra": {"truereward": _grade_extra(document)},
    }


def _grade_extra(document: GradeDocument) -> dict[str, Any]:
    extra: dict[str, Any] = {
        "gradable": document.gradable,
        "reward": document.reward,
        "scheme": document.scheme,
        "grade_sha256": document.digest,
    }
    if document.dimensions:  # said only when there are some: older views keep their bytes
        extra["dimensions"] = dict(document.dimensions)
    return extra
