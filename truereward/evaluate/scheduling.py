"""Bounded concurrency: at most ``limit`` jobs at once, started in order.

One primitive serves the composite, the suite, the experiment and a
calibration run: ``limit`` workers take jobs from one iterator in order, so
jobs start in order and never more than ``limit`` run at once. The first job
to raise stops the others: no further job starts, the running ones are
cancelled, and one error is raised (never an ExceptionGroup): of the jobs
that raised before they were stopped, the first in order's, so which error
is reported does not depend on scheduling.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

__all__ = ["DEFAULT_MAX_CONCURRENCY", "check_limit", "run_bounded"]

R = TypeVar("R")

#: Jobs run at once unless told otherwise.
DEFAULT_MAX_CONCURRENCY = 4


def check_limit(value: int | None, what: str = "max_concurrency") -> int:
    """The concurrency bound: ``None`` or 0 select the default (4); otherwise
    a positive int (``ValueError``/``TypeError`` otherwise)."""
    if value is None or (value == 0 and not isinstance(value, bool)):
        return DEFAULT_MAX_CONCURRENCY
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} is a positive int, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{what} is a positive int (0 or None for the default), got {value}")
    return value


async def run_bounded(jobs: Sequence[Callable[[], Awaitable[R]]], limit: int) -> list[R]:
    """Run ``jobs`` with at most ``limit`` at once; their results in order.

    On the first exception no job starts any more, the running ones are
    cancelled (and awaited), and the exception of the lowest job that raised
    is raised. Cancelling the caller cancels every running job.
    """
    results: list[R | None] = [None] * len(jobs)
    queue = iter(range(len(jobs)))
    # (job, error), recorded by the job that raised it before any other
    # worker can take a job: nothing starts after it, not even in the same
    # turn of the event loop. A job cancelled for another's error adds none.
    errors: list[tuple[int, BaseException]] = []

    async def worker() -> None:
        for index in queue:
            if errors:
                return
            try:
                results[index] = await jobs[index]()
            except BaseException as error:
                if not (errors and isinstance(error, asyncio.CancelledError)):
                    errors.append((index, error))
                raise

    workers = [asyncio.ensure_future(worker()) for _ in range(min(limit, len(jobs)))]
    try:
        if workers:
            await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        # On an error, or when the caller is cancelled: stop the others.
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    if errors:
        raise min(errors, key=lambda failed: failed[0])[1]
    return results  # type: ignore[return-value]  # every slot was filled
