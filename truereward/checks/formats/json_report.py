"""``json``: ai-eval-forge's result shape, ``{"summary": {...}, "cases":
[...]}``, written as the cases are scored.

The object's members come in the order ``cases``, ``summary`` (the summary
is only known at the end); JSON objects are unordered, so readers of
ai-eval-forge's output read it the same. One case per line. The summary has
ai-eval-forge's seven fields plus ``errors``; a case has its five fields,
plus ``warnings`` and ``error`` (``{file, line, message}``) when there are
some. Strict JSON, ASCII only.
"""

from __future__ import annotations

import json
from typing import Any

from ..model import CaseOutcome, CheckResult, Summary
from ..suite import ScoredCase
from . import Run

_ENCODE = json.JSONEncoder(allow_nan=False).encode
_STRING = json.encoder.encode_basestring_ascii
_BOOL = ("false", "true")


def _value(value: Any) -> str:
    if isinstance(value, str):
        return _STRING(value)
    return "null" if value is None else _ENCODE(value)


def _check(check: CheckResult) -> str:
    return (
        f'{{"type": {_STRING(check.type)}, "required": {_BOOL[check.required]}, '
        f'"passed": {_BOOL[check.passed]}, "score": {check.score!r}, "min": {check.min!r}, '
        f'"detail": {_STRING(check.detail)}}}'
    )


def case_json(outcome: CaseOutcome, *, file: str | None, line: int | None) -> str:
    """``outcome.to_json(file=..., line=...)`` as one line of JSON, written
    directly: this runs for every case, and building the dicts first costs
    more than the rest of the output. Scores, ``min`` and the meta numbers
    are finite floats, whose ``repr`` is their JSON."""
    if outcome.error is not None or outcome.warnings:
        return _ENCODE(outcome.to_json(file=file, line=line))
    meta = outcome.meta
    tags = _ENCODE(list(meta.tags)) if meta.tags else "[]"
    checks = ", ".join([_check(check) for check in outcome.checks])
    return (
        f'{{"id": {_STRING(outcome.id)}, "passed": {_BOOL[outcome.passed]}, '
        f'"score": {outcome.score!r}, "checks": [{checks}], "meta": {{"input": '
        f'{_value(meta.input)}, "tags": {tags}, "costUsd": {meta.cost_usd!r}, '
        f'"latencyMs": {meta.latency_ms!r}}}}}'
    )


class JsonFormat:
    name = "json"
    summary_first = False
    separator = ",\n"

    def case(self, scored: ScoredCase, run: Run) -> str:
        return "    " + case_json(scored.outcome, file=run.file, line=scored.line)

    def head(self, run: Run, summary: Summary | None) -> str:
        return '{\n  "cases": [\n'

    def tail(self, run: Run, summary: Summary) -> str:
        text = json.dumps(summary.to_json(), indent=2, allow_nan=False).replace("\n", "\n  ")
        return f'\n  ],\n  "summary": {text}\n}}\n'


FORMAT = JsonFormat()
