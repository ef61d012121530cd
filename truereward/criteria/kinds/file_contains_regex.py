"""``file_contains_regex``: a regular expression matches somewhere in the
text of ``path``.

Options: ``path``, ``pattern`` (Python ``re`` syntax, no flags: write
``(?i)`` for them). The search is bounded (:mod:`..patterns`): a pattern
that does not compile is ``CASE_INVALID``, one that runs out of the reader's
``regex_timeout`` is ``CHECK_GAVE_UP``. The file is read as for
``file_contains``.
"""

from __future__ import annotations

from ..context import Context
from ..kind import CriterionKind, Options, Outcome
from ..options import Path
from ..patterns import search
from ..values import shown


class FileContainsRegex(Options):
    path: Path
    pattern: str


def evaluate(options: FileContainsRegex, context: Context) -> Outcome:
    files = context.workspace()
    where = files.shown(options.path)
    content = files.text(options.path)
    found = search(options.pattern, content, timeout=context.regex_timeout, what=where)
    return Outcome.binary(found is not None, f"{where} has no match for {shown(options.pattern)}")


CRITERION = CriterionKind(
    name="file_contains_regex",
    description="a regular expression matches a file's text",
    options=FileContainsRegex,
    evaluate=evaluate,
)
