"""The Prefect-free plain loop against a minimal hand-written loop doing the
same I/O with the same durability, measured alternately in one process, and
the start of a fresh process that grades a sweep.

    .venv/bin/python infra/bench/plain_loop.py [--quick] [--rounds N] [--runs N] [--profile]

Both sides grade the same runs of a generated sweep (``_common.make_sweep``:
20 cases a run, 80 % pass, 15 % fail a fail-to-pass case, 5 % left no
evidence; .bench/grade-run/sweep-10000/, shared with grade_run.py), each
round a fresh slice of ``--runs`` runs (300; 25 with ``--quick``) into a
fresh target directory, the order of the two sides swapped every round:

- ours, the plain loop: ``grade_request`` of a request naming the slice's
  runs and the target (what ``truereward.grading`` gives a script): the
  plan, each run's task spec and rows read and folded, its grade published
  into ``<target>/<run>/`` (created, its parent fsynced; the four files each
  written to a temporary file, fsynced, renamed into place; the directory
  fsynced before ``reward.txt`` and after it; the directory lock and the
  conflict check), and the sweep's summary;
- the minimal loop: ``json.loads`` of ``task.json`` and of each line of
  ``rows.jsonl``, each row checked by truereward 0.4.0's ``CaseResult`` (a
  declared case without a row becomes an ungradable row), folded by 0.4.0's
  ``grade_document`` (a run without evidence is folded with a refusal),
  rendered as 0.4.0's ``write`` renders its four files, and written as
  durably as ours: ``mkdir`` and an fsync of the parent, then each file to a
  temporary file, fsync, rename, and one fsync of the directory at the end
  (one directory fsync fewer than ours, which orders ``reward.txt`` last).
  truereward 0.4.0 is installed into .bench/ and imported under another name.

A fresh process pays its imports before its first run: each side's first
run is timed as a whole process grading one run into a new target (its
imports, the ones the first run makes, and that run), five times after an
untimed one, with bytecode cached as on an installed package
(``_common.cached_bytecode_env``), less what importing this module costs a
bare interpreter. Printed:
each side's runs per second (medians over the rounds), its first run, and
a ``RATIO`` line: a fresh process grading ``--runs`` runs (its first run,
then the rest at the median time a run), ours as a fraction of the
minimal loop's throughput. Target: at least 0.5.
``--profile`` also grades one more slice under cProfile and prints where our
time goes. ``--dir`` puts the targets elsewhere: on tmpfs (``--dir
/dev/shm/plain-loop``) fsync costs nothing and the loops' own work shows.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from _common import CACHE, cached_bytecode_env, install_target, load_as, make_sweep, run_names

TARGET_RATIO = 0.5
WORK = CACHE / "plain-loop"


def our_loop(sweep: Path, target: Path, runs: list[str]) -> int:
    """grade_request over ``runs`` of ``sweep`` into ``target``."""
    from truereward.grading import GradeRequest, grade_request

    request = GradeRequest(
        runs=[str(sweep / run) for run in runs], target=str(target), sweep_name=sweep.name
    )
    return grade_request(request).summary.runs


def process_start(code: str, sweep: Path, run: str) -> float:
    """The median wall time of five fresh processes, each running ``code``
    to grade ``run`` of ``sweep`` once into a new target, after one untimed
    run that leaves the bytecode an installed package would have."""
    import subprocess

    times = []
    for _ in range(6):
        target = Path(tempfile.mkdtemp(dir=WORK))
        filled = code.format(sweep=str(sweep), run=run, target=str(target))
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", filled],
            check=True,
            cwd=Path(__file__).parent,
            env=cached_bytecode_env(),
        )
        times.append(time.perf_counter() - start)
        shutil.rmtree(target)
    return statistics.median(times[1:])


OURS_START = (
    "from pathlib import Path\n"
    "from plain_loop import our_loop\n"
    "our_loop(Path({sweep!r}), Path({target!r}), [{run!r}])"
)
MINIMAL_START = (
    "from pathlib import Path\n"
    "from plain_loop import minimal_loop\n"
    "from _common import install_target, load_as\n"
    "legacy = load_as(install_target('truereward==0.4.0') / 'truereward', 'truereward_040')\n"
    "minimal_loop(legacy, Path({sweep!r}), Path({target!r}), [{run!r}])"
)


def minimal_loop(legacy: ModuleType, sweep: Path, target: Path, runs: list[str]) -> int:
    """Read, fold with 0.4.0, write the four files durably (module docstring)."""
    graded = 0
    for run in runs:
        cases: dict[str, str] = json.loads((sweep / run / "task.json").read_bytes())["cases"]
        try:
            lines = (sweep / run / "rows.jsonl").read_bytes().splitlines()
        except FileNotFoundError:
            refusal = {"code": "NOTHING_GRADED", "why": "no evidence: rows.jsonl is missing"}
            document = legacy.grade_document([], refusals=[refusal])
        else:
            rows = [legacy.CaseResult.from_row(json.loads(line)).to_row() for line in lines]
            seen = {row["id"] for row in rows}
            rows += [
                legacy.CaseResult(
                    id=case, kind=kind, verdict="ungradable", code="CASE_NOT_GRADED", why="no row"
                ).to_row()
                for case, kind in cases.items()
                if case not in seen
            ]
            document = legacy.grade_document(rows)
        bodies = {
            "grade.json": json.dumps(document, indent=1, sort_keys=True) + "\n",
            "ctrf.json": json.dumps(legacy.ctrf(document), indent=1) + "\n",
        }
        if document["gradable"]:
            bodies["reward.json"] = (
                json.dumps(
                    {
                        "reward": document["reward"],
                        "fix_rate": document["fix_rate"],
                        "guards_hold": int(document["guards_hold"]),
                    },
                    indent=1,
                )
                + "\n"
            )
            bodies["reward.txt"] = f"{document['reward']}\n"
        durable_write(target / run, {name: text.encode() for name, text in bodies.items()})
        graded += 1
    return graded


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def durable_write(directory: Path, bodies: dict[str, bytes]) -> None:
    """A new directory (its entry made durable), each body to a temporary
    file there, fsync, rename; one fsync of the directory."""
    os.mkdir(directory)
    _fsync_dir(directory.parent)
    for name, data in bodies.items():
        fd, temp = tempfile.mkstemp(dir=directory, prefix=f".{name}.")
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, directory / name)
    _fsync_dir(directory)


def same_answers(ours: Path, theirs: Path, runs: list[str]) -> None:
    """Both sides published the same files with the same rewards."""
    for run in runs:
        mine, other = sorted(os.listdir(ours / run)), sorted(os.listdir(theirs / run))
        assert mine == other, (run, mine, other)
        if "reward.txt" in mine:
            assert float((ours / run / "reward.txt").read_text()) == float(
                (theirs / run / "reward.txt").read_text()
            ), run


def profile(sweep: Path, runs: list[str]) -> None:
    """Our loop over ``runs`` under cProfile: where the time goes."""
    import cProfile
    import pstats

    target = WORK / "profile"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    profiler = cProfile.Profile()
    profiler.enable()
    our_loop(sweep, target, runs)
    profiler.disable()
    shutil.rmtree(target, ignore_errors=True)
    stats = pstats.Stats(profiler)
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = max(cumulative for (_, _, _, cumulative, _) in raw.values())

    def share(name: str, filename: str = "") -> float:
        """The cumulative time of the functions ``name`` (a built-in's name
        is matched inside ``<built-in method posix.fsync>``) in ``filename``."""
        return (
            sum(
                cumulative
                for (file, _, function), (_, _, _, cumulative, _) in raw.items()
                if (function == name or f".{name}>" in function) and filename in file
            )
            / total
        )

    print(f"profile of our loop over {len(runs)} runs ({total:.2f} s under cProfile):")
    for label, name, filename in (
        ("publish (all of it)", "publish", "truereward/publishing/__init__"),
        ("  the fsyncs", "fsync", "~"),
        ("  read-back and re-fold (_holds_up)", "_holds_up", "truereward/publishing"),
        ("  render the four bodies", "render", "truereward/grade/files"),
        ("grade_document", "grade_document", "truereward/grade/document"),
        ("read_with_evidence", "read_with_evidence", "truereward/readers"),
        ("TaskSpec.load", "load", "truereward/record/taskspec"),
    ):
        print(f"  {label:40s} {share(name, filename) * 100:5.1f} %")
    stats.sort_stats("tottime").print_stats(15)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--runs", type=int, help="runs per round and side (default 300)")
    parser.add_argument("--profile", action="store_true", help="also profile our loop")
    parser.add_argument(
        "--dir", type=Path, help="where the targets go (say /dev/shm/...: fsync costs nothing)"
    )
    args = parser.parse_args()
    global WORK
    if args.dir is not None:
        WORK = args.dir
    legacy = load_as(install_target("truereward==0.4.0") / "truereward", "truereward_040")
    assert legacy.__version__ == "0.4.0"
    rounds = 2 if args.quick else args.rounds
    per_round = args.runs or (25 if args.quick else 300)
    sweep = make_sweep(200 if args.quick else 10_000)
    names = run_names(sweep)
    if per_round * (rounds + args.profile) > len(names):
        raise SystemExit(f"{rounds} rounds of {per_round} runs need a larger sweep")
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)

    import truereward.publishing
    import truereward.readers  # noqa: F401  (imports are not timed)

    # Both sides agree on what they publish before anything is timed.
    sample = names[:20]
    our_loop(sweep, WORK / "check-ours", sample)
    (WORK / "check-theirs").mkdir()
    minimal_loop(legacy, sweep, WORK / "check-theirs", sample)
    same_answers(WORK / "check-ours", WORK / "check-theirs", sample)

    mine: list[float] = []
    theirs: list[float] = []
    for index in range(rounds):
        runs = names[index * per_round : (index + 1) * per_round]
        sides = [("ours", mine), ("minimal", theirs)]
        for label, out in sides if index % 2 == 0 else sides[::-1]:
            target = WORK / f"{label}-{index}"
            target.mkdir()
            start = time.perf_counter()
            if label == "ours":
                our_loop(sweep, target, runs)
            else:
                minimal_loop(legacy, sweep, target, runs)
            out.append((time.perf_counter() - start) / per_round)
            shutil.rmtree(target)
    if args.profile:
        profile(sweep, names[rounds * per_round : (rounds + 1) * per_round])
    first = names[-1]  # graded by no round
    # Both processes import this module to reach their loop; what that costs
    # beyond a bare interpreter is the bench's, not either side's.
    harness = process_start("import plain_loop", sweep, first) - process_start("", sweep, first)
    ours_start = process_start(OURS_START, sweep, first) - max(0.0, harness)
    theirs_start = process_start(MINIMAL_START, sweep, first) - max(0.0, harness)
    shutil.rmtree(WORK, ignore_errors=True)
    ours_s, theirs_s = statistics.median(mine), statistics.median(theirs)
    rest = per_round - 1
    ratio = (theirs_start + rest * theirs_s) / (ours_start + rest * ours_s)
    pairs = sorted(other / own for own, other in zip(mine, theirs, strict=True))
    print(
        f"{rounds} alternating rounds of {per_round} runs (20 cases each, local target, "
        f"Python {sys.version.split()[0]})"
    )
    print(
        f"plain loop: {1 / ours_s:.0f} runs/s ({ours_s * 1e3:.2f} ms a run); minimal loop: "
        f"{1 / theirs_s:.0f} runs/s ({theirs_s * 1e3:.2f} ms a run); per-round ratios "
        f"{pairs[0]:.2f}..{pairs[-1]:.2f}"
    )
    print(
        f"a fresh process grading its first run (imports included): ours {ours_start:.2f} s, "
        f"the minimal loop's {theirs_start:.2f} s; per run alone: {theirs_s / ours_s:.2f}"
    )
    print(
        f"RATIO plain_loop {ratio:.2f} (a fresh process grading {per_round} runs: plain loop "
        f"throughput / minimal loop; target >= {TARGET_RATIO})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
