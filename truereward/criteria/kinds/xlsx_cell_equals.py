"""``xlsx_cell_equals``: a cell of the workbook ``path`` holds ``expected``.

Options ``path``, ``cell`` (``B2``), ``expected``, ``sheet`` (default the
active one). Read with openpyxl, read-only, as last computed (a formula
cell holds its cached result); values compare as JSON, a date or time cell
equals its ISO 8601 text. Needs the ``xlsx`` extra (else ``CASE_INVALID``).
Bounded by its bytes and by what it expands to (:data:`MAX_EXPANDED`: a
zip bomb is not opened); absent, not xlsx, over the bound or without the
sheet, the case fails. docs/criteria.md.
"""

from __future__ import annotations

import io
import zipfile
from typing import Annotated, Any

from pydantic import Field, JsonValue

from ...codes import Ungradable
from ..context import Context
from ..kind import CriterionKind, Failure, Options, Outcome
from ..options import Path
from ..values import cell_value_equal, compared, shown

#: The most bytes a workbook's parts may expand to: openpyxl parses the
#: shared strings and styles whole when it opens a workbook, so the time it
#: takes grows with them (docs/scale.md).
MAX_EXPANDED = 64 << 20

_CELL = r"^[A-Za-z]{1,3}[1-9][0-9]{0,6}$"


class XlsxCellEquals(Options):
    path: Path
    cell: Annotated[str, Field(pattern=_CELL)]
    expected: JsonValue
    sheet: str | None = None


def _openpyxl() -> Any:
    try:
        import openpyxl
    except ImportError:
        raise Ungradable(
            "CASE_INVALID",
            "xlsx_cell_equals needs openpyxl: pip install 'truereward[xlsx]'",
        ) from None
    return openpyxl


def _expanded(data: bytes, where: str) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            total = sum(item.file_size for item in archive.infolist())
    except (zipfile.BadZipFile, ValueError, OSError) as error:
        raise Failure(f"{where} is not an xlsx workbook: {error}") from None
    if total > MAX_EXPANDED:
        raise Failure(f"{where} expands to {total} bytes, more than the {MAX_EXPANDED} read")


def evaluate(options: XlsxCellEquals, context: Context) -> Outcome:
    openpyxl = _openpyxl()
    files = context.workspace()
    where = files.shown(options.path)
    data = files.need(options.path)
    _expanded(data, where)
    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as error:  # noqa: BLE001 - whatever the parser meets in the run's file
        raise Failure(f"{where} is not an xlsx workbook: {type(error).__name__}: {error}") from None
    try:
        if options.sheet is not None and options.sheet not in workbook.sheetnames:
            raise Failure(f"{where} has no sheet {shown(options.sheet)}")
        sheet = workbook[options.sheet] if options.sheet is not None else workbook.active
        try:
            found = sheet[options.cell.upper()].value
        except Exception as error:  # noqa: BLE001 - a sheet's XML is the run's file
            raise Failure(f"{where}: the sheet cannot be read: {error}") from None
    finally:
        workbook.close()
    return compared(found, options.expected, f"{where}[{options.cell}]", cell_value_equal)


CRITERION = CriterionKind(
    name="xlsx_cell_equals",
    description="a cell of an xlsx workbook holds the expected value",
    options=XlsxCellEquals,
    evaluate=evaluate,
)
