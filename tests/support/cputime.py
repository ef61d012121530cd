"""Where the suite's CPU goes: a pytest plugin, off unless named.

    bash infra/test.sh -p tests.support.cputime

Appends one JSON line a test to ``$TRUEREWARD_CPU_LOG`` (default
``cputime.jsonl`` in the working directory): its node id, wall seconds, and
the CPU seconds (user + system) of the pytest worker and of the processes
it reaped during the test (servers, workers, flow runs, command lines).
Not counted: processes that outlive their test, such as the session's shared
Prefect server, which shows up in the test during which it is reaped.

With ``TRUEREWARD_CPU_CGROUP`` set to a cgroup v1 ``cpuacct`` hierarchy
(``/sys/fs/cgroup/cpuacct``; root only), each test also runs in a cgroup of
its own, which every process it starts inherits, killed or not: the line's
``cgroup`` is that group's CPU during the test, and at the session's end one
line a test, ``{"id", "cgroup_final"}``, is the group's whole CPU by then:
the test's, and what its processes used after it (a server it started for
the session, a process pool later tests reuse).
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, reaped.ru_utime + reaped.ru_stime


_GROUPS: dict[str, Path] = {}


def _write(line: dict[str, object]) -> None:
    with open(os.environ.get("TRUEREWARD_CPU_LOG", "cputime.jsonl"), "a") as log:
        log.write(json.dumps(line) + "\n")


def _usage(group: Path) -> float:
    return int((group / "cpuacct.usage").read_text()) / 1e9


def _join(group: Path) -> None:
    """Move this process (all its threads) into ``group``."""
    (group / "cgroup.procs").write_text(str(os.getpid()))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    hierarchy = os.environ.get("TRUEREWARD_CPU_CGROUP")
    group = None
    if hierarchy:
        name = hashlib.sha256(item.nodeid.encode()).hexdigest()[:16]
        group = Path(hierarchy, "truereward-tests", f"{os.getpid()}-{name}")
        group.mkdir(parents=True, exist_ok=True)
        _join(group)
        _GROUPS[item.nodeid] = group
    own, reaped = _cpu()
    started = time.monotonic()
    yield
    own_after, reaped_after = _cpu()
    line: dict[str, object] = {
        "id": item.nodeid,
        "wall": round(time.monotonic() - started, 3),
        "self": round(own_after - own, 3),
        "children": round(reaped_after - reaped, 3),
    }
    if group is not None:
        _join(group.parents[1])  # back to the hierarchy's root
        line["cgroup"] = round(_usage(group), 3)
    _write(line)


def pytest_sessionfinish() -> None:
    for nodeid, group in _GROUPS.items():
        _write({"id": nodeid, "cgroup_final": round(_usage(group), 3)})
