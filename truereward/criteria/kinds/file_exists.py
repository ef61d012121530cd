"""``file_exists``: ``path`` exists in the workspace (a file, a directory,
anything; a symlink is followed as far as it stays inside).

Options: ``path``. Pass when it exists, else fail. A path that leads out of
the workspace through a symlink fails (what lies outside is not looked at).
"""

from __future__ import annotations

from ..context import Context
from ..kind import CriterionKind, Options, Outcome
from ..options import Path


class FileExists(Options):
    path: Path


def evaluate(options: FileExists, context: Context) -> Outcome:
    files = context.workspace()
    return Outcome.binary(files.exists(options.path), f"{files.shown(options.path)} does not exist")


CRITERION = CriterionKind(
    name="file_exists",
    description="a file exists in the workspace",
    options=FileExists,
    evaluate=evaluate,
)
