"""The task runner a request asks for, unless the flow was given one.

The flow is declared with a :class:`RequestedTaskRunner` ("the request
says"), so a runner given with ``with_options`` wins. ``threads`` (default)
is Prefect's thread runner with ``concurrency`` workers; ``dask`` is
prefect-dask's runner on ``dask_address``, or a local cluster told the
flow's API URL. On a runner in other processes the flow ships its module's
code (:func:`ship_flow_code`), so a cluster needs truereward and none of
the project's files. docs/prefect.md, "Scale", and docs/scale.md, "On a
Dask cluster".
"""

from __future__ import annotations

import os
import sys
from typing import Any

from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

from ..grading.chunks import MAX_AUTO_CHUNK, MAX_REMOTE_CHUNK
from ..grading.request import GradeRequest

__all__ = [
    "RequestedTaskRunner",
    "largest_chunk",
    "runner_name",
    "ship_flow_code",
    "task_runner_for",
]


class RequestedTaskRunner(ThreadPoolTaskRunner[Any]):
    """The flow's own task runner when nobody chose one: the request's
    ``task_runner`` decides (:func:`task_runner_for`). Never used itself."""


def runner_name(runner: TaskRunner[Any]) -> str:
    """How the log names a task runner: ``threads``, ``dask``, or its class."""
    if isinstance(runner, ThreadPoolTaskRunner):
        return "threads"
    name = type(runner).__name__
    return "dask" if name == "DaskTaskRunner" else name


def largest_chunk(runner: str) -> int:
    """The largest chunk a sweep is cut into by default on the runner named
    ``runner`` (:func:`runner_name`): :data:`~truereward.grading.chunks.MAX_AUTO_CHUNK`
    on threads, :data:`~truereward.grading.chunks.MAX_REMOTE_CHUNK` on any
    runner whose task runs are in other processes (Dask, or another)."""
    return MAX_AUTO_CHUNK if runner == "threads" else MAX_REMOTE_CHUNK


def task_runner_for(request: GradeRequest) -> TaskRunner[Any]:
    """A fresh (not started) task runner for ``request``."""
    if request.task_runner == "threads":
        return ThreadPoolTaskRunner(max_workers=request.concurrency)
    from prefect_dask.task_runners import DaskTaskRunner

    if request.dask_address is not None:
        runner: TaskRunner[Any] = DaskTaskRunner(address=request.dask_address)
        return runner
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        api_url = str(client.api_url)
    workers = max(1, min(request.concurrency, os.cpu_count() or 1))
    threads = -(-request.concurrency // workers)
    runner = DaskTaskRunner(
        cluster_kwargs={
            "n_workers": workers,
            "threads_per_worker": threads,
            "processes": True,
            "dashboard_address": None,
            "env": {"PREFECT_API_URL": api_url},
        }
    )
    return runner


def ship_flow_code(module_name: str) -> None:
    """Send the flow's own module to other processes by value (pickled with
    its code) rather than by name, for a task runner whose task runs are in
    other processes (Dask).

    Each task run receives the flow run's context, which holds the flow. A
    process worker loads a deployment's flow from its file, as a top-level
    module named after it (``flows/grade_run.py`` becomes ``grade_run``),
    which the Dask scheduler and workers cannot import: every task run then
    fails to unpickle and the flow never sees it start
    (PrefectHQ/prefect#16419). By value, the cluster needs truereward and
    nothing of the project's files. ``__main__`` (``python flows/...``)
    already goes by value; registering a module twice is harmless."""
    module = sys.modules.get(module_name)
    if module is None or module_name == "__main__":
        return
    import cloudpickle  # Prefect's own dependency

    cloudpickle.register_pickle_by_value(module)
