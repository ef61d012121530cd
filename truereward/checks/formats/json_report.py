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

from ..model import Summary
from ..suite import Scored
from . import Run


class JsonReport:
    name = "json"
    summary_first = False
    separator = ",\n"

    def case(self, scored: Scored, run: Run) -> str:
        body = scored.outcome.to_json(file=run.file, line=scored.line)
        return "    " + json.dumps(body, allow_nan=False)

    def head(self, run: Run, summary: Summary | None) -> str:
        return '{\n  "cases": [\n'

    def tail(self, run: Run, summary: Summary) -> str:
        text = json.dumps(summary.to_json(), indent=2, allow_nan=False).replace("\n", "\n  ")
        return f'\n  ],\n  "summary": {text}\n}}\n'


FORMAT = JsonReport()
