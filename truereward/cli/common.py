"""What the subcommands share: exit statuses, errors, and reading input files
with messages that name the file, line and field."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..strictjson import StrictJSONError, loads

if TYPE_CHECKING:
    from ..cases import CaseResult

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_CONFLICT",
    "EXIT_FAILED",
    "EXIT_INTERNAL",
    "EXIT_OK",
    "EXIT_PUBLISH_FAILED",
    "CliError",
    "load_case_set",
    "load_rows",
    "read_bytes",
]

#: Success.
EXIT_OK = 0
#: The command ran and the answer is negative (``verify``: inconsistent).
EXIT_FAILED = 1
#: Bad or unreadable input; nothing was published.
EXIT_BAD_INPUT = 2
#: Another grade is published at the target (``PublishConflict``); nothing
#: was written or removed.
EXIT_CONFLICT = 3
#: The target could not be written (I/O, permissions, store unavailable).
EXIT_PUBLISH_FAILED = 4
#: A bug in truereward (reported without a traceback unless TRUEREWARD_DEBUG).
EXIT_INTERNAL = 70


class CliError(Exception):
    """An error the command reports in one message, with an exit status."""

    def __init__(self, message: str, status: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.status = status


def read_bytes(path: str) -> bytes:
    """The bytes of ``path`` (``-`` is standard input); :class:`CliError`
    naming the file when it cannot be read."""
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise CliError(f"{path}: cannot read: {error.strerror or error}") from None


def load_rows(path: str, data: bytes | None = None) -> list[CaseResult]:
    """Rows from a JSONL file (one CaseResult row per line; blank lines are
    skipped), or from its bytes ``data`` already read. Every bad line is
    reported (up to 10) with its line number and field, and none of the
    file is used."""
    from ..readers.rows import BadLine, parse_line

    if data is None:
        data = read_bytes(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise CliError(f"{path}: not UTF-8 text (byte {error.start})") from None
    rows: list[CaseResult] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(parse_line(line, limit=5))
        except BadLine as error:
            problems.append(f"{path}:{number}: {error}")
    if problems:
        shown = problems[:10]
        if len(problems) > 10:
            shown.append(f"... and {len(problems) - 10} more bad lines")
        raise CliError("\n".join(shown))
    return rows


def load_case_set(path: str) -> Any:
    """A case set from JSON or TOML: a mapping ``{id: kind}``, a list of
    ``{id, kind}``, or an object whose ``cases`` key holds either."""
    import tomllib  # here: every command imports this module, few read TOML

    data = read_bytes(path)
    try:
        if path.endswith(".toml"):
            value: Any = tomllib.loads(data.decode("utf-8-sig"))
        else:
            value = loads(data)
    except (StrictJSONError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise CliError(f"{path}: {error}") from None
    if isinstance(value, dict) and isinstance(value.get("cases"), dict | list):
        value = value["cases"]
    if not isinstance(value, dict | list):
        raise CliError(f"{path}: a case set is a mapping {{id: kind}} or a list of {{id, kind}}")
    return value
