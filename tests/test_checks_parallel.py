"""The ordered, bounded process map under ``--jobs``."""

from __future__ import annotations

import multiprocessing
import os
import threading

import pytest

from truereward.checks.parallel import OrderedMap, available_cores, start_method


def square_and_pid(value: int) -> tuple[int, int]:
    return value * value, os.getpid()


def fail_on_seven(value: int) -> int:
    if value == 7:
        raise ValueError("seven")
    return value


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
