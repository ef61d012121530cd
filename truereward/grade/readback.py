"""A stored grade document read back and checked, never trusted.

:func:`parse_document` and :func:`load_document` read ``grade.json`` bytes
as a grade document (:class:`Unreadable` when they are not one);
:func:`verify_document` folds its ``detail`` again, with the inputs and
scheme it records, and lists every stored field that disagrees
(:class:`Disagreement`). Pure but for :func:`load_document`'s read of one
file; the checks of the files published beside a grade are
:mod:`truereward.verify`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..folding import Fold, fold_prepared
from ..util.exceptions import TruerewardError
from ..util.strictjson import StrictJSONError
from .document import GradeDocument

__all__ = ["Disagreement", "Unreadable", "load_document", "parse_document", "verify_document"]


class Unreadable(TruerewardError):
    """The grade could not be read at all (missing, not strict JSON, not a
    grade document, or folded under a scheme this process does not know)."""


@dataclass(frozen=True)
class Disagreement:
    """One thing that is not what it should be: ``where`` (a field of the
    document, or a file), what is stored, and what it should be."""

    where: str
    stored: Any
    expected: Any

    def __str__(self) -> str:
        return f"{self.where}: stored {self.stored!r}, expected {self.expected!r}"


def verify_document(document: GradeDocument) -> list[Disagreement]:
    """Fold ``document.detail`` again and compare every fold field. Raises
    :class:`Unreadable` when the scheme is unknown here."""
    from ..util.exceptions import UnknownName

    try:
        again = fold_prepared(list(document.detail), document.inputs, document.scheme)
    except UnknownName as error:
        raise Unreadable(str(error)) from error
    found = []
    for name in Fold.model_fields:
        stored, expected = getattr(document, name), getattr(again, name)
        if stored != expected:
            found.append(Disagreement(name, _plain(stored), _plain(expected)))
    ordered = sorted(document.detail, key=lambda row: row.id)
    if [row.id for row in document.detail] != [row.id for row in ordered]:
        found.append(Disagreement("detail", "rows out of id order", "rows sorted by id"))
    return found


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(item) for item in value]
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) else value


def load_document(path: Path) -> tuple[GradeDocument, bytes]:
    """Read and validate a stored ``grade.json``; :class:`Unreadable` if it
    cannot be."""

    from ..util import safefile

    try:
        data = safefile.read_regular(str(path))
    except OSError as error:
        raise Unreadable(f"{path}: {error.strerror or error}") from error
    return parse_document(str(path), data), data


def parse_document(where: str, data: bytes) -> GradeDocument:
    """``data`` (the bytes of ``where``) as a grade document;
    :class:`Unreadable` naming ``where`` when it is not one."""
    from pydantic import ValidationError

    from ..record.validation import describe

    try:
        return GradeDocument.from_bytes(data)
    except StrictJSONError as error:
        raise Unreadable(f"{where}: {error}") from error
    except ValidationError as error:
        raise Unreadable(
            f"{where}: not a grade document: {describe(error, whole='(document)')}"
        ) from error
