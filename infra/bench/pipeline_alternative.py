"""Can Prefect's own machinery replace truereward/prefect/pipeline.py (our
bounded in-flight scheduling of chunks) and carry.py (a task run's progress
carried between its retries)? grade-run as it is against variant flows
written with Prefect's ``.map``/``.submit`` (futures as inputs: Prefect
waits for them and records the dependency), measured alternately in one run
against one Prefect server, each in a fresh process.

    .venv/bin/python infra/bench/pipeline_alternative.py [--quick] [--rounds N] [--runs N]
        [--per-run-runs N]

A sweep of 10,000 runs (40 with ``--quick``; ``_common.make_sweep``: 20
cases a run; shared with grade_run.py) is graded into a fresh local target
on the thread runner (8 threads) by:

- ``ours``: ``grade_run(request)`` (flows/grade_run.py): chunks of 100
  runs, at most 8 chunks in flight, each chunk's ``fold`` submitted when its
  ``read`` is done and its ``publish`` when its ``fold`` is done
  (pipeline.py);
- three variant flows (below) with the same plan, chunks, tags and
  ``read``/``fold``/``publish`` tasks (so retries still use carry.py), the
  step inputs futures wrapped in ``opaque`` (Prefect resolves a future
  without walking the rows inside its result), and what a replacement of
  pipeline.py would keep: ``gc.freeze()`` while grading, each chunk's
  outcome taken when its publish ends and its payloads then released.
  They differ in what is in flight:

  - ``map``: ``read.map(chunks)``, ``fold.map(readings)``,
    ``publish.map(grades)``, every task run submitted up front, outcomes
    taken with ``prefect.futures.as_completed``; nothing bounds what is in
    flight but the 8 threads, and every future lives to the end;
  - ``window``: the same three ``.map`` calls on 8 chunks (the request's
    concurrency) at a time, the next window submitted once every publish
    of this one has ended;
  - ``rolling``: 8 chunks in flight, each as one chain of ``.submit``
    calls (read, fold on its future, publish on fold's), the next chunk's
    chain submitted as soon as a publish ends (``as_completed`` over the
    chains in flight);

- ``per-run``: the ``map`` flow with chunks of one run, the design in which
  carry.py is not needed (a Prefect retry of a task run re-reads only its
  one run): three task runs per run. Graded on the first
  ``--per-run-runs`` runs of the sweep (2,000; 16 with ``--quick``), its
  throughput is compared with ours on the whole sweep.

Each side's time runs from calling the flow to its end (creating and
finishing the flow run, the summary, the HTML sweep report and the
artifacts included, on every side; starting Python and importing excluded).
Printed: runs per second and the peak resident memory (VmHWM) of each flow
process, and

- ``RATIO pipeline_alternative map=<x> window=<x> rolling=<x> per_run=<y>``:
  each variant's throughput over ours (a variant replaces ours when it
  reaches 1.0 within the noise and its memory stays at ours);
- ``RATIO pipeline_alternative_memory map=<x> window=<x> rolling=<x>``: each
  variant's peak over ours at the same sweep.

The latest figures and the decision are in docs/scale.md.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

from _common import (
    CACHE,
    ROOT,
    make_sweep,
    offline_env,
    print_flow_side,
    run_names,
    run_side,
)

WORK = CACHE / "pipeline-alternative"
#: The variants measured on the whole sweep (per-run is the map flow).
VARIANTS = ("map", "window", "rolling")


def variant_flow(kind: str) -> Any:
    """The ``kind`` variant of grade-run (``map``, ``window`` or ``rolling``:
    module docstring), made on demand (Prefect is imported only in the flow
    processes)."""
    sys.path.insert(0, str(ROOT))
    import gc
    from itertools import islice

    from prefect import flow, tags
    from prefect.futures import PrefectFuture, as_completed
    from prefect.states import Completed
    from prefect.task_runners import ThreadPoolTaskRunner
    from prefect.utilities.annotations import opaque

    from truereward.grading.chunks import Chunk, Payload, chunk_size_for, chunked
    from truereward.grading.plan import plan_sweep
    from truereward.grading.report import GradeRunReport
    from truereward.grading.request import GradeRequest
    from truereward.grading.steps import PublishedRun
    from truereward.grading.sweep_report import write_sweep_report
    from truereward.grading.triage import triaged
    from truereward.prefect.artifacts import create_artifacts
    from truereward.prefect.records import result_of
    from truereward.prefect.tasks import ChunkPublished, fold, publish, read
    from truereward.sweeps.record import RunRecord

    # A chunk and its read, fold and publish futures.
    Chain = tuple[Chunk, PrefectFuture[Any], PrefectFuture[Any], PrefectFuture[Any]]

    def value(future: PrefectFuture[Any]) -> Any:
        """What the finished task run returned (None unless it completed)."""
        future.wait()  # sets the future's final state: no API call for it
        state = future.state
        return result_of(state) if state.is_completed() else None

    def settle(chain: Chain, report: GradeRunReport) -> None:
        """A chunk whose publish finished: its runs into ``report``, its
        payloads released (as pipeline.py does)."""
        chunk, *futures = chain
        published = value(futures[2])
        if isinstance(published, ChunkPublished):
            for item in published.published:
                report.add(item)
        else:  # the chain failed for good: its runs are not published
            why = f"the publish chain failed: {futures[2].state.message}"
            for job in chunk.jobs:
                record = RunRecord.unreadable(job.run, why)
                report.add(PublishedRun(record=record, decision="failed", error=why))
        for future in futures:
            found = value(future)
            if isinstance(found, Payload):
                found.release()

    def mapped(chunks: list[Chunk], steps: tuple[Any, Any, Any]) -> list[Chain]:
        """Every task run of ``chunks`` submitted at once, futures as inputs."""
        reading, folding, publishing = steps
        readings = reading.map(chunks)
        grades = folding.map([opaque(future) for future in readings])
        published = publishing.map([opaque(future) for future in grades])
        return list(zip(chunks, readings, grades, published, strict=True))

    def chain_of(chunk: Chunk, steps: tuple[Any, Any, Any]) -> Chain:
        reading, folding, publishing = steps
        readings = reading.submit(chunk)
        grades = folding.submit(opaque(readings))
        return chunk, readings, grades, publishing.submit(opaque(grades))

    def all_at_once(chunks: Any, steps: Any, width: int, report: GradeRunReport) -> None:
        chains = mapped(list(chunks), steps)
        by_publish = {chain[3]: chain for chain in chains}
        for future in as_completed([chain[3] for chain in chains]):
            settle(by_publish.pop(future), report)

    def windows(chunks: Any, steps: Any, width: int, report: GradeRunReport) -> None:
        pending = iter(chunks)
        while window := list(islice(pending, width)):
            chains = mapped(window, steps)
            by_publish = {chain[3]: chain for chain in chains}
            for future in as_completed(list(by_publish)):
                settle(by_publish.pop(future), report)

    def rolling(chunks: Any, steps: Any, width: int, report: GradeRunReport) -> None:
        pending = iter(chunks)
        flying: dict[PrefectFuture[Any], Chain] = {}
        while True:
            while len(flying) < width and (chunk := next(pending, None)) is not None:
                chain = chain_of(chunk, steps)
                flying[chain[3]] = chain
            if not flying:
                return
            settle(flying.pop(next(as_completed(list(flying)))), report)

    schedule = {"map": all_at_once, "window": windows, "rolling": rolling}[kind]

    @flow(
        name=f"grade-run-{kind}",
        task_runner=ThreadPoolTaskRunner(max_workers=8),
        persist_result=False,
        validate_parameters=False,
    )
    def grade_run_variant(request: GradeRequest) -> Any:
        jobs, _ = plan_sweep(request)
        size = request.chunk_size or chunk_size_for(len(jobs), request.concurrency)
        chunks = chunked(triaged(jobs, request.regrade), size)
        retries = request.max_attempts - 1
        steps = (read.with_options(retries=retries, retry_delay_seconds=0), fold, publish)
        report = GradeRunReport()
        gc.freeze()  # as pipeline.py does for the time of grading
        try:
            with tags("truereward", f"sweep:{request.sweep_label or 'runs'}"):
                schedule(chunks, steps, request.concurrency, report)
        finally:
            gc.unfreeze()
        result = report.result()
        page = write_sweep_report(result, request, None)
        create_artifacts(result, request, None, page)
        return Completed(name=result.state_name, message=result.headline(), data=result)

    return grade_run_variant


def side(name: str, sweep: Path, target: Path, runs: int | None) -> None:
    """Grade one way in this process; print the figures as JSON."""
    sys.path.insert(0, str(ROOT))
    import prefect  # noqa: F401  (imports are not timed on any side)

    from flows.grade_run import grade_run
    from truereward.grading import GradeRequest

    if runs is None:
        request = GradeRequest(sweep=str(sweep), target=str(target))
    else:  # the first runs of the sweep, one per chunk
        names = run_names(sweep)[:runs]
        request = GradeRequest(
            runs=[str(sweep / name) for name in names],
            sweep_name=sweep.name,
            target=str(target),
            chunk_size=1,
        )
    chosen = grade_run if name == "ours" else variant_flow(name)
    print_flow_side(lambda: chosen(request, return_state=True))


def measure(name: str, sweep: Path, env: dict[str, str], runs: int | None) -> dict[str, Any]:
    target = WORK / f"target-{name}"
    shutil.rmtree(target, ignore_errors=True)
    side_name = "map" if name == "per-run" else name
    command = [sys.executable, __file__, "--side", side_name, "--sweep", str(sweep)]
    command += ["--target", str(target)]
    if runs is not None:
        command += ["--first", str(runs)]
    return run_side(name, command, env, target)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small sweep, one round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--runs", type=int, help="runs in the sweep (default 10000)")
    parser.add_argument("--per-run-runs", type=int, help="runs graded one per chunk (2000)")
    parser.add_argument("--side", choices=("ours", *VARIANTS), help=argparse.SUPPRESS)
    parser.add_argument("--sweep", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--target", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--first", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        side(args.side, args.sweep, args.target, args.first)
        return 0

    sys.path.insert(0, str(ROOT))
    from tests.support.server import start_server, stop_server
    from truereward.grading.chunks import chunk_size_for

    runs = args.runs or (40 if args.quick else 10_000)
    per_run = args.per_run_runs or (16 if args.quick else 2000)
    rounds = 1 if args.quick else args.rounds
    sweep = make_sweep(runs)
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    pid, url, _ = start_server(WORK / "prefect-home")
    env = offline_env(PREFECT_API_URL=url, PREFECT_HOME=str(WORK / "client-home"))
    sides: list[tuple[str, int | None]] = [("ours", None)]
    sides += [(name, None) for name in VARIANTS] + [("per-run", per_run)]
    figures: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in sides}
    try:
        for index in range(rounds):
            for name, first in sides if index % 2 == 0 else sides[::-1]:
                found = measure(name, sweep, env, first)
                figures[name].append(found)
                print(
                    f"round {index + 1}, {name}: {found['runs']} runs in {found['seconds']:.1f} s, "
                    f"peak {found['peak_mb']:.0f} MB",
                    flush=True,
                )
    finally:
        stop_server(pid)
    rate = {
        name: statistics.median(item["runs"] / item["seconds"] for item in figures[name])
        for name in figures
    }
    peak = {name: max(item["peak_mb"] for item in figures[name]) for name in figures}
    print(
        f"{runs} runs (20 cases each, local target, thread runner of 8), "
        f"{rounds} alternating rounds:"
    )
    print(
        f"  ours (pipeline.py, chunks of {chunk_size_for(runs, 8)}): {rate['ours']:.0f} runs/s, "
        f"flow process peak {peak['ours']:.0f} MB"
    )
    width = 8  # the request's concurrency, by default
    described = {
        "map": "the same chunks, .map up front",
        "window": f".map in windows of {width} chunks",
        "rolling": f"{width} chunks in flight, a chain submitted as one ends",
    }
    for name in VARIANTS:
        print(f"  {name} ({described[name]}): {rate[name]:.0f} runs/s, peak {peak[name]:.0f} MB")
    print(
        f"  per-run (.map, one run a chunk, no carry needed; first {per_run} runs): "
        f"{rate['per-run']:.0f} runs/s, peak {peak['per-run']:.0f} MB"
    )
    speeds = " ".join(f"{name}={rate[name] / rate['ours']:.2f}" for name in VARIANTS)
    print(
        f"RATIO pipeline_alternative {speeds} "
        f"per_run={rate['per-run'] / rate['ours']:.2f} (variant throughput / ours)"
    )
    memories = " ".join(f"{name}={peak[name] / peak['ours']:.2f}" for name in VARIANTS)
    print(
        f"RATIO pipeline_alternative_memory {memories} "
        f"(variant flow-process peak / ours, {runs} runs)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
