"""Sweeps on object storage at real latency: grade-run against a minimal
asynchronous grader, both through one latency proxy in front of moto.

    .venv/bin/python infra/bench/s3_latency.py [--quick] [--runs 400] [--latency-ms 25]
        [--in-flight 64] [--io-concurrency N] [--chunk-size N] [--baseline-pool N]

moto's S3 server runs in a process of its own, behind ``tests/support/latencyproxy.py``
(another process) that holds every response ``--latency-ms``: the round trip
of a real object store. A sweep of ``--runs`` runs (a task spec and rows of 20
cases each, ``_common.make_sweep``'s mix) is uploaded for each side of each
of ``--rounds`` rounds, into a bucket of its own (moto scans a whole bucket
to list any prefix of it), the sides' order swapped every round. Time is
the proxy's: from the first request to the last
answer of a side, so neither Python's start nor Prefect's ephemeral API is
counted.

- baseline: a minimal grader on s3fs's asynchronous API, ``--in-flight`` runs
  at a time: for each run, GET its rows and its task spec together, fold
  them (count the verdicts), a conditional PUT of ``grade.json``
  (``If-None-Match: *``), then the three other files together; its s3fs
  client keeps botocore's default pool of 10 connections, as a minimal
  grader would, unless ``--baseline-pool`` gives it more (then up to three
  requests a run in flight are on the wire at once, as ours are);
- ours: the ``grade-run`` flow on Prefect's ephemeral API (started before
  the window opens), the sweep on ``s3://``, published to ``s3://``
  (``--io-concurrency`` and ``--chunk-size`` given when set; otherwise
  grade-run's default request);
- kept: the same request again over the graded sweep (nothing to do);
- regraded: again with ``regrade: all``.

Printed: runs/s of each, requests per run by method for each of ours, the
CPU a run cost each side's grader (ours: its flow process from the flow
run's start, and its API server) and moto with the proxy meanwhile, and

- ``RATIO s3_latency``: ours / baseline throughput (target 0.8 at 50 ms and
  8 in flight on both sides, and at 25 ms against 64 in flight);
- ``RATIO s3_latency_kept``: grading time / kept time (target at least 5).

``--scale --runs 100000`` grades one sweep with ours alone, once (the
upload of 200,000 objects comes first): the wall time, the requests a run
and the flow process's peak memory (target: under 300 MB).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import ROOT, make_sweep, offline_env

sys.path.insert(0, str(ROOT))

from tests.support import s3server
from tests.support.latencyproxy import LatencyProxy

BUCKET = "bench"


def cpu_seconds(*processes: subprocess.Popen[Any]) -> float:
    """CPU seconds (user + system) the processes have used so far."""
    import psutil

    return sum(sum(psutil.Process(each.pid).cpu_times()[:2]) for each in processes)


def upload(client: Any, sweep: Path, bucket: str, prefix: str) -> int:
    """Put every file of ``sweep`` under ``bucket/prefix/`` (straight to moto,
    16 at a time); the number of runs."""
    from concurrent.futures import ThreadPoolExecutor

    runs = sorted(path for path in sweep.iterdir() if path.is_dir())

    def put(run: Path) -> None:
        for item in run.iterdir():
            client.put_object(
                Bucket=bucket, Key=f"{prefix}/{run.name}/{item.name}", Body=item.read_bytes()
            )

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(put, runs))
    return len(runs)


def options(endpoint: str) -> dict[str, Any]:
    return {"endpoint_url": endpoint, "client_kwargs": {"region_name": "us-east-1"}}


async def minimal_grader(
    endpoint: str,
    bucket: str,
    sweep: str,
    target: str,
    runs: list[str],
    in_flight: int,
    pool: int | None = None,
) -> None:
    """The baseline (module docstring); ``pool``: its connections."""
    import s3fs

    more = {} if pool is None else {"config_kwargs": {"max_pool_connections": pool}}
    fs = s3fs.S3FileSystem(
        key="testing", secret="testing", asynchronous=True, **options(endpoint), **more
    )
    await fs.set_session()
    gate = asyncio.Semaphore(in_flight)

    async def get(key: str) -> bytes | None:
        try:
            answer = await fs._call_s3("get_object", Bucket=bucket, Key=key)
        except FileNotFoundError:
            return None
        async with answer["Body"] as body:
            data: bytes = await body.read()
        return data

    async def put(key: str, body: bytes, **condition: str) -> None:
        await fs._call_s3("put_object", Bucket=bucket, Key=key, Body=body, **condition)

    async def grade(run: str) -> None:
        async with gate:
            rows, spec = await asyncio.gather(
                get(f"{sweep}/{run}/rows.jsonl"), get(f"{sweep}/{run}/task.json")
            )
            assert spec is not None
            declared = json.loads(spec)["cases"]
            verdicts = (
                {}
                if rows is None
                else {
                    row["id"]: row["verdict"] for row in map(json.loads, rows.decode().splitlines())
                }
            )
            gradable = set(verdicts) == set(declared)
            reward = (
                float(all(value == "pass" for value in verdicts.values())) if gradable else None
            )
            grade = json.dumps(
                {"run": run, "gradable": gradable, "reward": reward, "detail": verdicts}
            ).encode()
            await put(f"{target}/{run}/grade.json", grade, IfNoneMatch="*")
            writes = [put(f"{target}/{run}/ctrf.json", b'{"results": {}}')]
            if gradable:
                writes += [
                    put(f"{target}/{run}/reward.json", json.dumps({"reward": reward}).encode()),
                    put(f"{target}/{run}/reward.txt", f"{reward}\n".encode()),
                ]
            await asyncio.gather(*writes)

    await asyncio.gather(*(grade(run) for run in runs))
    await fs.s3.close()


#: Ours, in a fresh process: Prefect's ephemeral API is started first (a
#: flow run of nothing), then the proxy's counts are reset, so the window
#: is grade-run's own, from its planning's first request to its last.
DRIVER = """
import json, sys, urllib.request
from prefect import flow
from flows.grade_run import grade_run
from truereward.grading import GradeRequest

