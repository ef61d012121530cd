"""An ordered, bounded map over worker processes.

Batches go to a process pool and their results come back in the order the
batches were given, with at most ``window`` batches in flight: reading never
runs ahead of scoring by more than that, so memory stays bounded however
long the input is. Workers are started with ``forkserver`` where the
platform has it (a clean process that is safe to fork even when the caller
runs threads), else ``spawn``.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, TypeVar

__all__ = ["available_cores", "ordered_map"]

T = TypeVar("T")
R = TypeVar("R")


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _start_method() -> str:
    methods = multiprocessing.get_all_start_methods()
    return "forkserver" if "forkserver" in methods else "spawn"


def ordered_map(
    function: Callable[[T], R],
    items: Iterable[T],
    *,
    jobs: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
    window: int | None = None,
) -> Iterator[R]:
    """``function(item)`` for each item, computed in ``jobs`` processes,
    yielded in order; at most ``window`` (default ``3 * jobs``) in flight.
    An exception in a worker is raised here, and the pool is shut down."""
    limit = window or 3 * jobs
    context = multiprocessing.get_context(_start_method())
    if context.get_start_method() == "forkserver":
        context.set_forkserver_preload(["truereward.checks.worker"])
    pool = ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=initializer, initargs=initargs
    )
    pending: deque[Future[R]] = deque()
    try:
        for item in items:
            pending.append(pool.submit(function, item))
            if len(pending) >= limit:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
