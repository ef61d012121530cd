"""grade-run on a Dask cluster of separate processes against the thread
runner, measured alternately in one run against one Prefect server.

    .venv/bin/python infra/bench/dask_cluster.py [--quick] [--rounds N] [--runs N] [--profile]

A sweep of 10,000 runs (40 in chunks of 5 with ``--quick``, CI's smoke
run; ``_common.make_sweep``: 20
cases a run; shared with grade_run.py) is graded into a fresh local target
by ``grade_run(request)`` (flows/grade_run.py), each time in a fresh flow
process, on a ``prefect server start`` (SQLite) started here:

- threads: the default request (the thread runner, concurrency 8, chunks of
  100 runs: ``MAX_AUTO_CHUNK``);
- dask: the same request with ``task_runner: dask`` (so chunks of 300 runs,
  the default for task runs in other processes: ``MAX_REMOTE_CHUNK``;
  ``--chunk-size N`` gives both sides chunks of N) and ``dask_address`` the
  scheduler of a cluster this script starts as separate processes on
  loopback (tests/support/dask_cluster.py: ``dask scheduler`` and two
  ``dask worker`` processes of 4 threads each, so 8 task runs at a time
  either way), the workers talking to the same Prefect API.

Each side's time runs from calling the flow to its end (creating and
finishing the flow run included; starting Python, importing, starting the
cluster excluded). Printed: runs per second each way, the peak resident
memory (VmHWM) of the flow process each way and of each Dask worker process
(over the whole run: a worker serves every dask round), and

- ``RATIO dask_cluster``: the Dask runner's throughput over the thread
  runner's. Target: at least 0.8;
- ``RATIO dask_cluster_worker_memory``: the largest Dask worker's peak over
  300 MB. Target: at most 1.0.

``--profile`` grades once more on the cluster with py-spy attached to both
workers and to the flow process (CPU samples, every thread;
``.venv/bin/pip install py-spy``) and prints where each one's samples go:
what a task run costs a worker beyond grading (Prefect's engine, its API
client), and what the flow process does for each chunk it sends.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import (
    CACHE,
    PY_SPY,
    ROOT,
    make_sweep,
    offline_env,
    peak_rss_mb,
    print_flow_side,
    profile_summary,
    py_spy_command,
    run_side,
)

TARGET_RATIO = 0.8
WORKER_MEMORY_MB = 300.0
WORK = CACHE / "dask-cluster"


def side(name: str, sweep: Path, target: Path, address: str, chunk_size: int | None) -> None:
    """Grade the sweep one way in this process; print the figures as JSON."""
    sys.path.insert(0, str(ROOT))
    import prefect  # noqa: F401  (imports are not timed on either side)
    import prefect_dask  # noqa: F401

    from flows.grade_run import grade_run
    from truereward.grading import GradeRequest

    fields: dict[str, Any] = {"sweep": str(sweep), "target": str(target), "chunk_size": chunk_size}
    if name == "dask":
        fields.update(task_runner="dask", dask_address=address)
    request = GradeRequest(**fields)
    print_flow_side(lambda: grade_run(request, return_state=True))


def measure(
    name: str,
    sweep: Path,
    env: dict[str, str],
    address: str,
    profile: Path | None = None,
    chunk_size: int | None = None,
) -> dict[str, Any]:
    target = WORK / f"target-{name}"
    shutil.rmtree(target, ignore_errors=True)
    command = [sys.executable, __file__, "--side", name, "--sweep", str(sweep)]
    command += ["--target", str(target), "--address", address]
    if chunk_size:
        command += ["--chunk-size", str(chunk_size)]
    if profile is not None:
        command = [*py_spy_command(profile), *command]
    return run_side(name, command, env, target)


def profiled_round(sweep: Path, env: dict[str, str], address: str, workers: list[int]) -> None:
    """One more dask round with py-spy on the workers and the flow process."""
    attached = []
    outputs = []
    for index, pid in enumerate(workers):
        output = WORK / f"worker-{index}-profile.txt"
        outputs.append(output)
        command = [str(PY_SPY), "record", "--pid", str(pid), "--format", "raw", "-o", str(output)]
        command += ["--rate", "67", "--nonblocking"]
        attached.append(
            subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )
    time.sleep(1.0)
    flow = WORK / "flow-profile.txt"
    try:
        measure("dask", sweep, env, address, profile=flow)
    finally:
        for spy in attached:
            spy.send_signal(signal.SIGINT)
        for spy in attached:
            spy.wait(timeout=60)
    for index, output in enumerate(outputs):
        profile_summary(output, title=f"dask worker {index} (py-spy, CPU samples)")
    profile_summary(flow, title="the flow process on the dask runner (py-spy, CPU samples)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small sweep, one round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--runs", type=int, help="runs in the sweep (default 10000)")
    parser.add_argument("--profile", action="store_true", help="profile one more dask round")
    parser.add_argument("--side", choices=("threads", "dask"), help=argparse.SUPPRESS)
    parser.add_argument("--sweep", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--target", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--chunk-size", type=int, help="runs per chunk, both sides")
    args = parser.parse_args()
    if args.side:
        side(args.side, args.sweep, args.target, args.address, args.chunk_size)
        return 0

    sys.path.insert(0, str(ROOT))
    from tests.support.dask_cluster import dask_cluster
    from tests.support.server import start_server, stop_server
    from truereward.grading.chunks import chunk_size_for
    from truereward.prefect.runner import largest_chunk

    runs = args.runs or (40 if args.quick else 10_000)
    chunk_size = 5 if args.quick else args.chunk_size
    rounds = 1 if args.quick else args.rounds
    sweep = make_sweep(runs)
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    pid, url, _ = start_server(WORK / "prefect-home")
    env = offline_env(PREFECT_API_URL=url, PREFECT_HOME=str(WORK / "client-home"))
    figures: dict[str, list[dict[str, Any]]] = {"threads": [], "dask": []}
    try:
        with dask_cluster(WORK / "cluster", url, workers=2) as (address, workers):
            worker_peaks: list[list[float]] = []
            for index in range(rounds):
                for name in ("threads", "dask") if index % 2 == 0 else ("dask", "threads"):
                    found = measure(name, sweep, env, address, chunk_size=chunk_size)
                    figures[name].append(found)
                    print(f"round {index + 1}, {name}: {found['seconds']:.1f} s", flush=True)
                worker_peaks.append([peak_rss_mb(worker) for worker in workers])
            if args.profile:
                profiled_round(sweep, env, address, workers)
    finally:
        stop_server(pid)
    seconds = {name: statistics.median(item["seconds"] for item in figures[name])
               for name in figures}  # fmt: skip
    print(
        f"{runs} runs (20 cases each, local target, chunks of "
        f"{chunk_size or chunk_size_for(runs, 8, largest_chunk('threads'))} on threads and "
        f"{chunk_size or chunk_size_for(runs, 8, largest_chunk('dask'))} on dask, "
        "concurrency 8), "
        f"{rounds} alternating rounds; the cluster: a scheduler and 2 workers of 4 threads"
    )
    for name in ("threads", "dask"):
        peak = max(item["peak_mb"] for item in figures[name])
        print(
            f"  {name}: {runs / seconds[name]:.0f} runs/s ({seconds[name]:.1f} s); "
            f"flow process peak {peak:.0f} MB"
        )
    growth = ", ".join(
        f"after round {index + 1}: " + " / ".join(f"{value:.0f}" for value in peaks)
        for index, peaks in enumerate(worker_peaks)
    )
    print(f"  dask worker processes' peak (MB), {growth}")
    worst = max(worker_peaks[-1])
    print(
        f"RATIO dask_cluster {seconds['threads'] / seconds['dask']:.2f} (dask cluster "
        f"throughput / thread runner's; target >= {TARGET_RATIO})"
    )
    print(
        f"RATIO dask_cluster_worker_memory {worst / WORKER_MEMORY_MB:.2f} (largest worker "
        f"peak {worst:.0f} MB / {WORKER_MEMORY_MB:.0f} MB; target <= 1.0)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
