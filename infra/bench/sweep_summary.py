"""Summary of a sweep of published grades: `truereward sweep summary` against
reading and json-parsing the same files with the standard library, measured
alternately in one run, each side in a fresh process.

    .venv/bin/python infra/bench/sweep_summary.py [--quick] [--runs N]

The sweep (default 100,000 runs; 2,000 with --quick) is generated once into
.bench/sweep-<N>/ (git-ignored) and reused: one directory per run with its
grade.json (12 cases; 60 % pass, 25 % fail, 10 % ungradable under various
codes and blames, 4 % graded on a second attempt, 1 % without a readable
grade). Both sides list the runs and read every grade.json:

- ours: `truereward sweep summary DIR --json` (the command-line entry point,
  in process: list, read, validate the fields used, summarise, print);
- baseline: `os.scandir` + `open().read()` + `json.loads` per run, counting
  the gradable runs: the least any reader of these files must do.

Printed: runs per second for each side, the peak resident memory of each
process (target for ours: under 300 MB; it must not grow with the number of
runs: the run at 2,000 runs is printed beside it), the same for `--strict`
(whole-document validation, one round), and a RATIO line: baseline time /
our time (above 1 means faster than the bare stdlib read-and-parse).
``--quick`` is a smoke run: at 2,000 runs our side's one-off imports (the
command line, pydantic models: about 0.25 s) dominate and its ratio is far
below the full run's; the figure is the full run.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".bench"
MEMORY_TARGET_MB = 300.0
CODES = [
    ("EVIDENCE_MISSING", "ungradable"),
    ("EVIDENCE_MALFORMED", "ungradable"),
    ("CASE_NOT_GRADED", "ungradable"),
    ("GRADER_TIMEOUT", "ungradable"),
]


def _rows(outcome: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for index in range(12):
        kind = "fail_to_pass" if index < 3 else "pass_to_pass"
        verdict = "fail" if outcome == "fail" and index == 1 else "pass"
        rows.append(
            {
                "id": f"tests/test_mod{index // 4}.py::TestThing::test_case_{index}[p{index}]",
                "kind": kind,
                "verdict": verdict,
                "why": "assert 2 == 3" if verdict == "fail" else "",
                "measures": {"ms": 10.0 + index},
                "duration_s": 0.01 * index,
            }
        )
    if outcome in dict(CODES):
        rows[5] = {**rows[5], "verdict": "ungradable", "code": outcome, "why": "see log"}
    return rows


def _templates() -> list[bytes]:
    """Grade documents with RUNID where the run id goes, in the sweep's mix."""
    import truereward

    def document(outcome: str) -> bytes:
        run: dict[str, Any] = {"id": "RUNID", "sweep": "bench"}
        attempts: list[dict[str, Any]] = []
        if outcome == "retried":
            run["attempt"] = 2
            attempts = [
                {
                    "attempt": 1,
                    "gradable": False,
                    "refusals": [
                        {"code": "GRADER_TIMEOUT", "blame": "grader", "why": "slow", "case": None}
                    ],
                }
            ]
        rows = _rows("pass" if outcome == "retried" else outcome)
        return truereward.grade_document(rows, run=run, attempts=attempts).to_bytes()

    mix = ["pass"] * 60 + ["fail"] * 25 + ["retried"] * 4
    mix += [code for code, _ in CODES for _ in range(10 // len(CODES) + 1)][:10]
    return [document(outcome) for outcome in mix]


def generate(runs: int) -> Path:
    """The sweep of ``runs`` runs under .bench/, generated once."""
    where = CACHE / f"sweep-{runs}"
    marker = where / ".complete"
    if marker.exists():
        return where
    templates = _templates()
    where.mkdir(parents=True, exist_ok=True)
    for index in range(runs):
        run = f"run-{index:06d}"
        directory = where / run
        directory.mkdir(exist_ok=True)
        if index % 100 == 99:
            continue  # 1 %: no grade.json
        body = templates[index % len(templates)].replace(b"RUNID", run.encode())
        (directory / "grade.json").write_bytes(body)
    marker.write_text("ok\n")
    return where


def child_ours(sweep: str, strict: bool) -> dict[str, Any]:
    from truereward.cli import main

    argv = ["sweep", "summary", sweep, "--json", *(["--strict"] if strict else [])]
    buffer = io.StringIO()
    start = time.perf_counter()
    with redirect_stdout(buffer):
        status = main(argv)
    elapsed = time.perf_counter() - start
    summary = json.loads(buffer.getvalue())["summary"]
    return {
        "status": status,
        "seconds": elapsed,
        "runs": summary["runs"],
        "gradable": summary["gradable"],
    }


def child_baseline(sweep: str) -> dict[str, Any]:
    start = time.perf_counter()
    runs = gradable = 0
    with os.scandir(sweep) as entries:
        names = sorted(entry.name for entry in entries if entry.is_dir() and entry.name[0] != ".")
    for name in names:
        runs += 1
        try:
            with open(os.path.join(sweep, name, "grade.json"), "rb") as handle:
                document = json.loads(handle.read())
        except FileNotFoundError:
            continue
        gradable += document.get("gradable") is True
    elapsed = time.perf_counter() - start
    return {"status": 0, "seconds": elapsed, "runs": runs, "gradable": gradable}


def peak_rss_mb() -> float:
    """This process's peak resident memory. VmHWM (Linux) starts afresh at
    exec; ru_maxrss can carry the forking parent's peak across it."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB elsewhere
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale / 1024


def run_child(kind: str, sweep: Path) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(sweep)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"{kind} child failed:\n{result.stderr}")
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="a short smoke run (2,000 runs)")
    parser.add_argument("--runs", type=int, help="runs in the sweep (default 100,000)")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "SWEEP"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, sweep = args.child
        measured = (
            child_baseline(sweep) if kind == "baseline" else child_ours(sweep, kind == "strict")
        )
        measured["peak_mb"] = peak_rss_mb()
        print(json.dumps(measured))
        return 0

    runs = args.runs or (2_000 if args.quick else 100_000)
    rounds = 1 if args.quick else 3
    started = time.perf_counter()
    sweep = generate(runs)
    print(
        f"sweep of {runs} runs at {sweep.relative_to(ROOT)} "
        f"({time.perf_counter() - started:.1f} s to prepare)"
    )
    run_child("baseline", sweep)  # warm the page cache, untimed
    ours: list[dict[str, Any]] = []
    theirs: list[dict[str, Any]] = []
    for _ in range(rounds):
        ours.append(run_child("ours", sweep))
        theirs.append(run_child("baseline", sweep))
    assert all(item["runs"] == runs for item in ours + theirs), (ours, theirs)
    assert {item["gradable"] for item in ours} == {theirs[0]["gradable"]}, (ours, theirs)
    strict = run_child("strict", sweep)
    assert strict["gradable"] == ours[0]["gradable"]

    ours_s = statistics.median(item["seconds"] for item in ours)
    theirs_s = statistics.median(item["seconds"] for item in theirs)
    peak = max(item["peak_mb"] for item in ours)
    print(
        f"Python {sys.version.split()[0]}, {rounds} alternating rounds, each side a fresh process"
    )
    print(
        f"ours (sweep summary):      {runs / ours_s:9.0f} runs/s ({ours_s:.2f} s), "
        f"peak RSS {peak:.0f} MB"
    )
    print(
        f"baseline (read+json.loads): {runs / theirs_s:7.0f} runs/s ({theirs_s:.2f} s), "
        f"peak RSS {max(item['peak_mb'] for item in theirs):.0f} MB"
    )
    print(
        f"ours --strict (one round): {runs / strict['seconds']:8.0f} runs/s "
        f"({strict['seconds']:.2f} s), peak RSS {strict['peak_mb']:.0f} MB"
    )
    if runs > 2_000:
        small = run_child("ours", generate(2_000))
        print(f"peak RSS at 2,000 runs: {small['peak_mb']:.0f} MB; at {runs}: {peak:.0f} MB")
    verdict = "OK" if peak < MEMORY_TARGET_MB else "OVER TARGET"
    print(f"PEAK sweep_summary {peak:.0f} MB (target < {MEMORY_TARGET_MB:.0f} MB): {verdict}")
    print(
        f"RATIO sweep_summary throughput ours/baseline={theirs_s / ours_s:.2f} "
        f"({runs / ours_s:.0f} vs {runs / theirs_s:.0f} runs/s)"
    )
    return 0 if peak < MEMORY_TARGET_MB else 1


if __name__ == "__main__":
    sys.exit(main())
