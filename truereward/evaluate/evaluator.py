"""Evaluator: anything with ``evaluate(subject)`` returning a EvaluationReport.

``evaluate`` may be a plain method or a coroutine (``async def``), so
evaluators that call a model or a service can be awaited, and simple
synchronous checks need no ceremony. The composite, suite, projection and
experiment call evaluators through :func:`call_evaluator`: a coroutine is
awaited on the event loop; a synchronous ``evaluate`` runs in a worker thread
(``asyncio.to_thread``) so a blocking evaluator does not stall the others,
and must therefore be thread-safe. An evaluator must not mutate its subject.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from .errors import EvaluationError
from .report import EvaluationReport

__all__ = [
    "Evaluator",
    "EvaluatorFunc",
    "call_evaluator",
    "check_evaluator",
    "evaluate_sync",
    "require_no_running_loop",
]

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)


@runtime_checkable
class Evaluator(Protocol[T_contra]):
    """Evaluates one subject and returns a valid :class:`EvaluationReport` (or an
    awaitable of one). Raising means there is no report for the subject; it
    is never read as a failing report."""

    def evaluate(self, subject: T_contra) -> EvaluationReport | Awaitable[EvaluationReport]: ...


class EvaluatorFunc(Generic[T]):
    """An evaluator made of a function ``fn(subject) -> EvaluationReport`` or
    ``async def fn(subject) -> EvaluationReport``."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[T], EvaluationReport | Awaitable[EvaluationReport]]) -> None:
        if not callable(fn):
            raise TypeError(f"EvaluatorFunc wraps a function, got {type(fn).__name__}")
        self.fn = fn

    @property
    def is_async(self) -> bool:
        """True when the wrapped function is a coroutine function."""
        return inspect.iscoroutinefunction(self.fn)

    def evaluate(self, subject: T) -> EvaluationReport | Awaitable[EvaluationReport]:
        """Call the function (for an async function: its coroutine)."""
        return self.fn(subject)

    def __repr__(self) -> str:
        return f"EvaluatorFunc({getattr(self.fn, '__qualname__', self.fn)!r})"


def _is_async(evaluator: Any) -> bool:
    if isinstance(evaluator, EvaluatorFunc):
        return evaluator.is_async
    return inspect.iscoroutinefunction(getattr(evaluator, "evaluate", None))


def check_evaluator(evaluator: object, what: str = "evaluator") -> None:
    """``TypeError`` unless ``evaluator`` has a callable ``evaluate``."""
    if not callable(getattr(evaluator, "evaluate", None)):
        raise TypeError(f"{what} must have an evaluate(subject) method, got {evaluator!r}")


async def call_evaluator(evaluator: Evaluator[T], subject: T) -> EvaluationReport:
    """Evaluate ``subject`` and check that the answer is a :class:`EvaluationReport`
    (:class:`EvaluationError` otherwise). Coroutines are awaited; synchronous
    evaluators run in a worker thread. Cancelling the caller cancels an async
    evaluator; a synchronous one cannot be interrupted: it runs to its end
    and its answer is dropped."""
    if _is_async(evaluator):
        result: Any = await evaluator.evaluate(subject)  # type: ignore[misc]
    else:
        result = await asyncio.to_thread(evaluator.evaluate, subject)
        if inspect.isawaitable(result):
            result = await result
    if not isinstance(result, EvaluationReport):
        raise EvaluationError(
            f"{evaluator!r} returned {type(result).__name__}, not a EvaluationReport "
            "(an evaluator with nothing to report raises)"
        )
    return result


def evaluate_sync(evaluator: Evaluator[T], subject: T) -> EvaluationReport:
    """Evaluate ``subject`` from synchronous code, whatever kind of evaluator
    this is (``RuntimeError`` inside a running event loop: await
    :func:`call_evaluator` there)."""
    require_no_running_loop("evaluate_sync()", "await call_evaluator(evaluator, subject)")
    return asyncio.run(call_evaluator(evaluator, subject))


def require_no_running_loop(what: str, instead: str) -> None:
    """``RuntimeError`` saying to use ``instead`` when called inside a
    running event loop (where ``asyncio.run`` cannot start another)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(f"{what} cannot run inside a running event loop: {instead}")
