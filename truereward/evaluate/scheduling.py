"""Bounded concurrency: at most ``limit`` jobs at once, started in order.

One primitive serves the composite, the suite and the experiment: ``limit``
workers take jobs from one iterator in order, so jobs start in order and
never more than ``limit`` run at once. The first job to raise stops the
others: no further job starts, the running ones are cancelled, and the error
is raised (never an ExceptionGroup: the first error is the answer).
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
    cancelled (and awaited), and that exception is raised. Cancelling the
    caller cancels every running job.
    """
    results: list[R | None] = [None] * len(jobs)
    queue = iter(range(len(jobs)))
    # The first error, recorded by the job that raised it before any other
    # worker can take a job: nothing starts after it, not even in the same
    # turn of the event loop.
    first_error: list[BaseException] = []

    async def worker() -> None:
        for index in queue:
            if first_error:
                return
            try:
                results[index] = await jobs[index]()
            except BaseException as error:
                if not first_error:
                    first_error.append(error)
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
    if first_error:
        raise first_error[0]
    return results  # type: ignore[return-value]  # every slot was filled
