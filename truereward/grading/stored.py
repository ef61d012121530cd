"""A grade already published at a run's target.

A run whose target holds a readable ``grade.json`` is not read again (a
document records when it was graded, so a second grade could not be
published over the first): the stored document is published once more,
which writes nothing when the set is complete and repairs it when a publish
was interrupted. A ``grade.json`` that is not a readable grade document is
not a stored grade: the run is graded, and publishing over the foreign file
is refused as a conflict. docs/prefect.md, "What happens to each run".
"""

from __future__ import annotations

import os

from pydantic import ValidationError

from ..grade.document import GradeDocument
from ..grade.files import GRADE
from ..publishing import PublishError, open_store
from ..util import safefile
from ..util.strictjson import StrictJSONError
from ..util.target import Target

__all__ = [
    "MAX_STORED_BYTES",
    "parse_stored",
    "standing_bytes",
    "stored_grade",
    "stored_grade_or_none",
]

#: A stored grade.json larger than this is not read (documents are
#: kilobytes): the package's one read limit, :data:`truereward.util.safefile.LIMIT`.
MAX_STORED_BYTES = safefile.LIMIT


def _read_local(directory: str) -> bytes | None:
    """The bytes of ``directory/grade.json``; ``None`` when there is none,
    or it is not a regular file (a symlink, a FIFO, a directory is never a
    grade of ours), or it is too large to be one."""
    try:
        return safefile.read_regular(os.path.join(directory, GRADE), limit=MAX_STORED_BYTES)
    except (FileNotFoundError, NotADirectoryError, safefile.NotAFile, safefile.TooLarge):
        return None


def standing_bytes(target: Target) -> bytes | None:
    """The bytes of the ``grade.json`` standing at ``target``, whatever they
    are (``None`` when there is none, or it is a symlink or too large).
    ``OSError`` / :class:`~truereward.PublishError` when the target cannot
    be read."""
    if target.is_local:
        return _read_local(target.path)
    try:
        return open_store(target).read(GRADE)
    except FileNotFoundError:
        return None


def parse_stored(data: bytes) -> tuple[GradeDocument | None, str]:
    """``data`` (a standing ``grade.json``) as a grade document, or ``None``
    and the first line of why it is not one."""
    try:
        return GradeDocument.from_bytes(data), ""
    except (StrictJSONError, ValidationError, ValueError) as error:
        return None, str(error).splitlines()[0][:200]


def stored_grade(target: Target) -> GradeDocument | None:
    """The grade document published at ``target``, or ``None`` when there is
    none (or what is there is not a readable grade document). ``OSError`` /
    :class:`~truereward.PublishError` when the target cannot be read."""
    data = standing_bytes(target)
    return None if data is None else parse_stored(data)[0]


def stored_grade_or_none(target: Target) -> GradeDocument | None:
    """:func:`stored_grade`, with a target that cannot be read taken as
    holding none (publishing there will tell what is wrong)."""
    try:
        return stored_grade(target)
    except (OSError, PublishError):
        return None
