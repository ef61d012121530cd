"""An ordered, bounded map over worker processes.

Results come back in the items' order with at most ``window`` items in
flight, so memory stays bounded however long the input; the first items go
out as soon as the map is made. A worker that dies breaks the pool for the
items in flight: each is computed again alone, so the one that kills its
process is found and handed to ``recover``, and a new pool takes the rest.
Workers are forked when the caller runs a single thread, else started from
a ``forkserver`` (else ``spawn``), since a fork could copy a held lock.
docs/checks.md, "Streaming and processes".
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType
from typing import Any, Generic, TypeVar

from ..util.exceptions import TruerewardError

__all__ = ["OrderedMap", "WorkerDied", "available_cores", "process_context", "start_method"]

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


def process_context(method: str | None = None) -> Any:
    """A multiprocessing context for ``method``, else for how processes are
    best started here and now (:func:`start_method`)."""
    method = method or start_method()
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(_PRELOAD)
    return context


class WorkerDied(TruerewardError):
    """A worker process ended without handing back its result (killed by a
    signal, the out-of-memory killer's included, or exited). ``exitcode``
    is the process's (negative: the signal), None when unknown."""

    def __init__(self, exitcode: int | None) -> None:
        self.exitcode = exitcode
        super().__init__(_how(exitcode))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.exitcode,))


def _how(exitcode: int | None) -> str:
    if exitcode is None:
        return "the worker process died"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        why = " (the out-of-memory killer, or someone, ended it)" if name == "SIGKILL" else ""
        return f"the worker process was killed by {name}{why}"
    return f"the worker process exited with status {exitcode}"


def worker_signals() -> None:
    """In a worker process: the command's signal handlers, inherited through
    fork, are the parent's business. The pool ends a worker with SIGTERM
    when another died, and the command's handler would print a traceback
    from it; Ctrl-C reaches the whole process group, and the parent alone
    decides what stops."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start_worker(initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    worker_signals()
    if initializer is not None:
        initializer(*initargs)


def _alone(
    sender: Any,
    function: Callable[[Any], Any],
    item: Any,
    initializer: Callable[..., None] | None,
    initargs: tuple[Any, ...],
) -> None:
    """The body of a process that computes one item alone."""
    try:
        _start_worker(initializer, initargs)
        answer: tuple[bool, Any] = (True, function(item))
    except BaseException as error:  # noqa: BLE001 - handed to the parent
        answer = (False, error)
    try:
        sender.send(answer)
    except Exception as error:  # noqa: BLE001 - the answer does not pickle
        sender.send((False, RuntimeError(f"{type(error).__name__}: {error}")))
    finally:
        sender.close()


class OrderedMap(Generic[T, R]):
    """``function(item)`` for each item, computed in ``jobs`` processes and
    given back in order, at most ``window`` (default ``3 * jobs``) in flight;
    ``method`` forces a start method (default: :func:`start_method`).

    An iterator and a context manager: leaving the ``with`` block (or
    :meth:`close`) shuts the pool down, cancelling what was not started.

    When a worker dies (the pool is then broken for every item in flight),
    each item in flight is computed again alone, in a process of its own, so
    that the item that kills its process is told from the ones that were
    only there at the time; then a new pool takes the rest. ``alone(item)``
    does that computing alone (default: ``function(item)`` in one new
    process; an item whose own process dies too gives ``recover(item,
    WorkerDied(...))``). An exception raised by ``function`` in a worker, or
    by ``alone``, gives ``recover(item, error)``; without ``recover``, both
    are raised by ``next()``.
    ``before_fork`` is called before processes are started again (a caller
    flushes its buffered output there: a forked child flushes the standard
    streams it inherited when it ends)."""

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
        recover: Callable[[T, BaseException], R] | None = None,
        before_fork: Callable[[], None] | None = None,
        alone: Callable[[T], R] | None = None,
    ) -> None:
        self._function = function
        self._items = iter(items)
        self._jobs = jobs
        self._limit = window or 3 * jobs
        self._initializer = initializer
        self._initargs = initargs
        self._method = method
        self._recover = recover
        self._before_fork = before_fork
        self._compute_alone = alone or self._alone
        self._pool: ProcessPoolExecutor | None = None
        self._pending: deque[tuple[T, Future[R] | None]] = deque()
        self._ready: deque[R] = deque()
        self._start_pool(first=True)
        self._fill()

    def _start_pool(self, *, first: bool = False) -> None:
        if not first and self._before_fork is not None:
            self._before_fork()
        self._pool = ProcessPoolExecutor(
            max_workers=self._jobs,
            mp_context=process_context(self._method),
            initializer=_start_worker,
            initargs=(self._initializer, self._initargs),
        )

    def _fill(self) -> None:
        while len(self._pending) + len(self._ready) < self._limit:
            for item in self._items:
                if self._pool is None:
                    self._start_pool()
                assert self._pool is not None
                future: Future[R] | None
                try:
                    future = self._pool.submit(self._function, item)
                except BrokenProcessPool:
                    future = None  # computed alone when its turn comes
                self._pending.append((item, future))
                break
            else:
                return

    def __iter__(self) -> Iterator[R]:
        return self

    def __next__(self) -> R:
        while not self._ready:
            if not self._pending:
                self.close()
                raise StopIteration
            item, future = self._pending[0]
            if future is None:
                self._isolate()
                continue
            try:
                result = future.result()
            except BrokenProcessPool:
                self._isolate()
                continue
            except Exception as error:
                if self._recover is None:
                    self.close()
                    raise
                self._pending.popleft()
                result = self._recover(item, error)
            except BaseException:
                self.close()
                raise
            else:
                self._pending.popleft()
            self._fill()
            return result
        result = self._ready.popleft()
        self._fill()
        return result

    def _isolate(self) -> None:
        """The pool broke: compute every item in flight alone, in order."""
        pending = list(self._pending)
        self._pending.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        for item, future in pending:
            finished = future is not None and future.done() and not future.cancelled()
            if finished and future is not None and future.exception() is None:
                self._ready.append(future.result())
                continue
            try:
                self._ready.append(self._compute_alone(item))
            except Exception as error:
                if self._recover is None:
                    self.close()
                    raise
                self._ready.append(self._recover(item, error))

    def _alone(self, item: T) -> R:
        """``function(item)`` in a process of its own (:class:`WorkerDied`
        when that process dies too)."""
        if self._before_fork is not None:
            self._before_fork()
        context = process_context(self._method)
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(
            target=_alone,
            args=(sender, self._function, item, self._initializer, self._initargs),
            daemon=True,
        )
        process.start()
        sender.close()
        try:
            done, value = receiver.recv()
        except EOFError:
            process.join()
            raise WorkerDied(process.exitcode) from None
        finally:
            receiver.close()
        process.join()
        if done:
            result: R = value
            return result
        raise value

    def close(self) -> None:
        """Shut the pool down (idempotent)."""
        self._pending.clear()
        self._ready.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> OrderedMap[T, R]:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
