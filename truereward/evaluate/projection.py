"""ProjectionEvaluator: evaluate a part of a larger subject.

A case's subject is often an aggregate (a run with its answer, its logs, its
cost); a domain evaluator wants one part of it. ``ProjectionEvaluator(
evaluator, projection)`` applies ``projection`` (a function, sync or async)
to the subject and evaluates what it returns. An exception from the
projection propagates: the subject could not be evaluated.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from .evaluator import Evaluator, call_evaluator, check_evaluator
from .report import EvaluationReport

__all__ = ["ProjectionEvaluator"]

T = TypeVar("T")
S = TypeVar("S")


class ProjectionEvaluator(Generic[T, S]):
    """Evaluates ``evaluator`` on ``projection(subject)``."""

    def __init__(
        self, evaluator: Evaluator[S], projection: Callable[[T], S | Awaitable[S]]
    ) -> None:
        check_evaluator(evaluator)
        if not callable(projection):
            raise TypeError(f"projection must be callable, got {type(projection).__name__}")
        self.evaluator = evaluator
        self.projection = projection

    async def evaluate(self, subject: T) -> EvaluationReport:
        """Project, then evaluate the projection."""
        projected: Any = self.projection(subject)
        if inspect.isawaitable(projected):
            projected = await projected
        return await call_evaluator(self.evaluator, projected)
