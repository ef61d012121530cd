"""How often a judge gives the same decision when asked again."""

from __future__ import annotations

from collections.abc import Sequence

from ..judging.answers import same_decision
from .errors import CalibrationError
from .report import Calibration

__all__ = ["stability"]


def stability(reports: Sequence[Calibration]) -> dict[str, float | None]:
    """Per question, the share of cases whose decision is identical in every
    report, abstentions included (an abstention every time is stable; an
    abstention once and a decision once is not). Labels play no part:
    stability does not measure correctness.

    One report is perfectly stable (1.0 for each question). A question is
    ``None`` when the reports have no case (nothing to compare). Raises
    CalibrationError on an empty list and on misaligned reports: different
    question names (in order), case counts or case ids.
    """
    items = list(reports)
    if not items:
        raise CalibrationError("reports: at least one report is needed")
    for index, report in enumerate(items):
        if not isinstance(report, Calibration):
            raise CalibrationError(f"reports[{index}]: a Calibration, got {type(report).__name__}")
    first = items[0]
    names = [question.name for question in first.questions_asked]
    ids = [case.id for case in first.cases]
    for index, report in enumerate(items[1:], start=1):
        other_names = [question.name for question in report.questions_asked]
        if other_names != names:
            raise CalibrationError(
                f"reports[{index}]: asks {other_names!r}, reports[0] asks {names!r}"
            )
        if len(report.decisions) != len(first.decisions):
            raise CalibrationError(
                f"reports[{index}]: {len(report.decisions)} cases, "
                f"reports[0] has {len(first.decisions)}"
            )
        other_ids = [case.id for case in report.cases]
        if other_ids != ids:
            position = next(
                i for i, (a, b) in enumerate(zip(ids, other_ids, strict=True)) if a != b
            )
            raise CalibrationError(
                f"reports[{index}]: case {position} is {other_ids[position]!r}, "
                f"in reports[0] it is {ids[position]!r}"
            )

    def stable(name: str, case: int) -> bool:
        decision = first.decisions[case][name]
        return all(same_decision(report.decisions[case][name], decision) for report in items[1:])

    count = len(first.decisions)
    return {
        name: sum(stable(name, case) for case in range(count)) / count if count else None
        for name in names
    }
