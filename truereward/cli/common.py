"""What the subcommands share: exit statuses, errors, and reading input files
with messages that name the file, line and field.

Every file a command reads goes through :func:`read_bytes`, the package's one
safe reader (:func:`truereward.util.safefile.read_regular`): a FIFO (a pipe, a
process substitution ``<(...)``), a device (``/dev/zero``), a directory or a
symlink is refused rather than followed or waited on, and so is a file
larger than :data:`~truereward.util.safefile.LIMIT`; ``-`` reads standard input,
at most that many bytes too. Each refusal is exit 2 naming the file and why.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

from ..util import safefile
from ..util.exceptions import TruerewardError
from ..util.strictjson import StrictJSONError, loads

if TYPE_CHECKING:
    from ..record.cases import CaseResult

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_CONFLICT",
    "EXIT_FAILED",
    "EXIT_INTERNAL",
    "EXIT_OK",
    "EXIT_PUBLISH_FAILED",
    "CliError",
    "json_or_text",
    "load_case_set",
    "load_rows",
    "number",
    "read_bytes",
    "read_stream",
    "refused_file",
]

N = TypeVar("N", int, float)

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


class CliError(TruerewardError):
    """An error the command reports in one message, with an exit status."""

    def __init__(self, message: str, status: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.status = status


def number(
    kind: type[N], *, least: N | None = None, most: N | None = None, positive: bool = False
) -> Callable[[str], N]:
    """The argparse ``type`` of every numeric option: the text as a finite
    ``kind`` (``int`` or ``float``) from ``least`` to ``most``, above 0 when
    ``positive``; otherwise ``ArgumentTypeError`` saying what is expected and
    what was given."""
    bounds = " > 0" if positive else f" >= {least:g}" if least is not None else ""
    if least is not None and most is not None:
        bounds = f" from {least:g} to {most:g}"
    expected = ("a whole number" if kind is int else "a finite number") + bounds

    def parse(text: str) -> N:
        try:
            value = kind(text)
            if not math.isfinite(value) or (positive and value <= 0):
                raise ValueError
        except ValueError:
            raise argparse.ArgumentTypeError(f"{expected}, got {text!r}") from None
        if (least is not None and value < least) or (most is not None and value > most):
            raise argparse.ArgumentTypeError(f"{expected}, got {text!r}")
        return value

    return parse


def json_or_text(text: str) -> Any:
    """An option's VALUE: ``text`` parsed as JSON when it parses, else
    ``text`` itself."""
    try:
        return loads(text)
    except StrictJSONError:
        return text


def read_bytes(path: str, *, limit: int = safefile.LIMIT) -> bytes:
    """The bytes of the regular file ``path``, or of standard input for
    ``-``, at most ``limit`` of them (module docstring); :class:`CliError`
    naming the file and why otherwise."""
    if path == "-":
        return read_stream(sys.stdin.buffer, "<stdin>", limit=limit)
    try:
        return safefile.read_regular(path, limit=limit)
    except safefile.NotAFile as error:
        raise CliError(refused_file(path, error)) from None
    except safefile.TooLarge as error:
        raise CliError(f"{path}: refused: {error.strerror}") from None
    except OSError as error:
        raise CliError(f"{path}: cannot read: {error.strerror or error}") from None


def refused_file(path: str, error: safefile.NotAFile) -> str:
    """Why ``path`` is not read, in a sentence: for a FIFO, how to give a
    pipe's bytes instead (``-``, standard input)."""
    why = f"{path}: refused: {error.kind}, not a regular file"
    if error.kind == "a FIFO":
        why += (
            " (a pipe or a process substitution such as <(...) is not read: "
            "give '-' and pipe the bytes to standard input)"
        )
    elif error.kind == "a symlink":
        why += " (inputs are read without following links: give the file it leads to)"
    return why


def read_stream(stream: BinaryIO, name: str, *, limit: int = safefile.LIMIT) -> bytes:
    """Everything ``stream`` holds, read a chunk at a time, never more than
    ``limit`` bytes and one; :class:`CliError` naming ``name`` when there is
    more."""
    chunks: list[bytes] = []
    total = 0
    while chunk := stream.read(min(safefile.CHUNK, limit + 1 - total)):
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise CliError(f"{name}: refused: more than the {limit} bytes allowed")
    return b"".join(chunks)


def load_rows(path: str, data: bytes | None = None) -> list[CaseResult]:
    """Rows from a JSONL file (one CaseResult row per line; blank lines are
    skipped), or from its bytes ``data`` already read, bounded as the
    ``rows`` reader bounds them (:func:`truereward.readers.rows.parse_rows`).
    The first bad lines (up to 10) are reported with their line numbers and
    fields, and none of the file is used."""
    from ..readers.rows import BadRows, parse_rows

    if data is None:
        data = read_bytes(path)
    try:
        return parse_rows(data, path, report=10, limit=5)
    except BadRows as error:
        raise CliError(str(error)) from None


def load_case_set(path: str) -> Any:
    """A case set from JSON or TOML: a mapping ``{id: kind}``, a list of
    ``{id, kind}``, or an object whose ``cases`` key holds either (a task
    spec, whole, when it declares a scoring: weights, required cases, a
    ``scoring`` table, which the fold reads); no larger
    than a case set may be (:func:`~truereward.record.cases.case_set_problem`), nested at most
    :data:`~truereward.util.strictjson.MAX_DEPTH` levels. Any parser error is a
    :class:`CliError` naming the file."""
    import tomllib  # here: every command imports this module, few read TOML

    from ..record.cases import case_set_problem
    from ..record.taskspec import MAX_SPEC_BYTES
    from ..util.strictjson import MAX_DEPTH, check_depth

    data = read_bytes(path, limit=MAX_SPEC_BYTES)
    try:
        if path.endswith(".toml"):
            value: Any = tomllib.loads(data.decode("utf-8-sig"))
        else:
            value = loads(data)
        check_depth(value, "the case set")
    except RecursionError:
        raise CliError(
            f"{path}: nested too deeply to parse (a case set nests at most {MAX_DEPTH} levels)"
        ) from None
    except ValueError as error:  # TOML, JSON, UTF-8, an integer too long, too deep
        raise CliError(f"{path}: {str(error)[:500]}") from None
    if isinstance(value, dict) and isinstance(value.get("cases"), dict | list):
        if _declares_scoring(value):
            return _task_spec(path, value)
        value = value["cases"]
    if not isinstance(value, dict | list):
        raise CliError(f"{path}: a case set is a mapping {{id: kind}} or a list of {{id, kind}}")
    ids = value if isinstance(value, dict) else (_id_of(item) for item in value)
    problem = case_set_problem(ids, len(value))
    if problem:
        raise CliError(f"{path}: the case set {problem}")
    return value


def _declares_scoring(value: dict[str, Any]) -> bool:
    """Whether a spec declares a scoring (a ``scoring`` table, or a case's
    ``weight`` or ``required``), which the fold reads from the whole spec."""
    cases = value["cases"]
    return "scoring" in value or (
        isinstance(cases, list)
        and any(
            isinstance(item, dict) and ("weight" in item or "required" in item) for item in cases
        )
    )


def _task_spec(path: str, value: dict[str, Any]) -> Any:
    from ..record.taskspec import TaskSpec, TaskSpecError

    try:
        return TaskSpec.of(value)
    except TaskSpecError as error:
        raise CliError(f"{path}: {error}") from None


def _id_of(entry: object) -> object:
    return entry.get("id") if isinstance(entry, dict) else None