@flow
def warm_up() -> None:
    return None

def cpu():
    import psutil
    own = psutil.Process()
    times = [own.cpu_times()] + [child.cpu_times() for child in own.children(recursive=True)]
    return times[0].user + times[0].system, sum(t.user + t.system for t in times[1:])

warm_up()
proxy, request = sys.argv[1], GradeRequest.model_validate_json(sys.argv[2])
urllib.request.urlopen(urllib.request.Request(proxy + "/_proxy/reset", method="POST", data=b""))
before = cpu()
state = grade_run(request, return_state=True)
after = cpu()
if not state.is_completed():
    raise SystemExit(f"grade-run ended {state.name}: {state.message}")
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
figures = {"cpu_s": after[0] - before[0], "api_cpu_s": after[1] - before[1]}
print(json.dumps({"peak_mb": peak / 1024, **figures}))
"""


def grade_run(proxy: str, request: dict[str, Any], home: Path) -> dict[str, float]:
    """One flow run of ours (:data:`DRIVER`) on the ephemeral API; the
    flow process's peak resident memory (``peak_mb``), the CPU seconds of
    its grading (``cpu_s``: from the flow run's start to its end, not the
    imports) and of its ephemeral API server meanwhile (``api_cpu_s``)."""
    env = offline_env(
        PREFECT_HOME=str(home), AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing"
    )
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, proxy, json.dumps(request)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"grade-run failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    last = [line for line in done.stdout.splitlines() if line.startswith("{")][-1]
    figures: dict[str, float] = json.loads(last)
    return figures


def scale(runs: int, latency: float) -> int:
    """``--scale``: ours alone, once, on a sweep of ``runs`` runs: the wall
    time, the requests a run and the flow process's peak memory."""
    sweep = make_sweep(runs)
    moto, upstream = s3server.start_process()
    try:
        with LatencyProxy(upstream, latency) as proxy:
            client = s3server.client(upstream)
            client.create_bucket(Bucket=BUCKET)
            started = time.perf_counter()
            upload(client, sweep, BUCKET, "sweep")
            print(f"uploaded {runs} runs in {time.perf_counter() - started:.0f} s", flush=True)
            request = {
                "sweep": f"s3://{BUCKET}/sweep",
                "target": f"s3://{BUCKET}/graded",
                "storage_options": options(proxy.url),
                "report": str(ROOT / ".bench" / "s3-latency-report.html"),
            }
            servers = cpu_seconds(moto, proxy.process)
            flow = grade_run(proxy.url, request, ROOT / ".bench" / "s3-latency-home")
            servers = cpu_seconds(moto, proxy.process) - servers
            seconds = proxy.seconds()
            print(
                f"{runs} runs at {latency * 1000:g} ms a request: {seconds:.0f} s "
                f"({runs / seconds:.1f} runs/s), {per_run(proxy.counts(), runs)}; "
                f"the flow process's peak {flow['peak_mb']:.0f} MB, its grading's CPU "
                f"{flow['cpu_s']:.0f} s; "
                + cpu_a_run(flow["cpu_s"], flow["api_cpu_s"], servers, runs)
            )
            print(f"RATIO s3_latency_scale {runs / seconds:.1f} runs/s (no baseline: --scale)")
    finally:
        moto.kill()
        moto.wait()
    return 0


