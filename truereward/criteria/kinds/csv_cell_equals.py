"""``csv_cell_equals``: a cell of the CSV file ``path`` is ``expected``.

Options: ``path``, ``row``, ``col``, ``expected`` (a string: CSV cells are
text). As rewardkit reads it: with ``col`` a column number (from 0; ``-1``
is the last cell of the row), ``row`` counts every line from 0, the header
too; with ``col`` a column name, the first line is the header and ``row``
counts the data rows from 0. The file is UTF-8 (a leading BOM dropped),
read by Python's ``csv`` module (its default dialect, quoted newlines kept).
Absent, not UTF-8, not CSV (a field over the ``csv`` module's size limit,
131,072 characters by default), or the row or column not there: the case
fails.
"""

from __future__ import annotations

import csv
import io
from itertools import islice
from typing import Annotated

from pydantic import Field

from ..context import Context
from ..files import as_text
from ..kind import CriterionKind, Failure, Options, Outcome
from ..options import Path
from ..values import compared, shown


class CsvCellEquals(Options):
    path: Path
    row: Annotated[int, Field(ge=0)]
    col: int | str
    expected: str


def _cell(text: str, row: int, col: int | str) -> str | None:
    stream = io.StringIO(text, newline="")
    if isinstance(col, str):
        record = next(islice(csv.DictReader(stream), row, None), None)
        value = None if record is None else record.get(col)
        return value if isinstance(value, str) else None
    cells = next(islice(csv.reader(stream), row, None), None)
    return cells[col] if cells is not None and -len(cells) <= col < len(cells) else None


def evaluate(options: CsvCellEquals, context: Context) -> Outcome:
    files = context.workspace()
    where = files.shown(options.path)
    text = as_text(files.need(options.path), where, universal=False)
    try:
        found = _cell(text, options.row, options.col)
    except csv.Error as error:
        raise Failure(f"{where} is not CSV: {error}") from None
    address = f"row {options.row}, column {shown(options.col)}"
    if found is None:
        raise Failure(f"{where} has no cell at {address}")
    return compared(found, options.expected, f"{where} at {address}")


CRITERION = CriterionKind(
    name="csv_cell_equals",
    description="a cell of a CSV file is the expected text",
    options=CsvCellEquals,
    evaluate=evaluate,
)
