"""``truereward checks score`` against ai-eval-forge 0.2.0 on the same case
files, in the same run: wall time and peak memory of the whole process tree.

    .venv/bin/python infra/bench/checks_throughput.py [--quick] [--rounds N]

Two files are generated once under .bench/ (git-ignored): 100,000 cases
with the default check (token_f1) and 100,000 cases with seven checks each
(exact, contains, regex, token_f1, json_valid, json_field,
citation_coverage); ``--quick`` uses 5,000 of each. ai-eval-forge 0.2.0 is
installed into .bench/ with ``pip install --target`` and run through its
own command line (``ai-eval-forge score FILE``); ours is ``truereward checks
score FILE --jobs 2`` (and ``--jobs 1``, for information). Each writes its
JSON report to a file. Runs alternate (theirs, ours, ...) and the medians are
compared; both reports must agree on the summary first.

Memory: while a command runs, its process tree (every descendant, found
through /proc) is sampled every 20 ms, and each process's high-water mark
(VmHWM) is kept; the figure is the *sum* of those peaks, an upper bound on
the tree's peak (the workers' peaks need not coincide). Linux only.

Targets: ours at least 3 times faster with --jobs 2, and at most a quarter
of ai-eval-forge's peak memory (RATIO time >= 3, memory >= 4). The CPU
seconds of each tree are printed too: on a machine shared with other work,
wall time with two workers depends on how much of the second core is free,
and the CPU ratio says what the code itself costs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import CACHE, ROOT, install_target

WORDS = [
    "the",
    "a",
    "of",
    "model",
    "answer",
    "paris",
    "france",
    "capital",
    "city",
    "river",
    "seine",
    "tower",
    "eiffel",
    "museum",
    "louvre",
    "art",
    "history",
    "built",
    "year",
    "during",
    "visitors",
    "million",
    "people",
    "known",
    "famous",
    "bridge",
    "north",
    "south",
    "water",
    "light",
    "night",
    "opened",
    "first",
    "second",
    "large",
    "small",
]


def sentence(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def default_case(rng: random.Random, index: int) -> dict[str, object]:
    expected = sentence(rng, 8, 30)
    actual = expected if index % 3 == 0 else sentence(rng, 8, 30)
    return {
        "id": f"case-{index:06d}",
        "input": "question: " + sentence(rng, 4, 10),
        "actual": actual,
        "expected": expected,
        "costUsd": 0.0012,
        "latencyMs": 800 + index % 400,
        "tags": ["bench"],
    }


def seven_case(rng: random.Random, index: int) -> dict[str, object]:
    expected = sentence(rng, 8, 30)
    answer = expected if index % 2 == 0 else sentence(rng, 8, 30)
    cited = "[src1] and [src2]" if index % 4 else "[src1]"
    output = json.dumps({"answer": answer, "n": index % 5, "sources": cited})
    return {
        "id": f"case-{index:06d}",
        "input": "question: " + sentence(rng, 4, 10),
        "actual": output,
        "expected": expected,
        "sources": [{"id": "src1"}, {"id": "src2"}],
        "costUsd": 0.0021,
        "latencyMs": 900 + index % 300,
        "checks": [
            {"type": "exact", "value": output if index % 5 else "something else"},
            {"type": "contains", "value": ["answer", "src1", "sources"]},
            {"type": "regex", "pattern": r"\"n\":\s*[0-3]\b", "flags": "i"},
            {"type": "token_f1", "value": expected, "min": 0.5, "required": False},
            {"type": "json_valid"},
            {"type": "json_field", "path": "n", "value": index % 3},
            {"type": "citation_coverage", "min": 0.5},
        ],
    }


def case_file(kind: str, count: int) -> Path:
    path = CACHE / f"checks-{kind}-{count}.jsonl"
    if not path.exists():
        make = default_case if kind == "default" else seven_case
        rng = random.Random(f"{kind}-{count}")
        temporary = path.with_suffix(".tmp")
        with temporary.open("w") as out:
            for index in range(count):
                out.write(json.dumps(make(rng, index)) + "\n")
        temporary.replace(path)
    return path


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found.extend(int(child) for child in handle.read().split())
        except OSError:
            continue
    return found


def _high_water_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(command: list[str], output: Path) -> tuple[float, float, float]:
    """Run ``command`` with stdout to ``output``; (wall seconds, the sum of
    the peak RSS of every process of its tree in MiB, the CPU seconds of the
    tree)."""
    peaks: dict[int, int] = {}
    cpu_before = _children_cpu()
    with output.open("wb") as out:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, cwd=ROOT)
        while process.poll() is None:
            stack = [process.pid]
            while stack:
                pid = stack.pop()
                peaks[pid] = max(peaks.get(pid, 0), _high_water_kb(pid))
                stack.extend(_children(pid))
            time.sleep(0.02)
        elapsed = time.perf_counter() - started
    if process.returncode not in (0, 1):
        raise SystemExit(f"{command} failed with status {process.returncode}")
    return elapsed, sum(peaks.values()) / 1024, _children_cpu() - cpu_before


def summary_of(path: Path) -> dict[str, object]:
    summary: dict[str, object] = json.loads(path.read_text())["summary"]
    summary.pop("errors", None)
    return summary


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="5,000 cases per file, one round")
    parser.add_argument("--rounds", type=int, help="alternating rounds (default 3; quick: 1)")
    args = parser.parse_args()
    count = 5_000 if args.quick else 100_000
    rounds = args.rounds or (1 if args.quick else 3)
    if not sys.platform.startswith("linux"):
        raise SystemExit("this benchmark reads /proc: Linux only")
    CACHE.mkdir(exist_ok=True)
    reference = install_target("ai-eval-forge==0.2.0")
    theirs_prefix = [
        sys.executable,
        "-c",
        f"import sys; sys.path.insert(0, {str(reference)!r})\n"
        "from ai_eval_forge.cli import main\nsys.exit(main(sys.argv[1:]))",
        "score",
    ]
    ours_prefix = [sys.executable, "-m", "truereward", "checks", "score"]
    print(
        f"{count:,} cases per file, {rounds} alternating round(s), Python "
        f"{sys.version.split()[0]}, {os.cpu_count()} cores"
    )
    if args.quick:
        print("(--quick: a smoke run; on small files starting processes dominates, and the")
        print(" targets apply to the full run of 100,000 cases)")
    for kind in ("default", "seven"):
        path = case_file(kind, count)
        runs: dict[str, list[tuple[float, float, float]]] = {
            "theirs": [],
            "jobs2": [],
            "jobs1": [],
        }
        commands = {
            "theirs": [*theirs_prefix, str(path)],
            "jobs2": [*ours_prefix, str(path), "--jobs", "2"],
            "jobs1": [*ours_prefix, str(path), "--jobs", "1"],
        }
        for _ in range(rounds):
            for name, command in commands.items():
                runs[name].append(measure(command, CACHE / f"checks-{kind}-{name}.json"))
        reports = {name: summary_of(CACHE / f"checks-{kind}-{name}.json") for name in commands}
        if not reports["theirs"] == reports["jobs2"] == reports["jobs1"]:
            raise SystemExit(f"the reports disagree on {path.name}: {reports}")
        medians = {
            name: tuple(statistics.median(run[field] for run in values) for field in range(3))
            for name, values in runs.items()
        }
        label = {
            "theirs": "ai-eval-forge 0.2.0",
            "jobs2": "ours --jobs 2",
            "jobs1": "ours --jobs 1",
        }
        for name, (seconds, mib, cpu) in medians.items():
            print(
                f"{kind:7} {label[name]:20} {seconds:7.2f} s  {mib:8.1f} MiB peak (tree)  "
                f"{cpu:7.2f} s CPU"
            )
        theirs_time, theirs_memory, theirs_cpu = medians["theirs"]
        time_ratio = theirs_time / medians["jobs2"][0]
        memory_ratio = theirs_memory / medians["jobs2"][1]
        single = theirs_time / medians["jobs1"][0]
        cpu_ratio = theirs_cpu / medians["jobs1"][2]
        print(
            f"RATIO checks_throughput {kind} time={time_ratio:.2f} memory={memory_ratio:.2f} "
            f"(jobs 1: time={single:.2f} cpu={cpu_ratio:.2f}) (targets: time >= 3, memory >= 4)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
