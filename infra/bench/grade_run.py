"""The grade-run flow against a running Prefect server, against the plain
library loop, measured alternately in one run, each side in a fresh process.

    .venv/bin/python infra/bench/grade_run.py [--quick] [--rounds N]

Sweeps of 1,000 and 5,000 runs (200 with ``--quick``) are generated once
into .bench/grade-run/sweep-<N>/ (git-ignored): one directory per run with a
task spec of 20 cases and its rows (JSONL; 80 % of runs pass, 15 % fail a
fail-to-pass case, 5 % left no evidence). Each side grades the whole sweep
into a fresh local target directory:

- baseline, the plain library loop, no Prefect: for each run directory,
  ``TaskSpec.load``, ``read_with_evidence("rows", ...)``, ``grade_document``,
  ``publish`` (the four files, atomic and durable), one run after another;
- ours: ``grade_run(request)`` (flows/grade_run.py) as a flow run on a
  ``prefect server start`` (SQLite) started by this script: plan, chunks of
  runs through the thread task runner (defaults: concurrency 8, chunk size
  chosen from the sweep's size), a read, fold and publish task run per chunk,
  the summary and both artifacts. Its time includes creating and finishing
  the flow run.

Each side's time excludes starting Python and importing (the same for every
sweep size). Printed: runs per second on each side, the peak resident memory
of each process (ours includes the Prefect client), and one ``RATIO`` line
per size: baseline time / our time, i.e. our throughput as a fraction of the
plain loop's (target: at least 0.5).

Memory must not grow with the sweep beyond the summary. The flow holds the
chunks in flight (``concurrency`` x chunk size runs, with their rows and
documents), and the default chunk size grows with the sweep up to 100 runs
(32 at 1,000 runs, 100 at 5,000), so the default runs differ by that; the
full run therefore also grades both sweeps once more at one fixed chunk size
(100) and prints the two peaks: what is left is what the sweep itself costs
(its list of run ids, the summary, the bounded table).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".bench" / "grade-run"
CASES = 20
TARGET_RATIO = 0.5


def make_sweep(runs: int) -> Path:
    """The sweep of ``runs`` runs, generated once."""
    sweep = CACHE / f"sweep-{runs}"
    if (sweep / ".complete").exists():
        return sweep
    shutil.rmtree(sweep, ignore_errors=True)
    sweep.mkdir(parents=True)
    random.seed(runs)
    cases = {
        f"tests/test_module_{index:02d}.py::test_behaviour": (
            "fail_to_pass" if index < 5 else "pass_to_pass"
        )
        for index in range(CASES)
    }
    spec = json.dumps({"cases": cases, "reader": "rows"})
    for index in range(runs):
        run = sweep / f"run-{index:05d}"
        run.mkdir()
        (run / "task.json").write_text(spec)
        draw = random.random()
        if draw < 0.05:
            continue  # no evidence: EVIDENCE_MISSING
        failing = next(iter(cases)) if draw < 0.20 else None
        (run / "rows.jsonl").write_text(
            "".join(
                json.dumps(
                    {
                        "id": case,
                        "kind": kind,
                        "verdict": "fail" if case == failing else "pass",
                        "measures": {"duration_ms": round(random.uniform(1, 900), 1)},
                    }
                )
                + "\n"
                for case, kind in cases.items()
            )
        )
    (sweep / ".complete").write_text("")
    return sweep


# --- the two sides, each run in a fresh process (--side) ---------------------------------


def baseline(sweep: Path, target: Path) -> int:
    """The plain library loop; returns the number of runs graded."""
    from truereward import grade_document, publish
    from truereward.readers import read_with_evidence
    from truereward.taskspec import TaskSpec

    graded = 0
    for run in sorted(entry.name for entry in os.scandir(sweep) if entry.is_dir()):
        spec = TaskSpec.load(sweep / run / "task.json")
        info = {"id": run, "sweep": sweep.name}
        try:
            reading = read_with_evidence("rows", str(sweep / run / "rows.jsonl"), spec)
        except Exception as error:  # a refusal: the document says so
            from truereward.codes import Ungradable

            if not isinstance(error, Ungradable):
                raise
            document = grade_document([], run=info, refusals=[error])
        else:
            document = grade_document(
                reading.rows, case_set=spec, run=info, evidence=reading.evidence
            )
        publish(document, target / run)
        graded += 1
    return graded


def ours(sweep: Path, target: Path, chunk_size: int | None = None) -> int:
    """The grade-run flow on the configured server; returns the runs graded."""
    sys.path.insert(0, str(ROOT))
    from flows.grade_run import grade_run
    from truereward.grading import GradeRequest

    request = GradeRequest(sweep=str(sweep), target=str(target), chunk_size=chunk_size)
    state = grade_run(request, return_state=True)
    result = state.result()
    if not state.is_completed():
        raise SystemExit(f"the flow ended {state.name}: {state.message}")
    return int(result.summary.runs)


def side(name: str, sweep: Path, target: Path, chunk_size: int | None) -> None:
    """Run one side and print its figures as JSON."""
    if name == "ours":
        import prefect  # noqa: F401  (imports are not timed on either side)

        import flows  # noqa: F401
    import truereward.grading
    import truereward.publishing
    import truereward.readers  # noqa: F401

    start = time.perf_counter()
    graded = ours(sweep, target, chunk_size) if name == "ours" else baseline(sweep, target)
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "runs": graded, "peak_mb": peak_mb}))


def measure(
    name: str, sweep: Path, env: dict[str, str], chunk_size: int | None = None
) -> dict[str, Any]:
    target = CACHE / f"target-{name}"
    shutil.rmtree(target, ignore_errors=True)
    command = [sys.executable, __file__, "--side", name, "--sweep", str(sweep)]
    command += ["--target", str(target)]
    if chunk_size:
        command += ["--chunk-size", str(chunk_size)]
    done = subprocess.run(
        command,
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{name} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    graded = sum(1 for _ in target.glob("*/grade.json"))
    if graded != figures["runs"]:
        raise SystemExit(f"{name}: {graded} grades published for {figures['runs']} runs")
    shutil.rmtree(target, ignore_errors=True)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one small sweep, one round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--side", choices=("baseline", "ours"), help=argparse.SUPPRESS)
    parser.add_argument("--sweep", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--target", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--chunk-size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        side(args.side, args.sweep, args.target, args.chunk_size)
        return 0

    sys.path.insert(0, str(ROOT))
    from tests.grading.server import offline_env, start_server, stop_server
    from truereward.grading.chunks import chunk_size_for

    sizes = [200] if args.quick else [1000, 5000]
    rounds = 1 if args.quick else args.rounds
    sweeps = {size: make_sweep(size) for size in sizes}
    home = CACHE / "prefect-home"
    shutil.rmtree(home, ignore_errors=True)
    pid, url, _ = start_server(home)
    env = offline_env(PREFECT_API_URL=url, PREFECT_HOME=str(CACHE / "client-home"))
    peaks: dict[int, float] = {}
    fixed: dict[int, float] = {}
    ratios: dict[int, float] = {}
    try:
        for size in sizes:
            mine: list[dict[str, Any]] = []
            theirs: list[dict[str, Any]] = []
            for _ in range(rounds):
                theirs.append(measure("baseline", sweeps[size], env))
                mine.append(measure("ours", sweeps[size], env))
            ours_s = statistics.median(item["seconds"] for item in mine)
            base_s = statistics.median(item["seconds"] for item in theirs)
            peaks[size] = max(item["peak_mb"] for item in mine)
            ratios[size] = base_s / ours_s
            print(
                f"{size} runs ({CASES} cases each, local target): "
                f"flow {size / ours_s:.0f} runs/s ({ours_s:.2f} s, peak {peaks[size]:.0f} MB); "
                f"plain loop {size / base_s:.0f} runs/s ({base_s:.2f} s, peak "
                f"{max(item['peak_mb'] for item in theirs):.0f} MB)"
            )
        if len(sizes) > 1:
            for size in sizes:
                fixed[size] = measure("ours", sweeps[size], env, chunk_size=100)["peak_mb"]
    finally:
        stop_server(pid)
    if len(sizes) > 1:
        print(
            f"peak memory of the flow process: {peaks[sizes[0]]:.0f} MB at {sizes[0]} runs, "
            f"{peaks[sizes[-1]]:.0f} MB at {sizes[-1]} runs "
            f"({peaks[sizes[-1]] - peaks[sizes[0]]:+.0f} MB; default chunk sizes "
            f"{chunk_size_for(sizes[0], 8)} and {chunk_size_for(sizes[-1], 8)})"
        )
        print(
            f"peak memory at a fixed chunk size of 100: {fixed[sizes[0]]:.0f} MB at "
            f"{sizes[0]} runs, {fixed[sizes[-1]]:.0f} MB at {sizes[-1]} runs "
            f"({fixed[sizes[-1]] - fixed[sizes[0]]:+.0f} MB)"
        )
    for size, ratio in ratios.items():
        print(
            f"RATIO grade_run_{size} {ratio:.2f} (flow throughput / plain loop; "
            f"target >= {TARGET_RATIO})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
