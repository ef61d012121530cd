"""Checking a published grade instead of trusting it.

:func:`verify_document` folds a document's ``detail`` again, with the inputs
and scheme it records, and lists every stored field that disagrees.
:func:`verify_published` does that for the ``grade.json`` in a directory and
also checks the files beside it: ``reward.txt`` and ``reward.json`` present
exactly when the grade is gradable and carrying its figures, the CTRF view
(``ctrf.json``, or ``grade-ctrf.json`` as ``publication.ctrf`` says) being
the CTRF report of that grade, and a ``ctrf.json`` the grade was read from
still holding the bytes it read.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .ctrfreport import ctrf
from .document import GradeDocument
from .files import CTRF, GRADE, PREVIOUS_GRADE, REWARD_JSON, REWARD_TXT, reward_json
from .folding import Fold, fold_prepared
from .strictjson import StrictJSONError, loads

__all__ = ["Disagreement", "Unreadable", "verify_document", "verify_published"]


class Unreadable(Exception):
    """The grade could not be read at all (missing, not strict JSON, not a
    grade document, or folded under a scheme this process does not know), or
    a file beside it could not be read to be checked (a directory)."""


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
    from .folding import UnknownScheme

    try:
        again = fold_prepared(list(document.detail), document.inputs, document.scheme)
    except UnknownScheme as error:
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
    from pydantic import ValidationError

    try:
        data = path.read_bytes()
    except OSError as error:
        raise Unreadable(f"{path}: {error.strerror or error}") from error
    try:
        return GradeDocument.from_bytes(data), data
    except StrictJSONError as error:
        raise Unreadable(f"{path}: {error}") from error
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in item['loc']) or '(document)'}: {item['msg']}"
            for item in error.errors()[:5]
        )
        raise Unreadable(f"{path}: not a grade document: {problems}") from error


def _read_optional(path: Path) -> bytes | None:
    """The file's bytes, ``None`` when nothing stands there; :class:`Unreadable`
    when something stands there that cannot be read (a directory, no permission)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise Unreadable(f"{path}: {error.strerror or error}") from error


def _check_rewards(document: GradeDocument, directory: Path) -> list[Disagreement]:
    found = []
    text = _read_optional(directory / REWARD_TXT)
    data = _read_optional(directory / REWARD_JSON)
    if not document.gradable:
        if text is not None:
            found.append(Disagreement(REWARD_TXT, "present", "absent (the grade is ungradable)"))
        if data is not None:
            found.append(Disagreement(REWARD_JSON, "present", "absent (the grade is ungradable)"))
        return found
    if text is None:
        found.append(Disagreement(REWARD_TXT, "absent", f"{document.reward!r}"))
    else:
        try:
            value: Any = float(text.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            value = text[:40]
        if value != document.reward:
            found.append(Disagreement(REWARD_TXT, value, document.reward))
    if data is None:
        found.append(Disagreement(REWARD_JSON, "absent", reward_json(document)))
    else:
        try:
            flat = loads(data)
        except StrictJSONError as error:
            flat = f"not strict JSON: {error}"
        if flat != reward_json(document):
            found.append(Disagreement(REWARD_JSON, flat, reward_json(document)))
    return found


def verify_published(target: str | Path) -> tuple[GradeDocument, list[Disagreement]]:
    """Verify a published grade: ``target`` is a directory holding
    ``grade.json`` (its siblings are checked too) or a ``grade.json`` path
    (only the document is checked). Returns the document and the
    disagreements (empty when consistent); :class:`Unreadable` when the
    document cannot be read."""
    path = Path(target)
    directory = path if path.is_dir() else None
    if directory is not None and not (path / GRADE).exists() and (path / PREVIOUS_GRADE).exists():
        raise Unreadable(
            f"{path}: no {GRADE}: a grading session began here and did not publish (it was "
            f"killed, or stopped by a timeout), so there is no grade; {PREVIOUS_GRADE} is the "
            "grade that stood before it, set aside"
        )
    document, data = load_document(path / GRADE if directory else path)
    found = verify_document(document)
    if data != document.to_bytes():
        # Same content in other bytes: its sha256 (the grade's name, and what
        # ctrf.json records) is not the one its publisher computed.
        found.append(
            Disagreement(
                GRADE,
                "bytes not in canonical form",
                "sorted keys, 2-space indent, UTF-8, one final newline",
            )
        )
    if directory is None:
        return document, found
    found += _check_rewards(document, directory)
    found += _check_view(document, data, directory)
    if document.publication.ctrf != CTRF:
        found += _check_kept_evidence(document, directory)
    return document, found


def _check_view(document: GradeDocument, data: bytes, directory: Path) -> list[Disagreement]:
    """Our CTRF view, under the name the document says."""
    name = document.publication.ctrf
    expected = ctrf(document)
    expected["extra"]["truereward"]["grade_sha256"] = hashlib.sha256(data).hexdigest()
    stored = _read_optional(directory / name)
    if stored is None:
        return [Disagreement(name, "absent", "the CTRF report of grade.json")]
    try:
        parsed = loads(stored)
    except StrictJSONError as error:
        parsed = f"not strict JSON: {error}"
    if parsed != expected:
        return [Disagreement(name, "a different report", "the CTRF report of grade.json")]
    return []


def _check_kept_evidence(document: GradeDocument, directory: Path) -> list[Disagreement]:
    """The ``ctrf.json`` left beside a grade read from it: still the bytes
    the grade read (one of its evidence digests). A ``ctrf.json`` the grade
    was not read from (another tool's report, beside a pytest session's
    grade) is not ours to check."""
    recorded = {
        item.sha256
        for item in document.evidence
        if item.path.replace("\\", "/").rsplit("/", 1)[-1] == CTRF
    }
    if not recorded:
        return []
    data = _read_optional(directory / CTRF)
    if data is None:
        return [Disagreement(CTRF, "absent", "the evidence the grade was read from")]
    if hashlib.sha256(data).hexdigest() not in recorded:
        return [
            Disagreement(CTRF, "changed since it was read", "the evidence the grade was read from")
        ]
    return []
