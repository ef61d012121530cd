"""A 100,000-run sweep graded end to end the README's way: ``prefect
deployment run 'grade-run/local' ... --watch`` on a Prefect server with a
process worker, into a local target; against the plain library loop on a
sample of the same sweep, in the same run.

    .venv/bin/python infra/bench/grade_run_deployed.py [--quick] [--runs N] [--sample N]

The sweep (100,000 runs; 40 with ``--quick``; ``_common.make_sweep``: 20
cases a run, 80 % pass, 15 % fail a fail-to-pass case, 5 % left no
evidence; shared with grade_run.py) is graded as the README's "Grading
sweeps with Prefect" does: a ``prefect server start`` (SQLite) started here,
``prefect work-pool create truereward-process --type process``, ``prefect
deploy --prefect-file infra/prefect.yaml --name local`` and ``prefect worker
start --pool truereward-process`` in the project root, then::

    prefect deployment run 'grade-run/local' --watch \\
        -p request='{"sweep": "<sweep>", "target": "<target>"}'

(defaults: the thread runner, concurrency 8, chunks of 100 runs). Measured:
the wall time of that command (creating the flow run, the worker picking it
up, the flow-run process starting, grading, the report and artifacts, the
CLI seeing the end), the peak resident memory (VmHWM) of the flow-run
process, of the worker and of the server (sampled every second), and the
grades published (every run once). The baseline: the plain library loop
(``_common.plain_loop``, one run after another) over the first ``--sample``
runs (2,000; 20 with ``--quick``), before and after the flow, in a fresh
process each time. Printed: the figures and ``RATIO grade_run_deployed``:
the flow's throughput over the plain loop's (the target of grade_run.py
holds here too: at least 0.9).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import (
    CACHE,
    ROOT,
    Deployed,
    PeakSampler,
    make_sweep,
    plain_loop,
    run_names,
    wait_for_workers,
)

WORK = CACHE / "grade-run-deployed"
TARGET_RATIO = 0.9


def baseline_side(sweep: Path, target: Path, runs: int) -> None:
    """The plain loop over the first ``runs`` runs; prints the figures."""
    import truereward.grading
    import truereward.publishing
    import truereward.readers  # noqa: F401  (imports are not timed)

    names = run_names(sweep)[:runs]
    start = time.perf_counter()
    graded = plain_loop(sweep, target, names)
    print(json.dumps({"seconds": time.perf_counter() - start, "runs": graded}))


def baseline(sweep: Path, runs: int) -> dict[str, Any]:
    target = WORK / "target-baseline"
    shutil.rmtree(target, ignore_errors=True)
    command = [sys.executable, __file__, "--baseline-side", str(sweep), str(target), str(runs)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the plain loop failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    shutil.rmtree(target, ignore_errors=True)
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small sweep")
    parser.add_argument("--runs", type=int, help="runs in the sweep (default 100000)")
    parser.add_argument("--sample", type=int, help="runs the plain loop grades (2000)")
    parser.add_argument("--baseline-side", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.baseline_side:
        sweep_arg, target_arg, runs_arg = args.baseline_side
        baseline_side(Path(sweep_arg), Path(target_arg), int(runs_arg))
        return 0
    from tests.support.deployment import prefect

    runs = args.runs or (40 if args.quick else 100_000)
    sample = min(runs, args.sample or (20 if args.quick else 2000))
    sweep = make_sweep(runs)
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    target = WORK / "graded"
    loops = [baseline(sweep, sample)]
    with (
        Deployed(WORK / "prefect") as deployed,
        deployed.worker(WORK / "worker.log", "--name", "bench-worker") as worker,
    ):
        wait_for_workers(deployed, ["bench-worker"])
        request = json.dumps({"sweep": str(sweep), "target": str(target)})
        with (
            PeakSampler(family=[worker.pid], interval=1.0) as flows,
            PeakSampler(pids=[worker.pid, deployed.pid], interval=1.0) as services,
        ):
            start = time.perf_counter()
            ran = prefect(
                deployed.env,
                "deployment",
                "run",
                "grade-run/local",
                "--watch",
                "--watch-timeout",
                "14400",
                "-p",
                f"request={request}",
                timeout=15000,
            )
            seconds = time.perf_counter() - start
    if ran.returncode != 0:
        raise SystemExit(f"the flow run failed:\n{ran.stdout[-3000:]}\n{ran.stderr[-3000:]}")
    graded = sum(1 for _ in target.glob("*/grade.json"))
    if graded != runs:
        raise SystemExit(f"{graded} grades published for {runs} runs")
    shutil.rmtree(target, ignore_errors=True)
    loops.append(baseline(sweep, sample))
    loop_rate = statistics.median(item["runs"] / item["seconds"] for item in loops)
    final = [line for line in ran.stdout.splitlines() if "Flow run finished" in line]
    flow_peak = max(flows.peaks.values(), default=0.0)
    print(
        f"{runs} runs (20 cases each, local target), prefect deployment run 'grade-run/local' "
        f"--watch on a process worker: {seconds:.0f} s wall ({runs / seconds:.0f} runs/s); "
        f"{' '.join(final[-1].split()) if final else ran.stdout.strip().splitlines()[-1]}"
    )
    print(
        f"peak memory: the flow-run process {flow_peak:.0f} MB, the worker "
        f"{services.peaks.get(worker.pid, 0.0):.0f} MB, the server "
        f"{services.peaks.get(deployed.pid, 0.0):.0f} MB"
    )
    print(
        f"plain loop on the first {sample} runs, before and after: "
        + ", ".join(f"{item['runs'] / item['seconds']:.0f}" for item in loops)
        + " runs/s"
    )
    print(
        f"RATIO grade_run_deployed {runs / seconds / loop_rate:.2f} (the deployed flow's "
        f"throughput over {runs} runs / the plain loop's; target >= {TARGET_RATIO})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
