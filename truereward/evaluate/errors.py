"""Errors of the evaluation model."""

from __future__ import annotations

from ..util.exceptions import TruerewardError

__all__ = ["EvaluationError", "NotEvaluated"]


class EvaluationError(TruerewardError):
    """An evaluation could not produce a valid report: an evaluator returned
    something that is not a :class:`~truereward.evaluate.EvaluationReport`, or a
    composite child gave no score or no decided verdict. Never turned into a
    score of 0."""


class NotEvaluated(TruerewardError):
    """The case was not evaluated: a ``fail_fast`` experiment stopped (at
    another case's error) before this case started, or while it ran."""
