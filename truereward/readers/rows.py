"""The ``rows`` reader: evidence that is already CaseResult rows (JSONL).

For graders that produce rows themselves (a verifier script, another tool)
and leave them in the run as one JSON object per line. Every line must be a
valid row (blank lines are skipped); any bad line makes the evidence
``EVIDENCE_MALFORMED``, naming the line and field, because a file with one
unreadable row is not a report of the whole case set. A file with no row is
malformed too: nothing shows the cases ran. Whether the rows cover the case
set is the fold's business (``CASES_MISSING``, ``CASE_INVALID``).
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

__all__ = ["READER", "RowsReader"]


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
            where = f"{evidence.describe()}:{number}"
            try:
                value = loads(line)
                if not isinstance(value, dict):
                    raise StrictJSONError(f"a row is a JSON object, got {type(value).__name__}")
                rows.append(CaseResult.from_row(value))
            except StrictJSONError as error:
                raise Ungradable("EVIDENCE_MALFORMED", f"{where}: {error}") from None
            except ValidationError as error:
                problem = describe(error, limit=1, whole="(row)")
                raise Ungradable("EVIDENCE_MALFORMED", f"{where}: {problem}") from None
        if not rows:
            raise Ungradable("EVIDENCE_MALFORMED", f"{evidence.describe()}: no row at all")
        return rows


READER = RowsReader()
