"""grade-sweep with two process workers against one, on the same sweep,
measured alternately in one run against one Prefect server.

    .venv/bin/python infra/bench/grade_sweep.py [--quick] [--rounds N] [--runs N] [--shards N]
        [--dir DIR] [--postgres]

A sweep of 4,000 runs (``_common.make_sweep``: 20 cases a run) is graded
in 4 shards into a fresh local target, through the deployments of
infra/prefect.yaml, as ops would run it: a ``prefect server start``
(SQLite) started here, the ``truereward-process`` work pool,
``prefect deploy --prefect-file infra/prefect.yaml --name local`` from the
project root, and ``run_deployment('grade-sweep/local', ...)`` (what
``prefect deployment run 'grade-sweep/local' -p request=... --watch``
does). The parent flow run lists and shards the sweep, starts one
``grade-run/local`` flow run per shard, waits for them and summarises the
sweep from the published grades.

Workers are ``prefect worker start --pool truereward-process --limit 1``
(one flow run at a time each: a shard is a process whose thread runner keeps
its 8 task runs busy, so one shard per core is what two cores can take),
started in the project root for each measurement and killed after it:

- one worker: the shards are graded one after another;
- two workers: two shards at a time.

The parent runs on the work queue ``infra/prefect.yaml`` gives
``grade-sweep/local`` (``parents``), served by a third worker, so it never
takes a shard worker's slot. Each side's time runs from
creating the parent's flow run to its end (worker polling every second,
each flow run's process start, the summary and artifacts included).
Printed: runs per second each way, the peak resident memory (VmHWM) of the
largest shard and parent flow-run processes, the CPU seconds of the server,
the parent's worker and the shard workers (with their flow-run processes),
how many cores the machine kept busy on average, and ``RATIO grade_sweep``:
the two workers' throughput over one worker's. Target: at least 1.5. The
cores one worker keeps busy bound the ratio: with ``c`` of the machine's
``n`` cores busy, two workers can be at most ``n / c`` times faster.

``--dir`` puts the targets (the published grades) under another directory,
for instance on tmpfs (``--dir /dev/shm/grade-sweep``), where ``fsync``
costs nothing: what the ratio is there, against the disk's, says how much of
it the disk's durable writes hold back.

``--s3-latency-ms MS`` puts the sweep and its grades on S3: moto's server
behind ``tests/support/latencyproxy.py`` holding each answer MS ms (both in
processes of their own), the sweep uploaded once, each side's grades under
a prefix of their own; ``--io-concurrency`` sets each shard's I/O budget.
There the work waits on round trips, not on the cores (target: at least
1.8 at 50 ms).

``--postgres`` puts the server's database on a throwaway PostgreSQL
cluster (``_common.postgres``; Debian's ``postgresql`` package) instead of
SQLite: Prefect's advice for more than one worker, because SQLite takes one
writer at a time and answers a transaction that collides with another with
``503``, which the client retries after 2, 4, 8, 16 and 32 s.

``--quick`` (CI's smoke run) grades 40 runs in 2 shards with two workers
only: it checks that the deployments, the workers and the parent work
together; its ratio line says it measured no ratio (each side's time there
is the fixed cost of starting flow-run processes, not grading).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _common import (
    CACHE,
    CpuMeter,
    Deployed,
    PeakSampler,
    make_sweep,
    postgres,
    wait_for_workers,
)

TARGET_RATIO = 1.5
#: The same on S3, where the work waits on round trips (module docstring).
TARGET_RATIO_S3 = 1.8
WORK = CACHE / "grade-sweep"


class Store:
    """Where the sweep and its grades are: local directories, or (with
    ``--s3-latency-ms``) moto's S3 server behind a latency proxy, each in
    a process of its own, the sweep uploaded once."""

    def __init__(self, sweep: Path, latency: float | None, io: int | None) -> None:
        self.local = sweep
        self.latency = latency
        self.io = io
        self.client: Any = None

    def __enter__(self) -> Store:
        if self.latency is None:
            return self
        from s3_latency import options, upload

        from tests.support import s3server
        from tests.support.latencyproxy import LatencyProxy

        os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing")
        self.moto, upstream = s3server.start_process()
        self.proxy = LatencyProxy(upstream, self.latency)
        self.options = options(self.proxy.url)
        self.client = s3server.client(upstream)
        self.client.create_bucket(Bucket="sweep")
        upload(self.client, self.local, "sweep", "sweep")
        return self

    def __exit__(self, *_: object) -> None:
        if self.latency is not None:
            self.proxy.stop()
            self.moto.kill()
            self.moto.wait()

    def request(self, target: Path, label: str) -> dict[str, Any]:
        """The sweep and where ``label``'s grades go."""
        if self.latency is None:
            return {"sweep": str(self.local), "target": str(target)}
        request: dict[str, Any] = {
            "sweep": "s3://sweep/sweep",
            "target": f"s3://sweep/graded-{label}",
            "storage_options": self.options,
            "report": str(target / "sweep-report.html"),
        }
        if self.io is not None:
            request["io_concurrency"] = self.io
        return request

    def graded(self, target: Path, label: str) -> int:
        """The grades published for ``label``."""
        if self.latency is None:
            return sum(1 for _ in target.glob("*/grade.json"))
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket="sweep", Prefix=f"graded-{label}/"
        )
        return sum(
            item["Key"].endswith("/grade.json")
            for page in pages
            for item in page.get("Contents", [])
        )


