"""``ctrf``: a CTRF report of scored cases, valid against the official
schema, written as the cases are scored.

One test per case, ``passed`` or ``failed``; a case that could not be
scored is ``other`` (``rawStatus: "error"``, the error as its message), so
the report is never greener than the suite. ``duration`` is the case's
``latencyMs``, ``extra.truereward`` its score, checks and cost (and the
checks summary on the report). docs/checks.md, "Reports".
"""

from __future__ import annotations

import json
from typing import Any

from ..._version import __version__
from ...codes.checks import CHECK_GAVE_UP
from ..model import Summary
from ..suite import ScoredCase
from ..text import stringify
from . import Run, failed_checks

SPEC_VERSION = "1.0.0"


_ENCODE = json.JSONEncoder(allow_nan=False).encode


class CtrfFormat:
    name = "ctrf"
    summary_first = False
    separator = ",\n"

    def case(self, scored: ScoredCase, run: Run) -> str:
        outcome = scored.outcome
        test: dict[str, Any] = {
            "name": outcome.id,
            "status": "passed" if outcome.passed else "failed",
            "rawStatus": "passed" if outcome.passed else "failed",
            "duration": round(outcome.meta.latency_ms),
            "suite": [run.file],
            "filePath": run.file,
        }
        if scored.line is not None:
            test["line"] = scored.line
        if outcome.meta.tags:
            test["tags"] = [stringify(tag) for tag in outcome.meta.tags]
        if outcome.error is not None:
            test["status"] = "other"
            test["rawStatus"] = "error"
            test["message"] = outcome.error
        elif not outcome.passed:
            test["message"] = f"failed: {failed_checks(outcome)}"
        test["extra"] = {
            "truereward": {
                "score": outcome.score,
                "checks": [check.to_json() for check in outcome.checks],
                "costUsd": outcome.meta.cost_usd,
                "warnings": list(outcome.warnings),
            }
        }
        if outcome.gave_up:
            test["extra"]["truereward"]["code"] = CHECK_GAVE_UP
        return "      " + _ENCODE(test)

    def head(self, run: Run, summary: Summary | None) -> str:
        tool = json.dumps({"name": "truereward", "version": __version__})
        return (
            '{\n  "reportFormat": "CTRF",\n'
            f'  "specVersion": "{SPEC_VERSION}",\n'
            '  "generatedBy": "truereward checks",\n'
            f'  "results": {{\n    "tool": {tool},\n    "tests": [\n'
        )

    def tail(self, run: Run, summary: Summary) -> str:
        counts = {
            "tests": summary.total,
            "passed": summary.passed,
            "failed": summary.failed - summary.errors,
            "skipped": 0,
            "pending": 0,
            "other": summary.errors,
            "start": run.started_ms,
            "stop": run.stopped_ms,
            "duration": max(run.stopped_ms - run.started_ms, 0),
        }
        extra = json.dumps({"truereward": {"checks": summary.to_json()}}, allow_nan=False)
        return f'\n    ],\n    "summary": {json.dumps(counts)}\n  }},\n  "extra": {extra}\n}}\n'


FORMAT = CtrfFormat()
