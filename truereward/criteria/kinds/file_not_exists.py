"""``file_not_exists``: ``path`` does not exist in the workspace.

Options: ``path``. Pass when it is absent, else fail. A path that leads out
of the workspace through a symlink fails too: the run planted the link, and
what lies outside is not looked at (never a pass a link could buy).
"""

from __future__ import annotations

from ..context import Context
from ..kind import CriterionKind, Options, Outcome
from ..options import Path


class FileNotExists(Options):
    path: Path


def evaluate(options: FileNotExists, context: Context) -> Outcome:
    files = context.workspace()
    return Outcome.binary(
        not files.exists(options.path), f"{files.shown(options.path)} exists, and it must not"
    )


CRITERION = CriterionKind(
    name="file_not_exists",
    description="a file does not exist in the workspace",
    options=FileNotExists,
    evaluate=evaluate,
)