def grade(
    deployed: Deployed,
    store: Store,
    target: Path,
    shards: int,
    workers: int,
    label: str,
) -> dict[str, Any]:
    """Grade the sweep with ``workers`` shard workers; its figures."""
    from prefect.deployments import run_deployment

    names = [f"{label}-shards-{index}" for index in range(workers)]
    logs = WORK / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        parent_worker = stack.enter_context(
            deployed.worker(
                logs / f"{label}-parent.log", "--work-queue", "parents", "--name", f"{label}-parent"
            )
        )
        shard_workers = [
            stack.enter_context(
                deployed.worker(
                    logs / f"{name}.log", "--work-queue", "default", "--limit", "1", "--name", name
                )
            )
            for name in names
        ]
        wait_for_workers(deployed, [*names, f"{label}-parent"])
        request = {**store.request(target, label), "shards": shards}
        pids = {"server": deployed.pid, "parent": parent_worker.pid}
        pids.update({f"shards-{index}": item.pid for index, item in enumerate(shard_workers)})
        with (
            CpuMeter(pids) as cpu,
            PeakSampler(family=[parent_worker.pid]) as parent,
            PeakSampler(family=[item.pid for item in shard_workers]) as shard,
            deployed.client_settings(),
        ):
            start = time.perf_counter()
            run = run_deployment(
                "grade-sweep/local",
                parameters={"request": request},
                timeout=None,
                poll_interval=1,
                as_subflow=False,
            )
            seconds = time.perf_counter() - start
    if run.work_queue_name != "parents":  # else it took a shard worker's slot
        raise SystemExit(f"the parent ran on work queue {run.work_queue_name!r}, not 'parents'")
    state = run.state
    if state is None or not state.is_completed():
        raise SystemExit(
            f"grade-sweep ended {state.name if state else 'without a state'}: "
            f"{state.message if state else ''} (worker logs in {logs})"
        )
    graded = store.graded(target, label)
    with deployed.client_settings():
        steps = timeline(run)
    return {
        "timeline": steps,
        "seconds": seconds,
        "graded": graded,
        "shard_peak_mb": max(shard.peaks.values(), default=0.0),
        "parent_peak_mb": max(parent.peaks.values(), default=0.0),
        "state": state.name,
        "cores": cpu.cores,
        "cpu": cpu.seconds,
    }


