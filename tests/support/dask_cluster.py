"""A real Dask cluster of separate processes on loopback: ``dask scheduler``
and two ``dask worker`` processes, each in a process group of its own,
started on free ports and stopped (whole groups) at the end. A cluster that
does not come up fails the test loudly, with the end of its logs."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from .server import free_port, offline_env

DASK = str(Path(sys.executable).with_name("dask"))
START_TIMEOUT = 120.0


def _spawn(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with open(log, "ab") as output:
        return subprocess.Popen(
            args,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def _stop(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)


@contextlib.contextmanager
def dask_cluster(home: Path, api_url: str, workers: int = 2) -> Iterator[tuple[str, list[int]]]:
    """``(scheduler address, worker pids)``; the workers talk to the Prefect
    API at ``api_url`` (task runs report their states from there)."""
    from distributed import Client

    home.mkdir(parents=True, exist_ok=True)
    # The workers import truereward and the tests' own readers from the project.
    root = str(Path(__file__).resolve().parents[2])
    env = offline_env(PREFECT_API_URL=api_url, PREFECT_HOME=str(home / "prefect"), PYTHONPATH=root)
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    started: list[subprocess.Popen[bytes]] = []
    logs = [home / "scheduler.log"] + [home / f"worker-{index}.log" for index in range(workers)]
    try:
        started.append(
            _spawn(
                [DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                logs[0],
                env,
            )
        )
        for index in range(workers):
            command = [DASK, "worker", address, "--host", "127.0.0.1", "--nthreads", "4"]
            command += ["--no-dashboard", "--memory-limit", "0"]
            command += ["--local-directory", str(home / f"worker-{index}")]
            started.append(_spawn(command, logs[index + 1], env))
        deadline = time.monotonic() + START_TIMEOUT
        pids: list[int] = []
        while time.monotonic() < deadline:
            if any(process.poll() is not None for process in started):
                break
            try:
                with Client(address, timeout=5) as client:
                    info = client.scheduler_info()
                    if len(info["workers"]) >= workers:
                        pids = [int(pid) for pid in client.run(os.getpid).values()]
                        break
            except (OSError, TimeoutError):
                pass
            time.sleep(0.5)
        if not pids:
            tails = "\n".join(f"--- {log.name}\n{log.read_text()[-1500:]}" for log in logs)
            raise RuntimeError(f"the Dask cluster did not come up at {address}:\n{tails}")
        yield address, pids
    finally:
        for process in reversed(started):
            _stop(process)
