"""Running the grade-run deployment as an ops team does: the work pool,
``prefect deploy`` from the project root, a process worker, ``prefect
deployment run ... --watch``.

The scenarios that use one server share one work pool and one
``grade-run/local`` deployment, so they run one after another inside one test
(``tests/prefect/test_prefect_deployment.py``): a worker started by one never
picks up another's flow run. The grade-sweep scenarios are a second test, on
a server of its own (:func:`deployed_alone`), so the two can run at once.
(pytest-xdist's ``xdist_group`` cannot be relied on for this: with pytest 9.2
and xdist 3.8 it is silently ignored.)
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

from .server import PREFECT, offline_env, start_server, stop_server

POOL = "truereward-process"


def prefect(
    env: dict[str, str], *args: str, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PREFECT, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def deploy(api: str, home: Path) -> dict[str, str]:
    """The environment of a client of the server at ``api`` (client home
    ``home``), with the work pool created and ``grade-run/local`` and
    ``grade-sweep/local`` deployed from the project root."""
    env = offline_env(
        PREFECT_API_URL=api,
        PREFECT_HOME=str(home),
        PREFECT_WORKER_QUERY_SECONDS="1",
        PREFECT_CLI_PROMPT="false",
        COLUMNS="1000",  # the CLI's console wraps at the terminal's width
    )
    created = prefect(env, "work-pool", "create", POOL, "--type", "process", "--overwrite")
    assert created.returncode == 0, created.stdout + created.stderr
    deploy = prefect(
        env, "--no-prompt", "deploy", "--prefect-file", "infra/prefect.yaml", "--name", "local"
    )
    assert deploy.returncode == 0, deploy.stdout + deploy.stderr
    # `--name local` deploys both flows' local deployments.
    for name in ("grade-run/local", "grade-sweep/local"):
        assert name in deploy.stdout, deploy.stdout
    return env


@pytest.fixture(scope="module")
def deployed(prefect_api: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """:func:`deploy` on the session's server."""
    return deploy(prefect_api, tmp_path_factory.mktemp("client-home"))


@pytest.fixture
def deployed_alone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """:func:`deploy` on a server of its own. The session's server is shared
    by every xdist worker, and two tests whose workers poll one pool would
    pick up each other's flow runs: a second deployment test runs beside the
    first on a server (and so a pool and deployments) of its own."""
    pid, api, _ = start_server(tmp_path_factory.mktemp("own-server"))
    try:
        yield deploy(api, tmp_path_factory.mktemp("client-home"))
    finally:
        stop_server(pid)


@contextlib.contextmanager
def worker(env: dict[str, str], log: Path, *more: str) -> Iterator[subprocess.Popen[bytes]]:
    """A process worker on the pool, started in the project root, in a
    process group of its own (so it can be killed with its flow runs)."""
    with open(log, "ab") as output:
        process = subprocess.Popen(
            [PREFECT, "worker", "start", "--pool", POOL, *more],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        yield process
    finally:
        kill_tree(process.pid)
        process.wait(timeout=30)


def kill_tree(pid: int) -> None:
    """SIGKILL a worker and every process under it: its flow runs run in
    sessions of their own, so killing its process group is not enough."""
    import psutil

    with contextlib.suppress(psutil.NoSuchProcess):
        family = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
        for member in family:
            with contextlib.suppress(psutil.NoSuchProcess):
                member.send_signal(signal.SIGKILL)
        psutil.wait_procs(family, timeout=30)


def run_deployment(
    env: dict[str, str],
    request: dict[str, Any],
    *,
    watch: bool = True,
    deployment: str = "grade-run/local",
) -> subprocess.CompletedProcess[str]:
    args = ["deployment", "run", deployment, "-p", f"request={json.dumps(request)}"]
    if watch:
        args += ["--watch", "--watch-timeout", "240"]
    return prefect(env, *args)
