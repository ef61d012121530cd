"""Graded sweeps for the sweep analytics tests: a plan names each run's
outcome, and a run's grade document is made from it, published to a
directory or put on ``memory://``, or parsed back into a run record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import truereward as tr
from truereward.sweeps import RunRecord, parse_grade

# A run's plan: "pass" (reward 1), "fail" (reward 0), "flaky-case" (fix fails, reward 0),
# a refusal code (ungradable), or "retried" (gradable on the second attempt).
CODES = ("EVIDENCE_MISSING", "CASE_NOT_GRADED", "GRADER_TIMEOUT")


def rows_for(outcome: str) -> list[dict[str, Any]]:
    fix = {"id": "t::fix", "kind": "fail_to_pass", "verdict": "pass"}
    guard = {"id": "t::guard", "kind": "pass_to_pass", "verdict": "pass"}
    if outcome == "fail":
        fix["verdict"] = "fail"
    elif outcome in CODES:
        guard = {**guard, "verdict": "ungradable", "code": outcome, "why": "x"}
    return [fix, guard]


def document_for(run: str, outcome: str, sweep: str = "s") -> tr.GradeDocument:
    if outcome == "retried":
        return tr.grade_document(
            rows_for("pass"),
            run={"id": run, "sweep": sweep, "attempt": 2},
            attempts=[
                {
                    "attempt": 1,
                    "gradable": False,
                    "refusals": [{"code": "GRADER_TIMEOUT", "blame": "grader", "why": "slow"}],
                }
            ],
        )
    return tr.grade_document(rows_for(outcome), run={"id": run, "sweep": sweep})


def publish_sweep(root: Path, plan: dict[str, str]) -> str:
    for run, outcome in plan.items():
        tr.publish(document_for(run, outcome, root.name), root / run)
    return str(root)


def put_memory_sweep(root: str, plan: dict[str, str]) -> str:
    import fsspec

    fs, path = fsspec.core.url_to_fs(root)
    for run, outcome in plan.items():
        fs.pipe_file(f"{path}/{run}/grade.json", document_for(run, outcome).to_bytes())
    return root


PLAN = {
    "r1": "pass",
    "r2": "pass",
    "r3": "fail",
    "r4": "EVIDENCE_MISSING",
    "r5": "CASE_NOT_GRADED",
    "r6": "retried",
}


def record_for(run: str, outcome: str) -> RunRecord:
    if outcome == "unreadable":
        return RunRecord.unreadable(run, "no grade.json")
    return parse_grade(document_for(run, outcome).to_bytes(), run)
