"""Can Prefect's own machinery replace truereward/prefect/pipeline.py (our
bounded in-flight scheduling of chunks) and carry.py (a task run's progress
carried between its retries)? grade-run as it is against variant flows
written with plain task ``.map`` (futures as inputs: Prefect waits for them
and records the dependency), measured alternately in one run against one
Prefect server, each in a fresh process.

    .venv/bin/python infra/bench/pipeline_alternative.py [--quick] [--rounds N] [--runs N]
        [--per-run-runs N]

A sweep of 10,000 runs (40 with ``--quick``; ``_common.make_sweep``: 20
cases a run; shared with grade_run.py) is graded into a fresh local target
on the thread runner (8 threads) by:

- ``ours``: ``grade_run(request)`` (flows/grade_run.py): chunks of 100
  runs, at most 8 chunks in flight, each chunk's ``fold`` submitted when its
  ``read`` is done and its ``publish`` when its ``fold`` is done
  (pipeline.py), the inputs ``quote``-d;
- ``map``: the variant flow below, the same plan, the same chunks and the
  same ``read``/``fold``/``publish`` tasks (so retries still use carry.py),
  but scheduled by Prefect: ``read.map(chunks)``, ``fold.map(readings)``,
  ``publish.map(grades)`` (every task run submitted up front, futures as
  inputs, ``opaque`` so Prefect resolves a future without walking the
  rows inside its result), and the outcomes taken with
  ``prefect.futures.as_completed``. Nothing bounds what is in flight but
  the 8 threads (a tag concurrency limit bounds running task runs, not the
  results their futures keep);
- ``per-run``: the same ``.map`` flow with chunks of one run, the design
  in which carry.py is not needed (a Prefect retry of a task run re-reads
  only its one run): three task runs per run. Graded on the first
  ``--per-run-runs`` runs of the sweep (2,000; 16 with ``--quick``), its
  throughput is compared with ours on the whole sweep.

Each side's time runs from calling the flow to its end (creating and
finishing the flow run, the summary, the HTML sweep report and the
artifacts included, on every side; starting Python and importing excluded). Printed: runs per second
and the peak resident memory (VmHWM) of each flow process, and

- ``RATIO pipeline_alternative map=<x> per_run=<y>``: each variant's
  throughput over ours (a variant replaces ours when it reaches 1.0 within
  the noise, and its memory stays at ours: see the memory line);
- ``RATIO pipeline_alternative_memory map=<x>``: the map variant's peak
  over ours at the same sweep.

The outcome is written in the module docstrings of pipeline.py and
carry.py.
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


def variant_flow() -> Any:
    """The ``.map`` variant of grade-run (module docstring), made on demand
    (Prefect is imported only in the flow processes)."""
    sys.path.insert(0, str(ROOT))
    from prefect import flow
    from prefect.futures import as_completed
    from prefect.states import Completed
    from prefect.task_runners import ThreadPoolTaskRunner
    from prefect.utilities.annotations import opaque

    from truereward.grading.chunks import chunk_size_for, chunked
    from truereward.grading.plan import plan_sweep
    from truereward.grading.report import GradeRunReport
    from truereward.grading.request import GradeRequest
    from truereward.grading.steps import PublishedRun
    from truereward.grading.sweep_report import write_sweep_report
    from truereward.grading.triage import triaged
    from truereward.prefect.artifacts import create_artifacts
    from truereward.prefect.tasks import fold, publish, read
    from truereward.sweeps.record import RunRecord

    @flow(
        name="grade-run-map",
        task_runner=ThreadPoolTaskRunner(max_workers=8),
        persist_result=False,
        validate_parameters=False,
    )
    def grade_run_map(request: GradeRequest) -> Any:
        jobs, _ = plan_sweep(request)
        size = request.chunk_size or chunk_size_for(len(jobs), request.concurrency)
        chunks = list(chunked(triaged(jobs, request.regrade), size))
        retries = request.max_attempts - 1
        reading = read.with_options(retries=retries, retry_delay_seconds=0)
        readings = reading.map(chunks)
        grades = fold.map([opaque(future) for future in readings])
        published = publish.map([opaque(future) for future in grades])
        report = GradeRunReport()
        by_future = dict(zip((future.task_run_id for future in published), chunks, strict=True))
        for future in as_completed(published):
            state = future.state
            if state.is_completed():
                for item in future.result().published:
                    report.add(item)
            else:  # a chunk whose task run failed for good: its runs are not published
                why = f"the publish chain failed: {state.message}"
                for job in by_future[future.task_run_id].jobs:
                    record = RunRecord.unreadable(job.run, why)
                    report.add(PublishedRun(record=record, decision="failed", error=why))
        result = report.result()
        page = write_sweep_report(result, request, None)
        create_artifacts(result, request, None, page)
        return Completed(name=result.state_name, message=result.headline(), data=result)

    return grade_run_map


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
    chosen = grade_run if name == "ours" else variant_flow()
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
    parser.add_argument("--side", choices=("ours", "map"), help=argparse.SUPPRESS)
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
    sides: list[tuple[str, int | None]] = [("ours", None), ("map", None), ("per-run", per_run)]
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
    print(
        f"  map (the same chunks, .map with futures as inputs): {rate['map']:.0f} runs/s, "
        f"peak {peak['map']:.0f} MB"
    )
    print(
        f"  per-run (.map, one run a chunk, no carry needed; first {per_run} runs): "
        f"{rate['per-run']:.0f} runs/s, peak {peak['per-run']:.0f} MB"
    )
    print(
        f"RATIO pipeline_alternative map={rate['map'] / rate['ours']:.2f} "
        f"per_run={rate['per-run'] / rate['ours']:.2f} (variant throughput / ours)"
    )
    print(
        f"RATIO pipeline_alternative_memory map={peak['map'] / peak['ours']:.2f} "
        f"(variant flow-process peak / ours, {runs} runs)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