def cpu_a_run(grader: float, api: float | None, servers: float, runs: int) -> str:
    """The CPU a run cost the grader (and its Prefect API), and moto with the proxy."""
    api_part = "" if api is None else f", its API {api / runs * 1000:.1f}"
    return (
        f"CPU a run: the grader {grader / runs * 1000:.1f} ms{api_part}, "
        f"moto and the proxy {servers / runs * 1000:.1f}"
    )


def per_run(counts: dict[str, int], runs: int) -> str:
    total = sum(counts.values())
    shown = ", ".join(f"{method} {count / runs:.2f}" for method, count in sorted(counts.items()))
    return f"{total / runs:.2f} requests a run ({shown})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: 40 runs, 1 round")
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--latency-ms", type=float, default=25.0)
    parser.add_argument("--in-flight", type=int, default=64, help="the baseline's runs in flight")
    parser.add_argument("--io-concurrency", type=int, help="ours (default: the request's default)")
    parser.add_argument("--chunk-size", type=int, help="ours (default: the request's default)")
    parser.add_argument(
        "--baseline-pool", type=int, help="the baseline's connections (default: botocore's, 10)"
    )
    parser.add_argument(
        "--scale", action="store_true", help="ours alone, once: wall time, requests, memory"
    )
    args = parser.parse_args()
    if args.scale:
        return scale(args.runs, args.latency_ms / 1000)
    runs = 40 if args.quick else args.runs
    rounds = 1 if args.quick else args.rounds
    sweep = make_sweep(runs)
    names = sorted(path.name for path in sweep.iterdir() if path.is_dir())
    home = ROOT / ".bench" / "s3-latency-home"
    moto, upstream = s3server.start_process()
    fresh: list[float] = []
    kept: list[float] = []
    try:
        with LatencyProxy(upstream, args.latency_ms / 1000) as proxy:
            client = s3server.client(upstream)
            for number in range(rounds):
                # A bucket for each side of each round (moto scans a whole
                # bucket to list any prefix of it), the order of the sides
                # swapped every round.
                ours_first = number % 2 == 1
                for side in ("ours", "baseline") if ours_first else ("baseline", "ours"):
                    bucket = f"{BUCKET}-{number}-{side}"
                    client.create_bucket(Bucket=bucket)
                    upload(client, sweep, bucket, "sweep")
                    servers = cpu_seconds(moto, proxy.process)
                    if side == "baseline":
                        proxy.reset()
                        own = time.process_time()
                        asyncio.run(
                            minimal_grader(
                                proxy.url,
                                bucket,
                                "sweep",
                                "graded",
                                names,
                                args.in_flight,
                                args.baseline_pool,
                            )
                        )
                        own = time.process_time() - own
                        baseline = proxy.seconds()
                        print(
                            f"round {number + 1} baseline: {runs / baseline:.1f} runs/s "
                            f"({args.in_flight} runs in flight, at most {proxy.most_in_flight()} "
                            f"requests at once), {per_run(proxy.counts(), runs)}; "
                            + cpu_a_run(own, None, cpu_seconds(moto, proxy.process) - servers, runs)
                        )
                        continue
                    request: dict[str, Any] = {
                        "sweep": f"s3://{bucket}/sweep",
                        "target": f"s3://{bucket}/graded",
                        "storage_options": options(proxy.url),
                        "report": str(ROOT / ".bench" / "s3-latency-report.html"),
                    }
                    if args.io_concurrency is not None:
                        request["io_concurrency"] = args.io_concurrency
                    if args.chunk_size is not None:
                        request["chunk_size"] = args.chunk_size
                    timings = {}
                    labels = ("fresh", "kept", "regraded") if number == 0 else ("fresh", "kept")
                    for label in labels:
                        extra = {"regrade": "all"} if label == "regraded" else {}
                        servers = cpu_seconds(moto, proxy.process)
                        flow = grade_run(proxy.url, {**request, **extra}, home)
                        servers = cpu_seconds(moto, proxy.process) - servers
                        timings[label] = proxy.seconds()
                        print(
                            f"round {number + 1} grade-run {label}: "
                            f"{runs / timings[label]:.1f} runs/s (at most {proxy.most_in_flight()} "
                            f"requests at once), {per_run(proxy.counts(), runs)}; "
                            + cpu_a_run(flow["cpu_s"], flow["api_cpu_s"], servers, runs)
                        )
                    ours = timings["fresh"]
                    kept.append(timings["fresh"] / timings["kept"])
                fresh.append(baseline / ours)
        print(f"per-round ratios: fresh {sorted(fresh)}, kept {sorted(kept)}")
        print(f"RATIO s3_latency {statistics.median(fresh):.2f}")
        print(f"RATIO s3_latency_kept {statistics.median(kept):.2f}")
    finally:
        moto.kill()
        moto.wait()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("DO_NOT_TRACK", "1")
    sys.exit(main())