def timeline(parent: Any) -> dict[str, float]:
    """Where the parent's time went, in seconds, from the server's records:
    ``start`` (its creation to its flow beginning: the worker's poll, the
    process and its imports), ``plan`` (to its first shard's creation:
    listing and sharding), ``shard_start`` and ``shard_grade`` (each
    shard's creation to its beginning, and its beginning to its end,
    summed over the shards), ``tail`` (the last shard's end to the
    parent's: the summary and the artifacts)."""
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterParentFlowRunId

    with get_client(sync_client=True) as client:
        parent = client.read_flow_run(parent.id)
        children = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(
                parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[parent.id])
            )
        )
    if not children or parent.start_time is None or parent.end_time is None:
        return {}
    created = min(child.created for child in children if child.created is not None)
    last = max(child.end_time for child in children if child.end_time is not None)
    return {
        "start": (parent.start_time - parent.created).total_seconds(),
        "plan": (created - parent.start_time).total_seconds(),
        "shard_start": sum(
            (child.start_time - child.created).total_seconds()
            for child in children
            if child.start_time is not None and child.created is not None
        ),
        "shard_grade": sum(
            (child.end_time - child.start_time).total_seconds()
            for child in children
            if child.start_time is not None and child.end_time is not None
        ),
        "tail": (parent.end_time - last).total_seconds(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small sweep, one round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--runs", type=int, help="runs in the sweep (default 4000)")
    parser.add_argument("--shards", type=int, help="shards (default 4; 2 with --quick)")
    parser.add_argument("--dir", type=Path, help="where the targets go (default: under .bench/)")
    parser.add_argument("--postgres", action="store_true", help="the database on PostgreSQL")
    parser.add_argument(
        "--s3-latency-ms",
        type=float,
        help="the sweep and its grades on S3 (moto) behind a proxy holding each answer this long",
    )
    parser.add_argument("--io-concurrency", type=int, help="each shard's I/O budget (S3)")
    args = parser.parse_args()
    runs = args.runs or (40 if args.quick else 4000)
    rounds = 1 if args.quick else args.rounds
    shards = args.shards or (2 if args.quick else 4)
    sweep = make_sweep(runs)
    shutil.rmtree(WORK, ignore_errors=True)
    figures: dict[int, list[dict[str, Any]]] = {1: [], 2: []}
    started = time.perf_counter()
    latency = None if args.s3_latency_ms is None else args.s3_latency_ms / 1000
    with contextlib.ExitStack() as stack:
        store = stack.enter_context(Store(sweep, latency, args.io_concurrency))
        url = stack.enter_context(postgres(WORK / "postgres")) if args.postgres else None
        deployed = stack.enter_context(Deployed(WORK / "prefect", ["parents"], url))
        print(f"server up and deployed in {time.perf_counter() - started:.1f} s", flush=True)
        for index in range(rounds):
            order = (1, 2) if index % 2 == 0 else (2, 1)
            for workers in (2,) if args.quick else order:
                target = (args.dir or WORK) / f"target-{workers}"
                shutil.rmtree(target, ignore_errors=True)
                label = f"r{index}w{workers}"
                found = grade(deployed, store, target, shards, workers, label)
                if found["graded"] != runs:
                    raise SystemExit(f"{found['graded']} grades published for {runs} runs")
                figures[workers].append(found)
                spent = found["cpu"]
                shard_cpu = sum(value for name, value in spent.items() if name.startswith("shards"))
                print(
                    f"round {index + 1}, {workers} worker(s): {found['seconds']:.1f} s "
                    f"({found['state']}); {found['cores']:.2f} cores busy on average; CPU s: "
                    f"server {spent['server']:.1f}, parent {spent['parent']:.1f}, "
                    f"shard workers and their flow runs {shard_cpu:.1f}",
                    flush=True,
                )
                steps = found["timeline"]
                if steps:
                    print(
                        "  timeline s: "
                        + ", ".join(f"{name} {value:.1f}" for name, value in steps.items()),
                        flush=True,
                    )
                shutil.rmtree(target, ignore_errors=True)
    if args.quick:
        found = figures[2][0]
        print(
            f"{runs} runs in {shards} shards, two workers: {found['seconds']:.1f} s; peak "
            f"{found['shard_peak_mb']:.0f} MB a shard's flow-run process, "
            f"{found['parent_peak_mb']:.0f} MB the parent's"
        )
        print("RATIO grade_sweep n/a (--quick grades with two workers only; no ratio measured)")
        return 0
    seconds = {workers: statistics.median(item["seconds"] for item in figures[workers])
               for workers in figures}  # fmt: skip
    where = (
        "local target"
        if latency is None
        else f"on S3 at {args.s3_latency_ms:g} ms a request, I/O budget "
        f"{args.io_concurrency or 'default'} a shard"
    )
    print(
        f"{runs} runs in {shards} shards (20 cases each, {where}), "
        f"{rounds} alternating rounds, workers with --limit 1:"
    )
    for workers in (1, 2):
        shard = max(item["shard_peak_mb"] for item in figures[workers])
        parent = max(item["parent_peak_mb"] for item in figures[workers])
        print(
            f"  {workers} worker(s): {runs / seconds[workers]:.0f} runs/s "
            f"({seconds[workers]:.1f} s); peak {shard:.0f} MB a shard's flow-run process, "
            f"{parent:.0f} MB the parent's"
        )
    ratio = seconds[1] / seconds[2]
    busy = statistics.median(item["cores"] for item in figures[1])
    cores = os.cpu_count() or 1
    print(
        f"  one worker kept {busy:.2f} of {cores} cores busy on average: two workers can be at "
        f"most {cores / max(busy, 1e-9):.2f}x faster on this machine (while its speed holds)"
    )
    print(
        f"RATIO grade_sweep {ratio:.2f} (two process workers' throughput / one worker's; "
        f"target >= {TARGET_RATIO if latency is None else TARGET_RATIO_S3})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
