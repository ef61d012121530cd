"""``diff_ratio``: how close the text of ``path`` is to ``expected``, graded
by degree.

Options: ``path``, ``expected``, ``min`` (the ratio that passes, default
1.0), ``timeout`` (seconds, default 30). The score is
``difflib.SequenceMatcher(None, text.strip(), expected.strip()).ratio()``
(rewardkit's), computed within the time bound (:mod:`..ratio`: running out
is ``GRADER_TIMEOUT``). A file absent or unreadable (as for
``file_contains``) fails with score 0.0, as rewardkit scores it.
"""

from __future__ import annotations

from ..context import Context
from ..kind import CriterionKind, GradedOptions, Outcome
from ..options import Path, Seconds
from ..ratio import text_ratio


class DiffRatio(GradedOptions):
    path: Path
    expected: str
    timeout: Seconds = 30.0


def evaluate(options: DiffRatio, context: Context) -> Outcome:
    files = context.workspace()
    where = files.shown(options.path)
    content = files.text(options.path)
    ratio = text_ratio(content.strip(), options.expected.strip(), timeout=options.timeout)
    return Outcome.graded(ratio, options.min, f"{where}: ratio {ratio:.4f} (min {options.min:g})")


CRITERION = CriterionKind(
    name="diff_ratio",
    description="how close a file's text is to the expected text (0 to 1)",
    options=DiffRatio,
    evaluate=evaluate,
)
