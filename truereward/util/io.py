"""The I/O budget of a process: runs whose reads and writes are in flight
at once (grading's reads and publishes, a sweep's grades read back).

:func:`ordered_map` overlaps a store's round trips: at most ``size`` calls
at work at once, on one thread pool per process (shared by every chunk of a
flow run), results in the items' order, items taken as room frees up; a
budget of 1 is one call at a time in the whole process. :data:`LOCAL_IO`
(0, a local disk's) is no budget at all: a plain loop in each caller's
thread. The calls must not submit to the pool themselves. :func:`read_ahead`
keeps such a map going while its consumer is busy elsewhere. docs/scale.md,
"The I/O budget", says how to size it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = [
    "LOCAL_IO",
    "MOST_CONNECTIONS",
    "OBJECT_STORE_IO",
    "REQUESTS_PER_RUN",
    "ordered_map",
    "read_ahead",
    "started_ahead",
    "with_connections",
]

#: The I/O budget for a sweep or a target on an object store (see
#: ``GradeRequest.io_concurrency`` and docs/scale.md for how it was chosen).
OBJECT_STORE_IO = 64

#: No I/O budget: each caller (a chunk of grade-run) reads and publishes its
#: runs one after another in its own thread, so the chunks in flight bound
#: the runs in flight. A local disk's default: its reads and durable writes
#: take microseconds to milliseconds, less than a hand-off to a pool.
LOCAL_IO = 0

#: The most requests one run has in flight at once: the three files written
#: together after its ``grade.json`` (its two reads go together too).
REQUESTS_PER_RUN = 3

#: The largest pool :func:`with_connections` gives for a budget (a larger
#: budget keeps one connection a run): past it a process's own CPU bounds
#: its runs before its connections do, and more connections only crowd a
#: store that is slow already (docs/scale.md, "The I/O budget").
MOST_CONNECTIONS = 64

T = TypeVar("T")
R = TypeVar("R")

_POOLS: dict[int, ThreadPoolExecutor] = {}
_LOCK = threading.Lock()


def _pool(size: int) -> ThreadPoolExecutor:
    """The process's pool of ``size`` threads (made once, kept for the
    process's life: a flow run's chunks come and go, its threads stay)."""
    with _LOCK:
        found = _POOLS.get(size)
        if found is None:
            found = _POOLS[size] = ThreadPoolExecutor(size, thread_name_prefix="truereward-io")
        return found


def ordered_map(function: Callable[[T], R], items: Iterable[T], size: int) -> Iterator[R]:
    """``function`` over ``items``, at most ``size`` calls at once in the
    process (``size`` below 1: in the caller's thread, one after another),
    results in order (module docstring). An exception of a call is raised
    when its result is reached; the calls already started go on."""
    if size < 1:
        yield from map(function, items)
        return
    pool = _pool(size)
    for future in started_ahead((pool.submit(function, item) for item in items), size - 1):
        yield future.result()


def started_ahead(items: Iterable[T], n: int) -> Iterator[T]:
    """``items`` in order, each drawn from the iterable ``n`` places ahead
    of the consumer, in the consumer's thread: when drawing an item starts
    its work (a submitted call, a request sent), ``n + 1`` are under way
    while the consumer holds one."""
    window: deque[T] = deque()
    for item in items:
        window.append(item)
        if len(window) > n:
            yield window.popleft()
    yield from window


_DONE = object()


def read_ahead(items: Iterable[R], n: int) -> Iterator[R]:
    """``items`` in order, up to ``n`` of them taken ahead of the consumer
    by a thread of their own (the items' own exception, raised where it
    would have been); ``n`` of 1 or less: none taken ahead. A consumer
    that stops early (closes the iterator, or drops it) stops the thread
    at its next item; the items it took ahead are dropped."""
    import queue

    if n <= 1:
        yield from items
        return
    buffer: queue.Queue[tuple[object, BaseException | None]] = queue.Queue(maxsize=n)
    stopped = threading.Event()
    source = iter(items)

    def produce() -> None:
        try:
            for item in source:
                buffer.put((item, None))
                if stopped.is_set():
                    close = getattr(source, "close", None)  # a generator's own cleanup
                    if close is not None:
                        close()
                    return
        except BaseException as error:  # noqa: BLE001 - handed to the consumer
            buffer.put((_DONE, error))
            return
        buffer.put((_DONE, None))

    threading.Thread(target=produce, name="truereward-read-ahead", daemon=True).start()
    try:
        while True:
            item, error = buffer.get()
            if error is not None:
                raise error
            if item is _DONE:
                return
            yield item  # type: ignore[misc]
    finally:
        stopped.set()
        # Room for the producer's put under way, so it sees ``stopped``.
        while not buffer.empty():
            buffer.get_nowait()


def with_connections(options: dict[str, Any], budget: int) -> dict[str, Any]:
    """S3 storage ``options`` whose client keeps a connection for every
    request an I/O budget of ``budget`` runs has in flight at once,
    :data:`REQUESTS_PER_RUN` a run, up to :data:`MOST_CONNECTIONS` (and
    never fewer than ``budget``); botocore keeps 10 by default, which
    would queue the rest. A pool size the options give is kept."""
    config = dict(options.get("config_kwargs") or {})
    requests = max(budget, min(REQUESTS_PER_RUN * budget, MOST_CONNECTIONS))
    if "max_pool_connections" in config or requests <= 10:
        return options
    config["max_pool_connections"] = requests
    return {**options, "config_kwargs": config}
