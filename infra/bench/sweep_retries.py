"""`truereward sweep summary` vs `sweep retries` vs `sweep report` over one
sweep of published grades, measured alternately in one run, each command in
a fresh process.

    .venv/bin/python infra/bench/sweep_retries.py [--quick] [--runs N]

The sweep is the one infra/bench/sweep_summary.py generates (default
100,000 runs; 2,000 with --quick; cached under .bench/sweep-<N>/): 60 %
pass, 25 % fail, 10 % ungradable under four codes (two of them the
grader's, so those runs stand refused for the grader's reasons), 4 % graded
on a second attempt, 1 % without a grade.json. So `sweep retries` lists
about 9 % of the runs, and `sweep report` lists the first 50 of them.

Each command runs through the command-line entry point in its own process
(`main([...])`, output to /dev/null, the report to a file), timed from the
call to its return; its peak resident memory is read by the process that
started it, with `resource.getrusage(RUSAGE_CHILDREN)` (each measured
process is the only child of a small wrapper process, so the figure is that
one process's peak, not the largest of several).

Printed: runs per second and peak RSS for each command (median over the
rounds), the report's peak at 2,000 runs beside the full size's (it must
not grow with the number of runs), PEAK lines (target: each under 300 MB)
and RATIO lines: each command's throughput over `sweep summary`'s (target:
at least 0.8). Exit 1 when a peak is over the target, or, on a full run,
a ratio is under it. ``--quick`` is a smoke run: at 2,000 runs one-off
imports weigh on every side and the ratios are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

from sweep_summary import generate

ROOT = Path(__file__).resolve().parents[2]
MEMORY_TARGET_MB = 300.0
RATIO_TARGET = 0.8
COMMANDS = ("summary", "retries", "report")


def child(kind: str, sweep: str) -> dict[str, Any]:
    """Run one command in this process; what it did and how long it took."""
    from truereward.cli import main

    measured: dict[str, Any] = {"kind": kind}
    with tempfile.TemporaryDirectory(prefix="bench-report-") as scratch:
        out = os.path.join(scratch, "report.html")
        argv = {
            "summary": ["sweep", "summary", sweep, "--json"],
            "retries": ["sweep", "retries", sweep, "--format", "json"],
            "report": ["sweep", "report", sweep, "--output", out],
        }[kind]
        with open(os.devnull, "w", encoding="utf-8") as sink, redirect_stdout(sink):
            start = time.perf_counter()
            status = main(argv)
            measured["seconds"] = time.perf_counter() - start
        measured["status"] = status
        if kind == "report":
            page = Path(out).read_text(encoding="utf-8")
            measured["bytes"] = len(page)
            for name in ("runs", "retries.listed"):
                found = re.search(rf'data-metric="{re.escape(name)}" data-value="(\d+)"', page)
                measured[name] = int(found.group(1)) if found else None
    return measured


def measure(kind: str, sweep: Path) -> dict[str, Any]:
    """In a wrapper process: run the child, and add its peak RSS as the
    kernel counted it for this process's only child."""
    result = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(sweep)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"{kind} child failed:\n{result.stderr}")
    measured = dict(json.loads(result.stdout.strip().splitlines()[-1]))
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB elsewhere
    measured["peak_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale / 2**20
    return measured


def run_measured(kind: str, sweep: Path) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, __file__, "--measure", kind, str(sweep)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{result.stderr}")
    measured = dict(json.loads(result.stdout.strip().splitlines()[-1]))
    if measured["status"] != 0:
        raise SystemExit(f"{kind} exited {measured['status']}")
    return measured


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="a short smoke run (2,000 runs)")
    parser.add_argument("--runs", type=int, help="runs in the sweep (default 100,000)")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "SWEEP"), help=argparse.SUPPRESS)
    parser.add_argument("--measure", nargs=2, metavar=("KIND", "SWEEP"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    if args.measure:
        print(json.dumps(measure(args.measure[0], Path(args.measure[1]))))
        return 0

    runs = args.runs or (2_000 if args.quick else 100_000)
    rounds = 1 if args.quick else 3
    started = time.perf_counter()
    sweep = generate(runs)
    print(
        f"sweep of {runs} runs at {sweep.relative_to(ROOT)} "
        f"({time.perf_counter() - started:.1f} s to prepare)"
    )
    run_measured("summary", sweep)  # warm the page cache, untimed
    results: dict[str, list[dict[str, Any]]] = {kind: [] for kind in COMMANDS}
    for _ in range(rounds):
        for kind in COMMANDS:
            results[kind].append(run_measured(kind, sweep))
    report = results["report"][0]
    assert report["runs"] == runs, report
    assert report["retries.listed"], "the sweep has retried and still-refused runs to list"

    seconds = {
        kind: statistics.median(item["seconds"] for item in results[kind]) for kind in COMMANDS
    }
    peaks = {kind: max(item["peak_mb"] for item in results[kind]) for kind in COMMANDS}
    print(
        f"Python {sys.version.split()[0]}, {rounds} alternating rounds, each command a fresh "
        "process (peak RSS: getrusage(RUSAGE_CHILDREN) of its wrapper)"
    )
    for kind in COMMANDS:
        print(
            f"sweep {kind:<8} {runs / seconds[kind]:9.0f} runs/s ({seconds[kind]:.2f} s), "
            f"peak RSS {peaks[kind]:.0f} MB"
        )
    print(
        f"the report lists {report['retries.listed']} retried or still-refused runs "
        f"(shows 50), {report['bytes'] / 1024:.0f} KiB of HTML"
    )
    if runs > 2_000:
        small = run_measured("report", generate(2_000))
        print(
            f"report peak RSS at 2,000 runs: {small['peak_mb']:.0f} MB; at {runs}: "
            f"{peaks['report']:.0f} MB"
        )
    failed = False
    for kind in COMMANDS:
        verdict = "OK" if peaks[kind] < MEMORY_TARGET_MB else "OVER TARGET"
        failed |= verdict != "OK"
        print(
            f"PEAK sweep_{kind} {peaks[kind]:.0f} MB "
            f"(target < {MEMORY_TARGET_MB:.0f} MB): {verdict}"
        )
    for kind in ("retries", "report"):
        ratio = seconds["summary"] / seconds[kind]
        verdict = "OK" if ratio >= RATIO_TARGET else "BELOW TARGET"
        failed |= verdict != "OK" and not args.quick
        print(
            f"RATIO sweep_{kind} throughput {kind}/summary={ratio:.2f} "
            f"({runs / seconds[kind]:.0f} vs {runs / seconds['summary']:.0f} runs/s; "
            f"target >= {RATIO_TARGET}): {verdict}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
