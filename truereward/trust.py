"""When a grade found at a target is taken for the run's grade.

A run's logs directory is written by the graded agent before the verifier
runs: a ``grade.json`` found there may be planted (a forged, valid-looking
grade of 1.0 beside a planted ``reward.txt``). A standing grade is
**trusted** only when

1. it is a grade document that folds again to the figures it states
   (``truereward verify``'s check of the document), and
2. it was read from the evidence as it is now: every evidence file the new
   grading read is recorded in the standing grade with the same path and
   sha256, and the new grading read at least one (a grade read from no
   file cannot be tied to anything).

A grade that is not trusted is not a grade of this evidence: the grader
replaces it (naming its digest, so a grade changed meanwhile is still a
conflict, never overwritten), so a planted grade, and the reward files
beside it, never become the published reward. A trusted grade is kept by
the ``grade-run`` flow (it is the run's grade) and is a conflict for the
command line (another grade of the same evidence: the caller names it in
``--replaces`` to replace it).

:func:`judge` is pure: it compares documents and digests the caller has.
"""

from __future__ import annotations

from collections.abc import Iterable

from .document import EvidenceDigest, GradeDocument

__all__ = ["judge"]


def judge(standing: GradeDocument, evidence: Iterable[EvidenceDigest]) -> str | None:
    """``None`` when ``standing`` is trusted for a grading that read
    ``evidence`` (its digests as they are now), else why not (module
    docstring)."""
    from .readback import Unreadable, verify_document

    now = list(evidence)
    if not now:
        return "the grading reads no evidence file it could be tied to"
    recorded = {(item.path, item.sha256) for item in standing.evidence}
    for item in now:
        if (item.path, item.sha256) not in recorded:
            paths = {path for path, _ in recorded}
            return (
                f"it was not read from {item.path} as it is now"
                if item.path in paths
                else f"it records no reading of {item.path}"
            )
    try:
        disagreements = verify_document(standing)
    except Unreadable as error:
        return str(error)
    if disagreements:
        return f"it does not fold to what it states ({disagreements[0]})"
    return None
