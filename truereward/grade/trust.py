"""Whether a grade found where the run could have written it is the run's grade.

A run's logs directory is written by the graded agent before the verifier
runs: a ``grade.json`` found there may be forged, built with this library's
own API from rows of the agent's choosing while naming the run's real
evidence and its true sha256. Nothing in such a document can be believed on
its word, so it is believed only when the grader, grading the evidence
again now, reaches the same grade (docs/hostile.md, "A grade the run could
have written"). :func:`disagreement` compares the two.
"""

from __future__ import annotations

from typing import Any

from .document import GradeDocument

__all__ = ["disagreement"]


def disagreement(
    standing: GradeDocument, graded: GradeDocument, *, any_scheme: bool = False
) -> str | None:
    """``None`` when ``standing`` says what ``graded`` (the evidence graded
    again now) says, else why not, in a few words.

    They agree when ``standing`` folds to the figures it states and both
    have the same scheme, the same evidence digests, the same inputs and the
    same rows. What cannot tell a forgery from the truth is left out: the
    run metadata and attempts, and the ``why`` of refusals and ungradable
    rows (an outage's message changes from one attempt to the next).
    ``any_scheme``: a grade of the same rows under another scheme agrees too
    (it is an honest grade of this evidence, only another one). Pure.
    """
    from .readback import Unreadable, verify_document

    try:
        disagreements = verify_document(standing)
    except Unreadable as error:
        return str(error)
    if disagreements:
        return f"it does not fold to what it states ({disagreements[0]})"
    if standing.scheme != graded.scheme and not any_scheme:
        return f"it is a {standing.scheme} grade, not {graded.scheme}"
    read = _evidence(graded)
    recorded = _evidence(standing)
    if read != recorded:
        missing = sorted(read - recorded)
        if missing:
            path = missing[0][0]
            if path in {where for where, _ in recorded}:
                return f"it was not read from {path} as it is now"
            return f"it records no reading of {path}"
        return f"it records a reading of {sorted(recorded - read)[0][0]} this grading did not make"
    if _inputs(standing) != _inputs(graded):
        return "it was folded with other inputs (case set, refusals or checks)"
    ours = [_row(row) for row in graded.detail]
    theirs = [_row(row) for row in standing.detail]
    if ours != theirs:
        now = {row["id"]: row for row in ours}
        stated = {row["id"]: row for row in theirs}
        changed = sorted(
            case for case in now.keys() | stated.keys() if now.get(case) != stated.get(case)
        )
        shown = changed[0] if changed else theirs[0]["id"]
        return (
            f"its rows are not what the evidence gives now ({shown}: "
            f"{_verdict(stated.get(shown))} stated, {_verdict(now.get(shown))} now)"
        )
    return None


def _evidence(document: GradeDocument) -> set[tuple[str, str]]:
    return {(item.path, item.sha256) for item in document.evidence}


def _inputs(document: GradeDocument) -> dict[str, Any]:
    dumped = document.inputs.model_dump(mode="json")
    for refusal in dumped.get("refusals", ()):
        refusal.pop("why", None)
    return dumped


def _row(row: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = row.to_row()
    if dumped.get("verdict") == "ungradable":
        dumped.pop("why", None)
    return dumped


def _verdict(row: dict[str, Any] | None) -> str:
    return "no row" if row is None else str(row.get("verdict"))
