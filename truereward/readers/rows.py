"""The ``rows`` reader: evidence that is already CaseResult rows (JSONL).

For graders that produce rows themselves (a verifier script, another tool)
and leave them in the run as one JSON object per line. Every line must be a
valid row (blank lines are skipped); any bad line makes the evidence
``EVIDENCE_MALFORMED``, naming the line and field, because a file with one
unreadable row is not a report of the whole case set. A file with no row is
malformed too: nothing shows the cases ran. Whether the rows cover the case
set is the fold's business (``CASES_MISSING``, ``CASE_INVALID``).

:func:`parse_line` reads one line; ``truereward fold`` reads its rows file
with it too, so a bad row is worded the same wherever it is met.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ..cases import CaseResult
from ..codes import Ungradable
from ..errors import describe
from ..strictjson import StrictJSONError, loads
from ..taskspec import TaskSpec
from .evidence import Evidence

__all__ = ["READER", "BadLine", "RowsReader", "parse_line"]


class BadLine(ValueError):
    """A line that is not a valid row; the message says why (naming the
    field), without saying where the line is."""


def parse_line(line: str, *, limit: int = 1) -> CaseResult:
    """The row on ``line``: a strict JSON object read by
    :meth:`~truereward.cases.CaseResult.from_row`. :class:`BadLine`
    otherwise: the JSON error as it is, or the validation errors through
    :func:`truereward.errors.describe` (the first ``limit`` of them, then
    how many more)."""
    try:
        value = loads(line)
        if not isinstance(value, dict):
            raise StrictJSONError(f"a row is a JSON object, got {type(value).__name__}")
        return CaseResult.from_row(value)
    except StrictJSONError as error:
        raise BadLine(str(error)) from None
    except ValidationError as error:
        raise BadLine(describe(error, limit=limit, whole="(row)")) from None


class RowsReader:
    """Rows written by another grader, one JSON object per line."""

    name = "rows"
    default_evidence = "rows.jsonl"

    def read(
        self, evidence: Evidence, spec: TaskSpec, options: Mapping[str, Any]
    ) -> list[CaseResult]:
        text = evidence.read_text()
        rows: list[CaseResult] = []
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                rows.append(parse_line(line))
            except BadLine as error:
                where = f"{evidence.describe()}:{number}"
                raise Ungradable("EVIDENCE_MALFORMED", f"{where}: {error}") from None
        if not rows:
            raise Ungradable("EVIDENCE_MALFORMED", f"{evidence.describe()}: no row at all")
        return rows


READER = RowsReader()
