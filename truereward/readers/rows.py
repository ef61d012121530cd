"""The ``rows`` reader: evidence that is already CaseResult rows (JSONL).

For graders that write rows themselves, one JSON object a line (blank lines
skipped). Any bad line, or no row at all, makes the evidence
``EVIDENCE_MALFORMED``, naming the line and field; coverage of the case set
is the fold's business. Bounded (:data:`MAX_ROWS_BYTES`, the case count,
:data:`MAX_LINE_BYTES`, :data:`MAX_VALUES` JSON values, each row as a grade
keeps it); :func:`parse_rows` is shared with ``truereward fold``, so a bad
row is worded the same wherever it is met. docs/hostile.md, "Bounds".
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ..codes import Ungradable
from ..grade.bounded import bounded_row
from ..record.cases import MAX_CASES, CaseResult
from ..record.taskspec import TaskSpec
from ..record.validation import describe
from ..util.exceptions import TruerewardError
from ..util.strictjson import StrictJSONError, loads
from .evidence import Evidence

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_ROWS_BYTES",
    "MAX_VALUES",
    "READER",
    "BadLine",
    "BadRows",
    "RowsReader",
    "parse_line",
    "parse_rows",
]

#: The largest rows file: room for a maximal case set's rows (10,000 rows
#: of 512-character ids, each with a 600-character why and an observation),
#: and its text held in memory stays within the graders' budget whatever
#: characters it holds.
MAX_ROWS_BYTES = 24 << 20
#: The longest line of a rows file: one row.
MAX_LINE_BYTES = 1 << 20
#: The most JSON values (objects, arrays, strings, numbers...) the rows of
#: one file may hold together.
MAX_VALUES = 500_000

#: A line that is not blank: from its first character that is not
#: whitespace to its end (found in C, so blank lines cost nothing).
_LINE = re.compile(rb"[^ \t\r\n][^\n]*")


class BadLine(TruerewardError, ValueError):
    """A line that is not a valid row; the message says why (naming the
    field), without saying where the line is."""


class BadRows(TruerewardError, ValueError):
    """A rows file that is refused: ``problems`` are its first bad lines, or
    the bound it passed, each ``where:line: why``."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def _row(value: Any, limit: int) -> CaseResult:
    try:
        if not isinstance(value, dict):
            raise StrictJSONError(f"a row is a JSON object, got {type(value).__name__}")
        return CaseResult.from_row(value)
    except StrictJSONError as error:
        raise BadLine(str(error)) from None
    except ValidationError as error:
        raise BadLine(describe(error, limit=limit, whole="(row)")) from None


def parse_line(line: str | bytes, *, limit: int = 1) -> CaseResult:
    """The row on ``line``: a strict JSON object read by
    :meth:`~truereward.record.cases.CaseResult.from_row`. :class:`BadLine`
    otherwise: the JSON error as it is, or the validation errors through
    :func:`truereward.record.validation.describe` (the first ``limit`` of them, then
    how many more)."""
    try:
        value = loads(line)
    except StrictJSONError as error:
        raise BadLine(str(error)) from None
    return _row(value, limit)


def _values(value: Any) -> int:
    """How many JSON values ``value`` is made of (itself included)."""
    total = 1
    stack = [value] if isinstance(value, dict | list) else []
    while stack:
        item = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        total += len(children)
        stack.extend(child for child in children if isinstance(child, dict | list))
    return total


def parse_rows(data: bytes, where: str, *, report: int = 1, limit: int = 1) -> list[CaseResult]:
    """The rows of a JSONL file's bytes ``data`` (named ``where``), each
    bounded (:func:`~truereward.grade.bounded.bounded_row`); blank lines are
    skipped and a leading UTF-8 byte-order mark is fine. :class:`BadRows`
    naming the first ``report`` bad lines (each with ``limit`` validation
    errors at most; reading stops there), or the bound the file passed
    (module docstring)."""
    if len(data) > MAX_ROWS_BYTES:
        problem = f"{len(data)} bytes, more than the {MAX_ROWS_BYTES} bytes a rows file may have"
        raise BadRows([f"{where}: {problem}"])
    rows: list[CaseResult] = []
    problems: list[str] = []
    values = 0
    line, counted = 1, 0
    start = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    for match in _LINE.finditer(data, start):
        line += data.count(b"\n", counted, match.start())
        counted = match.start()
        try:
            row, values = _parse(match, values, limit)
        except BadLine as error:
            problems.append(f"{where}:{line}: {error}")
            if len(problems) >= report:
                if report > 1:
                    problems.append(f"{where}: reading stopped at line {line}")
                break
            continue
        except _Past as bound:
            raise BadRows([*problems, f"{where}:{line}: {bound}"]) from None
        rows.append(row)
        if len(rows) > MAX_CASES:
            problem = f"more than the {MAX_CASES} rows a rows file may have"
            raise BadRows([*problems, f"{where}:{line}: {problem}"])
    if problems:
        raise BadRows(problems)
    return rows


class _Past(TruerewardError):
    """The file passed a bound: nothing more of it is read."""


def _parse(match: re.Match[bytes], values: int, limit: int) -> tuple[CaseResult, int]:
    """The bounded row of one line, and the values read so far with it."""
    size = match.end() - match.start()
    if size > MAX_LINE_BYTES:
        raise BadLine(f"{size} bytes, more than the {MAX_LINE_BYTES} bytes a row may have")
    try:
        value = loads(match.group())
    except StrictJSONError as error:
        raise BadLine(str(error)) from None
    values += _values(value)
    if values > MAX_VALUES:
        raise _Past(
            f"the rows up to here hold more than the {MAX_VALUES} JSON values a rows file may have"
        )
    return bounded_row(_row(value, limit)), values


class RowsReader:
    """Rows written by another grader, one JSON object per line."""

    name = "rows"
    default_evidence = "rows.jsonl"

    def read(
        self, evidence: Evidence, spec: TaskSpec, options: Mapping[str, Any]
    ) -> list[CaseResult]:
        where = evidence.describe()
        try:
            rows = parse_rows(evidence.read_bytes(), where)
        except BadRows as error:
            raise Ungradable("EVIDENCE_MALFORMED", error.problems[0]) from None
        if not rows:
            raise Ungradable("EVIDENCE_MALFORMED", f"{where}: no row at all")
        return rows


READER = RowsReader()
