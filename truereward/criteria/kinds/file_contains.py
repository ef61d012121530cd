"""``file_contains``: the text of ``path`` contains ``text``.

Options: ``path``, ``text``. The file is read as Python's text mode reads
it (UTF-8, universal newlines). Absent, not UTF-8, not a regular file, too
large, or leading out of the workspace: the case fails.
"""

from __future__ import annotations

from ..context import Context
from ..kind import CriterionKind, Options, Outcome
from ..options import Path
from ..values import shown


class FileContains(Options):
    path: Path
    text: str


def evaluate(options: FileContains, context: Context) -> Outcome:
    files = context.workspace()
    content = files.text(options.path)
    return Outcome.binary(
        options.text in content,
        f"{files.shown(options.path)} does not contain {shown(options.text)}",
    )


CRITERION = CriterionKind(
    name="file_contains",
    description="a file's text contains a string",
    options=FileContains,
    evaluate=evaluate,
)
