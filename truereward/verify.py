"""Checking a published grade instead of trusting it.

:func:`verify_document` folds a document's ``detail`` again with the inputs
and scheme it records, and lists every stored field that disagrees.
:func:`verify_published` does that for the ``grade.json`` in a directory and
checks the files beside it: the reward files present exactly when the grade
is gradable and carrying its figures, the CTRF view being that grade's,
``reward-details.json`` holding its details, and an evidence ``ctrf.json``
still holding the bytes read. Reward files where no ``grade.json`` stands
are :class:`RewardWithoutGrade`. docs/hostile.md, "A grade the run could
have written".
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .grade.ctrfreport import ctrf
from .grade.document import GradeDocument
from .grade.files import (
    CTRF,
    GRADE,
    PREVIOUS_GRADE,
    REWARD_DETAILS,
    REWARD_FILES,
    REWARD_JSON,
    REWARD_TXT,
    reward_details,
    reward_json,
)
from .grade.readback import Disagreement, Unreadable, load_document, parse_document, verify_document
from .util.exceptions import TruerewardError
from .util.strictjson import StrictJSONError, loads

if TYPE_CHECKING:
    from .util.target import Target

__all__ = [
    "Disagreement",
    "RewardWithoutGrade",
    "Unreadable",
    "repair_target",
    "verify_document",
    "verify_published",
    "verify_set",
    "verify_target",
]


#: A published set read by name: the bytes of one file, ``None`` when absent.
Files = Callable[[str], "bytes | None"]


def _local_files(directory: Path) -> Files:
    from .util import safefile

    def read(name: str) -> bytes | None:
        try:
            return safefile.read_regular(str(directory / name))
        except FileNotFoundError:
            return None
        except OSError as error:  # a FIFO, a directory, a symlink: not a file of ours
            raise NotOurs(name, error.strerror or str(error)) from None

    return read


class RewardWithoutGrade(Unreadable):
    """Reward files stand where no ``grade.json`` does: a reward no grade
    vouches for (planted by the run, left by another writer, or by a
    publish that died after clearing part of them). There is no grade to
    check or repair from; ``found`` names each file. Publishing the run's
    grade there removes them before its ``grade.json`` appears."""

    def __init__(self, where: str, names: list[str]) -> None:
        self.found = [
            Disagreement(name, "present", f"absent (no {GRADE} stands beside it)") for name in names
        ]
        them = "it" if len(names) == 1 else "them"
        super().__init__(
            f"{where}: {', '.join(names)} with no {GRADE} beside {them}: a reward no grade "
            "vouches for (planted, or left by another writer or an interrupted publish); "
            f"publishing the run's grade there removes {them}"
        )


class NotOurs(TruerewardError):
    """Something stands under one of our names that is not a file we could
    have written (a directory, a FIFO, a symlink, an unreadable file)."""

    def __init__(self, name: str, what: str) -> None:
        super().__init__(f"{name}: {what}")
        self.name = name
        self.what = what


def _check_details(document: GradeDocument, read: Files) -> list[Disagreement]:
    """``reward-details.json``: present exactly beside a gradable grade with a
    declared scoring, and its details."""
    data = read(REWARD_DETAILS)
    wanted = document.gradable and document.inputs.scoring is not None
    if not wanted:
        if data is None:
            return []
        why = "ungradable" if not document.gradable else "without a declared scoring"
        return [Disagreement(REWARD_DETAILS, "present", f"absent (the grade is {why})")]
    return _compare_json(
        REWARD_DETAILS, data, reward_details(document), "other details", "the reward details"
    )


def _compare_json(
    name: str, data: bytes | None, expected: Any, differs: str, what: str
) -> list[Disagreement]:
    """The stored JSON file ``name`` (``data``; ``None``: absent) against
    ``expected``, which is ``what`` of grade.json; ``differs`` says a mismatch."""
    if data is None:
        return [Disagreement(name, "absent", f"{what} of grade.json")]
    try:
        stored: Any = loads(data)
    except StrictJSONError as error:
        stored = f"not strict JSON: {error}"
    if stored != expected:
        return [Disagreement(name, differs, f"{what} of grade.json")]
    return []


def _check_rewards(document: GradeDocument, read: Files) -> list[Disagreement]:
    found = _check_details(document, read)
    text = read(REWARD_TXT)
    data = read(REWARD_JSON)
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


def _check_document(document: GradeDocument, data: bytes) -> list[Disagreement]:
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
    return found


def verify_set(document: GradeDocument, data: bytes, read: Files) -> list[Disagreement]:
    """The files beside ``grade.json`` (``data`` its bytes) against the
    grade: the reward files present exactly when it is gradable and saying
    its figures, its CTRF view under the name it says, and a ``ctrf.json``
    it was read from still holding the bytes it read."""
    found = []
    checks = [_check_rewards, _check_view_of(data)]
    if document.publication.ctrf != CTRF:
        checks.append(_check_kept_evidence)
    for check in checks:
        try:
            found += check(document, read)
        except NotOurs as error:
            found.append(Disagreement(error.name, error.what, "a file of this grade"))
    return found


def _check_view_of(data: bytes) -> Callable[[GradeDocument, Files], list[Disagreement]]:
    def check(document: GradeDocument, read: Files) -> list[Disagreement]:
        return _check_view(document, data, read)

    return check


def verify_published(target: str | Path) -> tuple[GradeDocument, list[Disagreement]]:
    """Verify a published grade: ``target`` is a directory holding
    ``grade.json`` (its siblings are checked too) or a ``grade.json`` path
    (only the document is checked). Returns the document and the
    disagreements (empty when consistent); :class:`Unreadable` when the
    document cannot be read, :class:`RewardWithoutGrade` when the directory
    holds reward files and no ``grade.json``."""
    path = Path(target)
    directory = path if path.is_dir() else None
    if directory is not None and not (path / GRADE).exists():
        orphans = [name for name in REWARD_FILES if os.path.lexists(path / name)]
        if orphans:
            raise RewardWithoutGrade(str(path), orphans)
        if (path / PREVIOUS_GRADE).exists():
            raise Unreadable(_unfinished(str(path)))
    document, data = load_document(path / GRADE if directory else path)
    found = _check_document(document, data)
    if directory is None:
        return document, found
    return document, found + verify_set(document, data, _local_files(directory))


def _unfinished(where: str) -> str:
    return (
        f"{where}: no {GRADE}: a grading session began here and did not publish (it was "
        f"killed, or stopped by a timeout), so there is no grade; {PREVIOUS_GRADE} is the "
        "grade that stood before it, set aside"
    )


def verify_target(target: Target) -> tuple[GradeDocument, list[Disagreement]]:
    """:func:`verify_published` for any target: a local directory, or an
    object-store prefix, where each object after ``grade.json`` must also
    name that grade in its metadata (a superseded publisher's late write of
    the same bytes is found that way)."""
    if target.is_local:
        return verify_published(target.path)
    from .publishing import PublishError, open_store

    try:
        store = open_store(target)
        data = store.read(GRADE)
        if data is None:
            orphans = [name for name in REWARD_FILES if store.etag(name) is not None]
            if orphans:
                raise RewardWithoutGrade(target.url, orphans)
            if store.read(PREVIOUS_GRADE) is not None:
                raise Unreadable(_unfinished(target.url))
            raise Unreadable(f"{target.url}/{GRADE}: no such object")
    except PublishError as error:
        raise Unreadable(str(error)) from error
    document = parse_document(f"{target.url}/{GRADE}", data)
    found = _check_document(document, data) + verify_set(document, data, store.read)
    if store.has_metadata:
        digest = hashlib.sha256(data).hexdigest()
        for name in (document.publication.ctrf, REWARD_DETAILS, REWARD_JSON, REWARD_TXT):
            present = store.etag(name) is not None
            named = store.grade_of(name) if present else None
            if present and named != digest:
                found.append(
                    Disagreement(
                        name,
                        f"metadata names grade {named}" if named else "no grade in its metadata",
                        f"grade {digest}",
                    )
                )
    return document, found


def repair_target(target: Target) -> list[str]:
    """Make the files beside the ``grade.json`` that stands at ``target``
    agree with it: the standing grade is published again, which rewrites
    what is missing or stray (reward files beside a refusal, an older
    grade's CTRF view, a late write whose metadata names another grade).
    Returns what was written or removed; :class:`Unreadable` when no grade
    stands there to repair from."""
    from .publishing import PublishError, publish

    if target.is_local:
        document, _ = load_document(Path(target.path) / GRADE)
    else:
        from .publishing import open_store

        try:
            data = open_store(target).read(GRADE)
        except PublishError as error:
            raise Unreadable(str(error)) from error
        if data is None:
            raise Unreadable(f"{target.url}/{GRADE}: no such object")
        document = parse_document(f"{target.url}/{GRADE}", data)
    try:
        result = publish(document, target)
    except PublishError as error:
        raise Unreadable(f"{target.url}: cannot repair: {error}") from error
    return [
        *(f"wrote {name}" for name in result.written),
        *(f"removed {name}" for name in result.removed),
    ]


def _check_view(document: GradeDocument, data: bytes, read: Files) -> list[Disagreement]:
    """Our CTRF view, under the name the document says."""
    name = document.publication.ctrf
    expected = ctrf(document)
    expected["extra"]["truereward"]["grade_sha256"] = hashlib.sha256(data).hexdigest()
    return _compare_json(name, read(name), expected, "a different report", "the CTRF report")


def _check_kept_evidence(document: GradeDocument, read: Files) -> list[Disagreement]:
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
    data = read(CTRF)
    if data is None:
        return [Disagreement(CTRF, "absent", "the evidence the grade was read from")]
    if hashlib.sha256(data).hexdigest() not in recorded:
        return [
            Disagreement(CTRF, "changed since it was read", "the evidence the grade was read from")
        ]
    return []
