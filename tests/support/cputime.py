"""Where the suite's CPU goes: a pytest plugin, off unless named.

    bash infra/test.sh -p tests.support.cputime

Appends one JSON line a test to ``$TRUEREWARD_CPU_LOG`` (default
``cputime.jsonl`` in the working directory): its node id, wall seconds, and
the CPU seconds (user + system) of the pytest worker and of the processes
it reaped during the test (servers, workers, flow runs, command lines).
Not counted: processes that outlive their test, such as the session's shared
Prefect server, which shows up in the test during which it is reaped.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Iterator

import pytest


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, reaped.ru_utime + reaped.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    own, reaped = _cpu()
    started = time.monotonic()
    yield
    own_after, reaped_after = _cpu()
    line = {
        "id": item.nodeid,
        "wall": round(time.monotonic() - started, 3),
        "self": round(own_after - own, 3),
        "children": round(reaped_after - reaped, 3),
    }
    with open(os.environ.get("TRUEREWARD_CPU_LOG", "cputime.jsonl"), "a") as log:
        log.write(json.dumps(line) + "\n")
