"""The grade-run flow on a real Dask cluster of separate processes (``dask
scheduler`` and two ``dask worker`` processes on loopback), against a real
Prefect server: by the request's ``dask_address`` (the flow loaded from its
entrypoint, as a deployment's worker loads it), and by
``grade_run.with_options(task_runner=...)``; task runs the cluster cannot
start, failing their runs rather than the flow; and a sweep on S3 published to
S3 through the cluster, with credentials from a target block, giving the
same grades byte for byte (timestamps aside) as the thread runner on a
local target."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.dask_cluster import dask_cluster
from tests.support.sweeps import make_sweep
from truereward.grading import GradeRequest

pytestmark = pytest.mark.slow

PID_READER = "tests.support.pid_reader:READER"


@pytest.fixture(scope="module")
def cluster(
    prefect_api: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, list[int]]]:
    with dask_cluster(tmp_path_factory.mktemp("dask"), prefect_api) as running:
        yield running


ROOT = Path(__file__).resolve().parents[2]


def run_flow(request: GradeRequest, runner: Any = None) -> Any:
    from flows.grade_run import grade_run

    flow = grade_run if runner is None else grade_run.with_options(task_runner=runner)
    return flow(request, return_state=True)


def deployed_flow() -> Any:
    """The flow as a process worker loads a deployment's: from its
    entrypoint, which makes ``flows/grade_run.py`` a top-level module that
    no cluster process can import (the project root is on their path,
    ``flows/`` is not). A worker's fresh process names it ``grade_run``;
    Prefect names a second load in one process ``__prefect_loader_<hash>__``."""
    from prefect.flows import load_flow_from_entrypoint

    flow = load_flow_from_entrypoint(f"{ROOT / 'flows' / 'grade_run.py'}:grade_run")
    name = flow.fn.__module__
    assert name == "grade_run" or name.startswith("__prefect_loader_"), name
    return flow


def pids(out: Path) -> set[int]:
    found = set()
    for grade in out.glob("*/grade.json"):
        for row in json.loads(grade.read_text())["detail"]:
            found |= {int(item["verdict"]) for item in row["observations"] if item["name"] == "pid"}
    return found


def without_times(document: dict[str, Any]) -> dict[str, Any]:
    """A grade's content with its timestamps left out."""
    copy = json.loads(json.dumps(document))
    for holder in [copy.get("run") or {}, *copy.get("attempts", [])]:
        holder.pop("started", None)
        holder.pop("finished", None)
    return copy


SWEEP = {f"run-{index:02d}": kind for index, kind in enumerate(["pass", "fail", "missing"] * 4)}


def test_the_request_sends_task_runs_to_the_cluster(
    prefect_client_settings: str, cluster: tuple[str, list[int]], tmp_path: Path
) -> None:
    # Loaded as a deployment's worker loads it: task runs on the cluster
    # receive the flow in their context, which the cluster must unpickle
    # without importing the flow's file (PrefectHQ/prefect#16419).
    address, workers = cluster
    sweep = make_sweep(tmp_path / "sweep", {f"r{i}": "pass" for i in range(8)})
    out = tmp_path / "out"
    request = GradeRequest(
        sweep=str(sweep), target=str(out), reader=PID_READER, task_runner="dask",
        dask_address=address, chunk_size=1,
    )  # fmt: skip
    state = deployed_flow()(request, return_state=True)
    assert state.is_completed(), state.message
    assert state.result().summary.gradable == 8
    seen = pids(out)
    assert seen and seen <= set(workers)  # read in the workers, not in this process


