"""Re-scoring a report at a minimum confidence, without a provider."""

from __future__ import annotations

from ..judging.answers import check_unit_interval
from .report import Calibration, _score

__all__ = ["at_min_confidence"]


def at_min_confidence(report: Calibration, min_confidence: float) -> Calibration:
    """The report re-scored with every decided answer whose confidence is
    strictly below ``min_confidence`` made undecided (an abstention).

    No provider is called: the report's own answers are re-decided. Earlier
    abstentions stay abstentions whatever their confidence, so thresholds
    only ever add abstentions: applying ``a`` then ``b`` equals applying
    ``max(a, b)``, which is what the new report records as
    ``min_confidence``. Latencies and total time are kept. ``min_confidence``
    is a finite number from 0 to 1 (0 changes nothing).
    """
    threshold = check_unit_interval(min_confidence, "min_confidence")
    answers = tuple(
        {
            name: answer.undecide() if answer.confidence < threshold else answer
            for name, answer in case_answers.items()
        }
        for case_answers in report.answers
    )
    applied = threshold if report.min_confidence is None else max(threshold, report.min_confidence)
    return _score(
        report.questions_asked,
        report.cases,
        answers,
        report.latencies_ms,
        report.total_ms,
        min_confidence=applied,
    )
