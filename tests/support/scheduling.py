"""How the suite is spread over pytest-xdist's workers (``infra/test.sh``:
``-n 3 --maxschedchunk 1``); docs/install.md, "How long the suite takes".

- The tests marked ``waits`` spend most of their time in a grace period, a
  timeout or a killed process, with little CPU. The first worker runs them
  all, one after another, from the start (:class:`WaitsApart`); it joins
  the others when it is down to its last one.
- The other workers take the rest one test at a time, those marked
  ``longest`` (minutes each) first, each followed by a quick one
  (:func:`arrange`): every long test starts at once on a worker of its own.

pytest-xdist's own grouping (``--dist loadgroup``) cannot do the first:
with pytest 9.2 and xdist 3.8 it renames no test and groups nothing, and
the controller, which collects nothing, cannot see markers. So each worker
writes the node ids of its ``waits`` tests to a file named by the run's id
(:func:`record`), which the controller reads when it schedules.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScheduling

MARK = "waits"


def arrange(items: list[pytest.Item]) -> None:
    """Order ``items`` in place: the ``longest`` first, each followed by a
    quick one, then the rest in their order."""
    longest = [item for item in items if item.get_closest_marker("longest")]
    rest = [item for item in items if not item.get_closest_marker("longest")]
    order: list[pytest.Item] = []
    for index, item in enumerate(longest):
        order.append(item)
        if index < len(rest):
            order.append(rest[index])
    order += rest[len(longest) :]
    items[:] = order


def _ids_file(run: str) -> Path:
    return Path(tempfile.gettempdir()) / f"truereward-waits-{run}.json"


def record(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a worker: write the node ids of the ``waits`` tests among
    ``items`` for the controller (every worker writes the same list, each
    whole, with a rename)."""
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is None:
        return
    path = _ids_file(workerinput["testrunuid"])
    scratch = path.with_suffix(f".{os.getpid()}")
    scratch.write_text(json.dumps([item.nodeid for item in items if item.get_closest_marker(MARK)]))
    os.replace(scratch, path)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # The controller names the run, so that it knows which file its workers write.
    if not hasattr(config, "workerinput") and config.getoption("testrunuid", None) is None:
        config.option.testrunuid = uuid.uuid4().hex


def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.getoption("testrunuid", None)
    if not hasattr(config, "workerinput") and run is not None:
        with contextlib.suppress(FileNotFoundError):
            _ids_file(run).unlink()


class WaitsApart(LoadScheduling):
    """pytest-xdist's ``load`` scheduling, but the ``waits`` tests all go to
    the first worker when the run starts. Every other worker starts with
    two tests and is then sent one at a time (``--maxschedchunk 1``); the
    first gets more once it is down to its last test (``load``'s own rule:
    a worker whose tests take a while is sent nothing while two remain)."""

    def schedule(self) -> None:
        if self.collection is not None or len(self.nodes) < 2:
            return super().schedule()
        collection = next(iter(self.node2collection.values()))
        path = _ids_file(self.config.getoption("testrunuid"))
        waits = set(json.loads(path.read_text())) if path.exists() else set()
        apart = [index for index, nodeid in enumerate(collection) if nodeid in waits]
        if not apart or not self._check_nodes_have_same_collection():
            return super().schedule()
        self.collection = collection
        self.pending[:] = [index for index in range(len(collection)) if index not in apart]
        if self.maxschedchunk is None:
            self.maxschedchunk = len(collection)
        first, *others = self.nodes
        self.node2pending[first].extend(apart)
        first.send_runtest_some(apart)
        for node in others:
            self._send_tests(node, 2)
        if not self.pending:
            for node in self.nodes:
                node.shutdown()


@pytest.hookimpl(trylast=True)  # after the selection (tests/conftest.py)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    arrange(items)
    record(config, items)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> LoadScheduling | None:
    """:class:`WaitsApart` in place of ``--dist load`` (``-n`` alone)."""
    if config.getvalue("dist") != "load":
        return None
    return WaitsApart(config, log)
