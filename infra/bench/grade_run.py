"""The grade-run flow against a running Prefect server, against the plain
library loop, measured alternately in one run, each side in a fresh process.

    .venv/bin/python infra/bench/grade_run.py [--quick] [--rounds N] [--sizes N ...]
        [--baseline-at-every-size] [--profile]

Sweeps of 10,000 and 100,000 runs (100 with ``--quick``) are generated once
into .bench/grade-run/sweep-<N>/ (git-ignored; ``_common.make_sweep``): one
directory per run with a task spec of 20 cases and its rows (JSONL; 80 % of
runs pass, 15 % fail a fail-to-pass case, 5 % left no evidence). Each side
grades the whole sweep into a fresh local target directory:

- baseline, the plain library loop, no Prefect (``_common.plain_loop``): for
  each run directory, ``TaskSpec.load``, ``read_with_evidence("rows", ...)``,
  ``grade_document``, ``publish`` (the four files, atomic and durable), one
  run after another;
- ours: ``grade_run(request)`` (flows/grade_run.py) as a flow run on a
  ``prefect server start`` (SQLite) started by this script: plan, chunks of
  runs through the thread task runner (defaults: concurrency 8, chunk size
  chosen from the sweep's size: 100 at both full sizes), a read, fold and
  publish task run per chunk, the summary, the HTML report and both
  artifacts. Its time includes creating and finishing the flow run.

Each side's time excludes starting Python and importing (the same for every
sweep size). At the first size the two sides alternate ``--rounds`` times
(2); at the larger sizes only ours runs, once (its memory is the question
there; a plain loop over 100,000 runs takes as long again:
``--baseline-at-every-size`` runs it too). Printed: runs per second on each
side, the peak resident memory (VmHWM) of each process (ours is the flow
process: the flow, its task runs on threads, the Prefect client) and of the
server, and

- ``RATIO grade_run_<N>``: baseline time / our time, i.e. our throughput as
  a fraction of the plain loop's (target: at least 0.9 at 10,000 runs);
- ``RATIO grade_run_memory``: the flow process's peak at the largest size
  over its peak at the first (target: at most 1.2, i.e. flat within 20 %,
  and under 300 MB at every size).

``--profile`` runs our side once more at the first size under py-spy (the
flow process, every thread, CPU samples; .bench/grade-run/flow-profile.txt;
``.venv/bin/pip install py-spy``) and prints where the samples go.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _common import (
    CASES,
    ROOT,
    SWEEPS,
    PeakSampler,
    make_sweep,
    offline_env,
    peak_rss_mb,
    profile_summary,
    py_spy_command,
    run_side,
)
from _common import plain_loop as baseline

CACHE = SWEEPS
TARGET_RATIO = 0.9
MEMORY_FLAT = 1.2
MEMORY_TARGET_MB = 300.0
PROFILE = CACHE / "flow-profile.txt"


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
    print(json.dumps({"seconds": seconds, "runs": graded, "peak_mb": peak_rss_mb()}))


def measure(
    name: str,
    sweep: Path,
    env: dict[str, str],
    chunk_size: int | None = None,
    profile: bool = False,
) -> dict[str, Any]:
    target = CACHE / f"target-{name}"
    shutil.rmtree(target, ignore_errors=True)
    command = [sys.executable, __file__, "--side", name, "--sweep", str(sweep)]
    command += ["--target", str(target)]
    if chunk_size:
        command += ["--chunk-size", str(chunk_size)]
    if profile:  # every thread of the flow process, CPU samples only
        command = [*py_spy_command(PROFILE), *command]
    return run_side(name, command, env, target)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one small sweep, one round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--sizes", type=int, nargs="+", help="sweep sizes (10000 100000)")
    parser.add_argument("--baseline-at-every-size", action="store_true")
    parser.add_argument("--profile", action="store_true", help="profile our side once more")
    parser.add_argument("--side", choices=("baseline", "ours"), help=argparse.SUPPRESS)
    parser.add_argument("--sweep", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--target", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--chunk-size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        side(args.side, args.sweep, args.target, args.chunk_size)
        return 0

    sys.path.insert(0, str(ROOT))
    from tests.support.server import start_server, stop_server
    from truereward.grading.chunks import chunk_size_for

    sizes = args.sizes or ([100] if args.quick else [10_000, 100_000])
    rounds = 1 if args.quick else args.rounds
    sweeps = {size: make_sweep(size) for size in sizes}
    home = CACHE / "prefect-home"
    shutil.rmtree(home, ignore_errors=True)
    pid, url, _ = start_server(home)
    env = offline_env(PREFECT_API_URL=url, PREFECT_HOME=str(CACHE / "client-home"))
    peaks: dict[int, float] = {}
    ratios: dict[int, float] = {}
    try:
        with PeakSampler(family=[pid], pids=[pid], interval=1.0) as server:
            for number, size in enumerate(sizes):
                with_baseline = number == 0 or args.baseline_at_every_size
                mine: list[dict[str, Any]] = []
                theirs: list[dict[str, Any]] = []
                for _ in range(rounds if number == 0 else 1):
                    if with_baseline:
                        theirs.append(measure("baseline", sweeps[size], env))
                    mine.append(measure("ours", sweeps[size], env))
                ours_s = statistics.median(item["seconds"] for item in mine)
                peaks[size] = max(item["peak_mb"] for item in mine)
                line = (
                    f"{size} runs ({CASES} cases each, local target, chunks of "
                    f"{chunk_size_for(size, 8)}): flow {size / ours_s:.0f} runs/s "
                    f"({ours_s:.1f} s, flow process peak {peaks[size]:.0f} MB)"
                )
                if theirs:
                    base_s = statistics.median(item["seconds"] for item in theirs)
                    ratios[size] = base_s / ours_s
                    line += (
                        f"; plain loop {size / base_s:.0f} runs/s ({base_s:.1f} s, peak "
                        f"{max(item['peak_mb'] for item in theirs):.0f} MB)"
                    )
                print(line, flush=True)
            if args.profile:
                measure("ours", sweeps[sizes[0]], env, profile=True)
        print(f"peak memory of the Prefect server: {max(server.peaks.values()):.0f} MB")
    finally:
        stop_server(pid)
    if args.profile:
        profile_summary(PROFILE, title="the flow process (py-spy, CPU samples, every thread)")
    for size, ratio in ratios.items():
        print(
            f"RATIO grade_run_{size} {ratio:.2f} (flow throughput / plain loop; "
            f"target >= {TARGET_RATIO} at 10000 runs)"
        )
    if len(sizes) > 1:
        first, last = sizes[0], sizes[-1]
        print(
            f"RATIO grade_run_memory {peaks[last] / peaks[first]:.2f} (flow process peak "
            f"{peaks[last]:.0f} MB at {last} runs / {peaks[first]:.0f} MB at {first}; "
            f"target <= {MEMORY_FLAT}, each under {MEMORY_TARGET_MB:.0f} MB)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
