"""What one row may carry into a grade document: its text cut short, its
lists of observations and reruns kept to a few.

:func:`bounded_row` keeps a grade under what ``truereward verify`` reads:
every free text (``why``, observations', reruns', check answers') at most
:data:`MAX_TEXT` characters, ending with a marker saying how many were cut;
``observations`` and ``reruns`` at most :data:`MAX_ITEMS`, the last saying
how many more were left out (a failed rerun among them keeps it failed, so
flakiness holds). Nothing that decides a verdict is touched, and bounding
twice changes nothing. docs/hostile.md, "Bounds".
"""

from __future__ import annotations

from collections.abc import Sequence

from ..record.cases import FAIL, CaseResult, CheckAnswer, Observation, Rerun

__all__ = ["MAX_ITEMS", "MAX_TEXT", "bounded_row", "cut"]

#: The most characters of one text field of a row kept in a grade document.
MAX_TEXT = 2000
#: The most observations, and the most reruns, of one row kept.
MAX_ITEMS = 20


def cut(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` when it has at most ``limit`` characters; else its start and
    a marker naming how many characters were cut, ``limit`` in all."""
    if len(text) <= limit:
        return text
    # The marker is sized for the longest count it can name, so the result
    # never passes the limit whatever the count turns out to be.
    room = limit - len(_marker(len(text)))
    return text[:room] + _marker(len(text) - room)


def _marker(count: int) -> str:
    return f" ... [{count} characters cut]"


def _fits(row: CaseResult) -> bool:
    if len(row.why) > MAX_TEXT:
        return False
    if not (row.observations or row.reruns or row.checks):
        return True  # most rows: checked at the cost of one len()
    if len(row.observations) > MAX_ITEMS or len(row.reruns) > MAX_ITEMS:
        return False
    return (
        all(
            max(len(item.name), len(item.verdict), len(item.why)) <= MAX_TEXT
            for item in row.observations
        )
        and all(len(item.why) <= MAX_TEXT for item in row.reruns)
        and all(len(item.why) <= MAX_TEXT for item in row.checks)
    )


def _observations(items: Sequence[Observation]) -> list[Observation]:
    kept = [
        Observation(name=cut(item.name), verdict=cut(item.verdict), why=cut(item.why))
        for item in items[: MAX_ITEMS - 1 if len(items) > MAX_ITEMS else MAX_ITEMS]
    ]
    if len(items) > MAX_ITEMS:
        left = len(items) - len(kept)
        kept.append(Observation(name="...", verdict="", why=f"{left} more observations left out"))
    return kept


def _reruns(items: Sequence[Rerun]) -> list[Rerun]:
    kept = [
        Rerun(verdict=item.verdict, why=cut(item.why))
        for item in items[: MAX_ITEMS - 1 if len(items) > MAX_ITEMS else MAX_ITEMS]
    ]
    if len(items) > MAX_ITEMS:
        left = items[len(kept) :]
        failed = sum(item.verdict == FAIL for item in left)
        kept.append(
            Rerun(
                verdict="fail" if failed else "pass",
                why=f"{len(left)} more reruns left out, {failed} of them failed",
            )
        )
    return kept


def bounded_row(row: CaseResult) -> CaseResult:
    """``row`` within the bounds of the module docstring (``row`` itself
    when it already is)."""
    if _fits(row):
        return row
    return row.model_copy(
        update={
            "why": cut(row.why),
            "observations": tuple(_observations(row.observations)),
            "reruns": tuple(_reruns(row.reruns)),
            "checks": tuple(
                CheckAnswer(check=item.check, holds=item.holds, why=cut(item.why))
                for item in row.checks
            ),
        }
    )
