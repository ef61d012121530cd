"""The ordered, bounded process map under ``--jobs``."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading

import pytest

from truereward.checks.parallel import OrderedMap, WorkerDied, available_cores, start_method


def square_and_pid(value: int) -> tuple[int, int]:
    return value * value, os.getpid()


def fail_on_seven(value: int) -> int:
    if value == 7:
        raise ValueError("seven")
    return value


@pytest.mark.slow
@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn", None])
def test_results_come_in_order_from_other_processes(method):
    if method is not None and method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"{method} does not exist on this platform")
    with OrderedMap(square_and_pid, range(40), jobs=2, window=3, method=method) as mapped:
        results = list(mapped)
    assert [square for square, _ in results] == [value * value for value in range(40)]
    assert os.getpid() not in {pid for _, pid in results}


def test_reading_stays_within_the_window():
    taken = []

    def items():
        for value in range(30):
            taken.append(value)
            yield value

    with OrderedMap(square_and_pid, items(), jobs=2, window=4) as results:
        assert len(taken) == 4  # submitted at once, up to the window
        next(results)
        assert len(taken) == 5  # one more for each result taken
        assert next(results)[0] == 1


def test_a_worker_exception_is_raised_here():
    with pytest.raises(ValueError, match="seven"):
        list(OrderedMap(fail_on_seven, range(20), jobs=2))


def test_available_cores():
    assert available_cores() >= 1


def test_no_fork_while_other_threads_run():
    stop = threading.Event()
    helper = threading.Thread(target=stop.wait)
    helper.start()
    try:
        assert start_method() in ("forkserver", "spawn")
    finally:
        stop.set()
        helper.join()


def die_on_seven(value: int) -> int:
    if value == 7:
        os.kill(os.getpid(), signal.SIGKILL)
    return value


def recovered(value: int, error: BaseException) -> int:
    assert isinstance(error, WorkerDied | ValueError), error
    return -value


def test_a_worker_that_dies_is_found_and_the_rest_is_computed():
    # The pool breaks for every item in flight; each is computed again alone,
    # the one that kills its process too is recovered, a new pool does the rest.
    with OrderedMap(
        die_on_seven, range(30), jobs=2, window=4, method="fork", recover=recovered
    ) as mapped:
        results = list(mapped)
    assert results == [-7 if value == 7 else value for value in range(30)]


def test_without_recover_a_dead_worker_is_raised():
    with pytest.raises(WorkerDied, match="killed by SIGKILL") as caught:
        list(OrderedMap(die_on_seven, range(20), jobs=2, method="fork"))
    assert caught.value.exitcode == -signal.SIGKILL


def test_recover_also_takes_exceptions():
    with OrderedMap(fail_on_seven, range(12), jobs=2, recover=recovered) as mapped:
        assert list(mapped) == [-7 if value == 7 else value for value in range(12)]


def test_before_fork_runs_before_processes_start_again():
    calls = []
    with OrderedMap(
        die_on_seven,
        range(12),
        jobs=2,
        window=2,
        method="fork",
        recover=recovered,
        before_fork=lambda: calls.append(1),
    ) as mapped:
        list(mapped)
    assert calls  # never before the first pool: the caller flushes before making the map
