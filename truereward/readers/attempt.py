"""Which attempt at grading a run is being read.

A sweep grader may read a run more than once: when a grade is refused only
for reasons that are the grader's and may pass (an unreadable store, a
crashed reader), the run is graded again, up to an attempt limit. The
grading loop says which attempt it is with :func:`attempt_scope`; a reader
that wants to know (a judge that varies its seed, the fault injector of
:mod:`truereward.readers.faults`) asks :func:`current_attempt`.

Outside any grading loop the attempt is 1. The value is a context
variable, so concurrent readers in threads or tasks each see their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["attempt_scope", "current_attempt"]

_ATTEMPT: ContextVar[int] = ContextVar("truereward_attempt", default=1)


def current_attempt() -> int:
    """The attempt being read, counting from 1 (1 outside any grading loop)."""
    return _ATTEMPT.get()


@contextmanager
def attempt_scope(attempt: int) -> Iterator[int]:
    """Make ``attempt`` (at least 1) the current attempt inside the block."""
    if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
        raise ValueError(f"an attempt counts from 1, got {attempt!r}")
    token = _ATTEMPT.set(attempt)
    try:
        yield attempt
    finally:
        _ATTEMPT.reset(token)
