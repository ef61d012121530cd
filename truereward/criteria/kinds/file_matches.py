"""``file_matches``: the text of ``path`` is ``expected``, surrounding
whitespace aside (both sides stripped).

Options: ``path``, ``expected``. Read as for ``file_contains``.
"""

from __future__ import annotations

from ..context import Context
from ..kind import CriterionKind, Options, Outcome
from ..options import Path


class FileMatches(Options):
    path: Path
    expected: str


def evaluate(options: FileMatches, context: Context) -> Outcome:
    files = context.workspace()
    content = files.text(options.path)
    return Outcome.binary(
        content.strip() == options.expected.strip(),
        f"{files.shown(options.path)} does not hold the expected text",
    )


CRITERION = CriterionKind(
    name="file_matches",
    description="a file's text is the expected text",
    options=FileMatches,
    evaluate=evaluate,
)