def test_task_runs_the_cluster_cannot_start_fail_their_runs_not_the_flow(
    prefect_client_settings: str,
    cluster: tuple[str, list[int]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The flow's code not shipped (as before ship_flow_code): the cluster
    # cannot unpickle a single task run. The flow must say so for each run,
    # not end with a traceback on a state that never finished.
    import contextlib
    import sys

    import cloudpickle

    address, _ = cluster
    flow = deployed_flow()
    module = sys.modules[flow.fn.__module__]
    monkeypatch.setattr(module, "ship_flow_code", lambda name: None)
    with contextlib.suppress(ValueError):  # registered by another test in this process
        cloudpickle.unregister_pickle_by_value(module)
    sweep = make_sweep(tmp_path / "sweep", {f"r{i}": "pass" for i in range(3)})
    out = tmp_path / "out"
    request = GradeRequest(
        sweep=str(sweep), target=str(out), task_runner="dask", dask_address=address, chunk_size=1
    )
    try:
        state = flow(request, return_state=True)
    finally:
        # Shipped again for the tests after this one: pydantic caches the
        # flow's return type, State[GradeRunResult], as first made (in the
        # module loaded here), so flows.grade_run's flow refers to it too.
        cloudpickle.register_pickle_by_value(module)
    assert state.is_failed() and state.name == "Publish failed", (state.name, state.message)
    result = state.result(raise_on_failure=False).result
    assert result.failed == 3 and result.summary.gradable == 0
    for failure in result.failures:
        assert "the task run never finished" in failure.why, failure
        assert f"No module named '{module.__name__}'" in failure.why, failure
    assert not list(out.glob("*/grade.json"))  # nothing scored
    assert "3 not published" in state.message
    assert (out / "sweep-report.html").is_file()  # the page that says why, target or not


def test_with_options_task_runner_is_honoured(
    prefect_client_settings: str, cluster: tuple[str, list[int]], tmp_path: Path
) -> None:
    from prefect_dask.task_runners import DaskTaskRunner

    address, workers = cluster
    sweep = make_sweep(tmp_path / "sweep", {f"r{i}": "pass" for i in range(6)})
    out = tmp_path / "out"
    request = GradeRequest(sweep=str(sweep), target=str(out), reader=PID_READER, chunk_size=1)
    assert request.task_runner == "threads"  # the request says threads; the caller says Dask
    state = run_flow(request, DaskTaskRunner(address=address))
    assert state.is_completed(), state.message
    seen = pids(out)
    assert seen and seen <= set(workers)


def test_an_s3_sweep_through_the_cluster_grades_as_threads_on_a_local_target(
    prefect_client_settings: str,
    cluster: tuple[str, list[int]],
    tmp_path: Path,
    s3_endpoint: str,
    s3_client: Any,
    bucket: str,
) -> None:
    from truereward.prefect.block import TargetBlock

    address, _ = cluster
    local = make_sweep(tmp_path / "nightly", SWEEP)
    for path in sorted(local.rglob("*")):
        if path.is_file():
            key = f"runs/nightly/{path.relative_to(local).as_posix()}"
            s3_client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
    block = f"grades-{bucket}"
    TargetBlock(
        url=f"s3://{bucket}/graded",
        storage_options={
            "endpoint_url": s3_endpoint,
            "client_kwargs": {"region_name": "us-east-1"},
        },
        secret_options={"key": "testing", "secret": "testing"},
    ).save(block, overwrite=True)
    on_s3 = GradeRequest(
        sweep=f"s3://{bucket}/runs/nightly", target_block=block, task_runner="dask",
        dask_address=address, retry_delay_seconds=0.05,
    )  # fmt: skip
    state = run_flow(on_s3)
    assert state.is_completed(), state.message
    out = tmp_path / "local"
    threads = run_flow(GradeRequest(sweep=str(local), target=str(out), retry_delay_seconds=0.05))
    assert threads.is_completed(), threads.message
    for run in SWEEP:
        remote = s3_client.get_object(Bucket=bucket, Key=f"graded/{run}/grade.json")["Body"].read()
        here = (out / run / "grade.json").read_bytes()
        assert without_times(json.loads(remote)) == without_times(json.loads(here)), run
    assert state.result().summary == threads.result().summary
