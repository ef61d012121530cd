"""One criterion through the ``workspace`` reader, as a verifier runs it,
and what its row must say: passed or failed with a score in [0, 1], or
refused with a code and whose fault."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import truereward as tr
from truereward.codes import lookup
from truereward.record.cases import CaseResult


def grade(workspace: Path | str, criterion: str, **options: Any) -> CaseResult:
    """The row of one criterion over ``workspace`` (reader options under ``reader``)."""
    reader = options.pop("reader", {})
    spec = {
        "cases": [
            {"id": "c", "kind": "fail_to_pass", "options": {"criterion": criterion, **options}}
        ],
        "options": reader,
    }
    (row,) = tr.read("workspace", str(workspace), spec)
    return row


def score(row: CaseResult) -> float:
    return row.measures["score"]


def passed(row: CaseResult) -> bool:
    assert row.verdict in ("pass", "fail"), (row.code, row.why)
    assert 0.0 <= score(row) <= 1.0
    return row.verdict == "pass"


def refused(row: CaseResult, code: str, blame: str = "grader") -> None:
    assert (row.verdict, row.code) == ("ungradable", code), row.why
    assert lookup(code).blame.value == blame
    assert "score" not in row.measures
