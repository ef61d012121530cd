"""``sqlite_query_equals``: the first column of the first row a query
returns from the SQLite database ``db_path`` is ``expected``.

Options ``db_path``, ``query``, ``expected`` (a JSON scalar), ``timeout``.
The database (and its ``-wal``) is copied into a private directory and the
copy opened read-only; the query cannot write (``query_only``, an
authorizer), runs within ``timeout``, and builds no value over
:data:`MAX_LENGTH`. A missing or corrupt database, a missing table or no
row fails the case; a query that does not compile, writes or is too large
is ``CASE_INVALID``; out of time, ``GRADER_TIMEOUT``. docs/criteria.md.
"""

from __future__ import annotations

import os
import pathlib
import sqlite3
import tempfile
import time
from typing import Annotated, Any
from urllib.parse import quote

from pydantic import Field

from ...codes import Ungradable
from ..context import Context
from ..files import WorkspaceFiles
from ..kind import CriterionKind, Failure, Options, Outcome
from ..options import Path, Seconds
from ..values import shown, sqlite_value_equal

#: The longest string or blob a query may build, in bytes.
MAX_LENGTH = 16 << 20
_HEADER = b"SQLite format 3\x00"
_PROGRESS_STEPS = 1000

_ALLOWED = frozenset(
    {
        sqlite3.SQLITE_SELECT,
        sqlite3.SQLITE_READ,
        sqlite3.SQLITE_FUNCTION,
        sqlite3.SQLITE_RECURSIVE,
    }
)
# A query's compile errors: the task's, whatever the database holds.
_TASKS_ERRORS = (
    "syntax error",
    "incomplete input",
    "unrecognized token",
    "near ",
    "no such function",
    "wrong number of arguments",
    "not authorized",
    "readonly",
)

Scalar = str | int | float | bool | None


class SqliteQueryEquals(Options):
    db_path: Path
    query: Annotated[str, Field(min_length=1, max_length=1 << 20)]
    expected: Scalar
    timeout: Seconds = 10.0


def _authorize(action: int, _name: str | None, value: str | None, *_: Any) -> int:
    if action in _ALLOWED or (action == sqlite3.SQLITE_PRAGMA and value is None):
        return sqlite3.SQLITE_OK  # reading, and pragmas that only read
    return sqlite3.SQLITE_DENY


def _copy(files: WorkspaceFiles, db_path: str, scratch: str) -> str:
    """The database (and its log) copied into ``scratch``; its path there."""
    where = files.shown(db_path)
    data = files.need(db_path)
    if data and not data.startswith(_HEADER):
        raise Failure(f"{where} is not a SQLite database")
    copy = os.path.join(scratch, "db.sqlite")
    pathlib.Path(copy).write_bytes(data)
    log = files.read(db_path + "-wal") if files.exists(db_path + "-wal") else None
    if log is not None:
        pathlib.Path(copy + "-wal").write_bytes(log)
    return copy


def _blame(error: sqlite3.Error, where: str, timeout: float) -> Exception:
    name = getattr(error, "sqlite_errorname", "")
    said = str(error)
    if name == "SQLITE_INTERRUPT":
        return Ungradable("GRADER_TIMEOUT", f"the query on {where} ran out of its {timeout:g} s")
    if isinstance(error, sqlite3.ProgrammingError | sqlite3.Warning) or name in (
        "SQLITE_READONLY",
        "SQLITE_AUTH",
        "SQLITE_TOOBIG",
    ):
        return Ungradable("CASE_INVALID", f"the query cannot run as a read-only query: {said}")
    if name in ("SQLITE_NOTADB", "SQLITE_CORRUPT"):
        return Failure(f"{where} is not a usable SQLite database: {said}")
    if name == "SQLITE_CANTOPEN" or name == "SQLITE_IOERR" or name.startswith("SQLITE_IOERR"):
        return Ungradable("EVIDENCE_UNREADABLE", f"{where}: the copy cannot be opened: {said}")
    if any(part in said for part in _TASKS_ERRORS):
        return Ungradable("CASE_INVALID", f"the query does not compile: {said}")
    return Failure(f"the query on {where} fails: {said}")


def _first(copy: str, options: SqliteQueryEquals, where: str) -> tuple[Any, ...] | None:
    deadline = time.monotonic() + options.timeout
    connection = sqlite3.connect(f"file:{quote(copy)}?mode=ro", uri=True, timeout=0)
    try:
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_LENGTH)
        connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        connection.execute("PRAGMA query_only = ON")
        connection.set_authorizer(_authorize)
        connection.set_progress_handler(lambda: int(time.monotonic() > deadline), _PROGRESS_STEPS)
        row: tuple[Any, ...] | None = connection.execute(options.query).fetchone()
        return row
    finally:
        connection.close()


def evaluate(options: SqliteQueryEquals, context: Context) -> Outcome:
    files = context.workspace()
    where = files.shown(options.db_path)
    with tempfile.TemporaryDirectory(prefix="truereward-sqlite-") as scratch:
        copy = _copy(files, options.db_path, scratch)
        try:
            row = _first(copy, options, where)
        except sqlite3.Error as error:
            raise _blame(error, where, options.timeout) from None
    if row is None or not row:
        raise Failure(f"the query on {where} returned no row")
    return Outcome.binary(
        sqlite_value_equal(row[0], options.expected),
        f"the query on {where} returned {shown(row[0])}, expected {shown(options.expected)}",
    )


CRITERION = CriterionKind(
    name="sqlite_query_equals",
    description="a read-only SQL query on a SQLite database returns the expected value",
    options=SqliteQueryEquals,
    evaluate=evaluate,
)
