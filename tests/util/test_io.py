"""The I/O budget: how many calls :func:`truereward.util.io.ordered_map`
has at work at once in a process, whatever the threads calling it, the
connection pool a budget gives an S3 client
(:func:`truereward.util.io.with_connections`), and items read ahead of
their consumer (:func:`truereward.util.io.read_ahead`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from truereward.util.io import (
    LOCAL_IO,
    MOST_CONNECTIONS,
    REQUESTS_PER_RUN,
    ordered_map,
    read_ahead,
    with_connections,
)

OPTIONS = {"endpoint_url": "http://127.0.0.1:9", "config_kwargs": {"retries": {"mode": "standard"}}}


def pool(options: dict[str, object]) -> object:
    config = options.get("config_kwargs")
    assert isinstance(config, dict)
    return config.get("max_pool_connections")


@pytest.mark.parametrize(
    ("budget", "connections"),
    [
        # A run's requests at once, for every run of the budget...
        (8, 8 * REQUESTS_PER_RUN),
        (16, 16 * REQUESTS_PER_RUN),
        # ...up to the cap, which the default budget for object stores reaches...
        (32, MOST_CONNECTIONS),
        (64, MOST_CONNECTIONS),
        # ...and never fewer than one connection a run.
        (200, 200),
    ],
)
def test_the_pool_holds_every_request_of_the_budget_up_to_the_cap(
    budget: int, connections: int
) -> None:
    sized = with_connections(OPTIONS, budget)
    assert pool(sized) == connections
    assert sized["config_kwargs"]["retries"] == {"mode": "standard"}  # the rest kept
    assert pool(OPTIONS) is None  # the caller's options are not changed


def test_a_budget_within_botocores_default_pool_and_a_given_pool_are_left_alone() -> None:
    # botocore keeps 10 connections: a budget of 3 runs is 9 requests.
    assert with_connections(OPTIONS, 3) is OPTIONS
    given = {"config_kwargs": {"max_pool_connections": 5}}
    assert with_connections(given, 64) is given


class AtWork:
    """Calls that take a moment each, counting how many are at work at once
    and which threads ran them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.most = 0
        self.threads: set[str] = set()

    def __call__(self, item: int) -> int:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
            self.threads.add(threading.current_thread().name)
        time.sleep(0.01)
        with self.lock:
            self.now -= 1
        return item * 2


def callers(budget: int, work: AtWork, threads: int = 4) -> list[list[int]]:
    """``threads`` callers (as grade-run's chunks in flight), each mapping
    its own items under ``budget``."""
    items = [list(range(index * 5, index * 5 + 5)) for index in range(threads)]
    with ThreadPoolExecutor(threads, thread_name_prefix="chunk") as chunks:
        return list(chunks.map(lambda mine: list(ordered_map(work, mine, budget)), items))


@pytest.mark.parametrize("budget", [1, 2, 3])
def test_a_budget_bounds_the_calls_at_work_in_the_process_whatever_its_callers(
    budget: int,
) -> None:
    """Four callers at once, as four chunks in flight: never more than the
    budget at work, results in each caller's order. A budget of 1 too: it
    was a plain loop in each caller's thread, so four callers had four at
    work, more than a budget of 2 allowed (the I/O budget's docs)."""
    work = AtWork()
    results = callers(budget, work)
    assert results == [[2 * item for item in range(index * 5, index * 5 + 5)] for index in range(4)]
    assert work.most == budget
    assert all(name.startswith("truereward-io") for name in work.threads)


def test_no_budget_runs_each_callers_calls_in_its_own_thread() -> None:
    """LOCAL_IO, a local disk's default: each caller's calls one after
    another in its own thread, so the callers bound the calls at work."""
    work = AtWork()
    results = callers(LOCAL_IO, work)
    assert results[1] == [2 * item for item in range(5, 10)]
    assert 1 < work.most <= 4
    assert all(name.startswith("chunk") for name in work.threads)


def test_items_read_ahead_come_in_order_with_their_error_where_it_was_raised() -> None:
    def items() -> Iterator[int]:
        yield from range(50)
        raise OSError("the listing broke after 50")

    ahead = read_ahead(items(), 3)
    assert [next(ahead) for _ in range(50)] == list(range(50))
    with pytest.raises(OSError, match="after 50"):
        next(ahead)


def test_a_consumer_that_stops_early_stops_the_thread_reading_ahead() -> None:
    drawn: list[int] = []
    closed = threading.Event()

    def items() -> Iterator[int]:
        try:
            for item in range(1_000_000):
                drawn.append(item)
                yield item
        finally:
            closed.set()

    before = set(threading.enumerate())
    ahead = read_ahead(items(), 4)
    assert [next(ahead) for _ in range(10)] == list(range(10))
    (thread,) = (t for t in set(threading.enumerate()) - before if t.name.endswith("read-ahead"))
    ahead.close()
    # The thread ends, closing its source, within an item or two of the
    # close: not after a million items, nor never.
    thread.join(10)
    assert not thread.is_alive()
    assert closed.is_set()
    assert len(drawn) <= 10 + 4 + 2
