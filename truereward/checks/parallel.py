"""An ordered, bounded map over worker processes.

Items go to a process pool and their results come back in the order the
items were given, with at most ``window`` items in flight: reading never
runs ahead of the results by more than that, so memory stays bounded however
long the input is. The first items are submitted as soon as the map is made,
so the workers start while the caller does something else.

Workers are forked from the caller on Linux when it runs a single thread
(fast to start, nothing to import again, no fork-server or resource-tracker
process); when other threads run, forking could copy a lock that one of them
holds, so the workers come from a ``forkserver`` (a clean process), else
from ``spawn``.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from types import TracebackType
from typing import Any, Generic, TypeVar

__all__ = ["OrderedMap", "available_cores", "start_method"]

T = TypeVar("T")
R = TypeVar("R")

#: Imported once by the fork server, so that workers start ready.
_PRELOAD = ["truereward.checks.worker"]


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def start_method() -> str:
    """How workers are started here and now (see the module docstring)."""
    methods = multiprocessing.get_all_start_methods()
    if sys.platform == "linux" and "fork" in methods and threading.active_count() == 1:
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


def _context(method: str) -> Any:
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(_PRELOAD)
    return context


class OrderedMap(Generic[T, R]):
    """``function(item)`` for each item, computed in ``jobs`` processes and
    given back in order, at most ``window`` (default ``3 * jobs``) in flight;
    ``method`` forces a start method (default: :func:`start_method`).

    An iterator and a context manager: leaving the ``with`` block (or
    :meth:`close`) shuts the pool down, cancelling what was not started. An
    exception raised by ``function`` in a worker is raised by ``next()``."""

    def __init__(
        self,
        function: Callable[[T], R],
        items: Iterable[T],
        *,
        jobs: int,
        initializer: Callable[..., None] | None = None,
        initargs: tuple[Any, ...] = (),
        window: int | None = None,
        method: str | None = None,
    ) -> None:
        self._function = function
        self._items = iter(items)
        self._limit = window or 3 * jobs
        self._pool = ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=_context(method or start_method()),
            initializer=initializer,
            initargs=initargs,
        )
        self._pending: deque[Future[R]] = deque()
        self._fill()

    def _fill(self) -> None:
        while len(self._pending) < self._limit:
            for item in self._items:
                self._pending.append(self._pool.submit(self._function, item))
                break
            else:
                return

    def __iter__(self) -> Iterator[R]:
        return self

    def __next__(self) -> R:
        if not self._pending:
            self.close()
            raise StopIteration
        try:
            result = self._pending.popleft().result()
        except BaseException:
            self.close()
            raise
        self._fill()
        return result

    def close(self) -> None:
        """Shut the pool down (idempotent)."""
        self._pending.clear()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> OrderedMap[T, R]:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
