"""The ordered, bounded process map under ``--jobs``."""

from __future__ import annotations

import os

import pytest

from truereward.checks.parallel import available_cores, ordered_map


def square_and_pid(value: int) -> tuple[int, int]:
    return value * value, os.getpid()


def fail_on_seven(value: int) -> int:
    if value == 7:
        raise ValueError("seven")
    return value


def test_results_come_in_order_from_other_processes():
    results = list(ordered_map(square_and_pid, range(40), jobs=2, window=3))
    assert [square for square, _ in results] == [value * value for value in range(40)]
    assert os.getpid() not in {pid for _, pid in results}


def test_reading_stays_within_the_window():
    taken = []

    def items():
        for value in range(30):
            taken.append(value)
            yield value

    results = ordered_map(square_and_pid, items(), jobs=2, window=4)
    next(results)
    assert len(taken) <= 4 + 1  # never more than the window ahead of what was consumed
    results.close()


def test_a_worker_exception_is_raised_here():
    with pytest.raises(ValueError, match="seven"):
        list(ordered_map(fail_on_seven, range(20), jobs=2))


def test_available_cores():
    assert available_cores() >= 1
