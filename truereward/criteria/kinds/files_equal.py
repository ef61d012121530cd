"""``files_equal``: two files of the workspace hold the same text,
surrounding whitespace aside.

Options: ``path1``, ``path2``. Either file absent (or unreadable as for
``file_contains``) fails the case: both are the workspace's. An absolute
path (a live workspace only) names a file of the environment, such as a
reference the verifier ships.
"""

from __future__ import annotations

from ..context import Context
from ..kind import CriterionKind, Options, Outcome
from ..options import Path


class FilesEqual(Options):
    path1: Path
    path2: Path


def evaluate(options: FilesEqual, context: Context) -> Outcome:
    files = context.workspace()
    texts = [files.text(path).strip() for path in (options.path1, options.path2)]
    return Outcome.binary(
        texts[0] == texts[1],
        f"{files.shown(options.path1)} and {files.shown(options.path2)} differ",
    )


CRITERION = CriterionKind(
    name="files_equal",
    description="two files hold the same text",
    options=FilesEqual,
    evaluate=evaluate,
)
