"""Where a command's CPU goes, by kind of process: a Prefect server, a worker,
a flow run, a pytest worker, a command line (Linux only, reads ``/proc``).

    .venv/bin/python infra/cpu_by_process.py [--every SECONDS] [--json FILE] -- COMMAND...

Runs COMMAND and, every ``--every`` seconds (0.2), reads the CPU (user +
system) of every process that belongs to it: one whose environment carries
the tag this script sets for COMMAND, or whose parent belonged when first
seen (a child started with an environment of its own). A process's last
reading is what it used, so one that lived less than an interval counts
little or nothing, and one killed keeps what it had. Prints one line a kind
(:func:`kind`), most CPU first, then the total against COMMAND's own
``children`` rusage; exits with COMMAND's status. ``--json`` writes one line
a process (command line, ``PYTEST_CURRENT_TEST`` of its start, CPU).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

TAG = "TRUEREWARD_CPU_BY_PROCESS"
TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Seen:
    """One process: its test at first sight, its command line and CPU at last."""

    argv: list[str]
    test: str
    cpu: float = 0.0


def kind(argv: list[str]) -> str:
    """A short name for what ``argv`` runs: the program, and for Python its
    module (``-m``), script or console script with its subcommand (``prefect
    server start``, ``truereward grade``), or the start of its ``-c`` code."""
    if not argv:
        return "(gone before read)"
    # A program may rewrite its command line into one string (chromium does).
    interpreter = Path(argv[0].split(" ", 1)[0]).name
    if not interpreter.startswith("python"):
        return interpreter
    rest = [part for part in argv[1:] if part not in ("-u", "-I", "-B", "-S", "-E")]
    if not rest:
        return interpreter
    if rest[0] == "-m" and len(rest) > 1:
        return f"python -m {rest[1]}"
    if rest[0] == "-c" and len(rest) > 1:
        code = " ".join(rest[1].split())
        if "exec(eval(sys.stdin.readline()))" in code:  # execnet: a pytest-xdist worker
            return "pytest-xdist worker"
        return f"python -c {code[:40]}"
    program = Path(rest[0]).name
    # Subcommands name the kind (prefect server start): the words after the
    # leading options, up to the next option, path or value.
    words: list[str] = []
    for word in rest[1:]:
        if word.startswith("-"):
            if words:
                break
        elif word.isidentifier() or word.replace("-", "").isalpha():
            words.append(word)
        else:
            break
    return " ".join([program, *words[: 2 if program == "prefect" else 1]])


def _stats() -> list[tuple[int, str, str, float]]:
    """(start time, pid, parent pid, CPU seconds) of every process now
    running, oldest first: a parent comes before its children, across a
    wrap of the pid numbers too."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:  # gone since the listing
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # the name before may hold spaces
        cpu = (int(fields[11]) + int(fields[12])) / TICK
        found.append((int(fields[19]), pid, fields[1], cpu))
    return sorted(found)


def _argv(pid: str) -> list[str]:
    """The command line of ``pid``; empty when gone or a zombie."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []
    return [part.decode(errors="replace") for part in argv if part]


def _first_sight(pid: str, tag: str, parent: Seen | None) -> Seen | None:
    """``pid`` as ours (the tag in its environment, or a parent of ours), or
    None; its command line is left to :func:`sample`, which reads it each round."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    if f"{TAG}={tag}".encode() not in environ and parent is None:
        return None
    test = next((e for e in environ if e.startswith(b"PYTEST_CURRENT_TEST=")), b"=")
    return Seen([], test.split(b"=", 1)[1].decode(errors="replace"))


def sample(process: subprocess.Popen[bytes], tag: str, every: float) -> dict[tuple[str, int], Seen]:
    """Read the tagged processes until ``process`` ends; keyed by pid and start time."""
    seen: dict[tuple[str, int], Seen] = {}
    foreign: set[tuple[str, int]] = set()  # judged not ours once, never read again
    ours: dict[str, Seen] = {}  # by pid, the last round's: a parent gone since still counts
    while process.poll() is None:
        now: dict[str, Seen] = {}
        for start, pid, parent, cpu in _stats():
            key = (pid, start)  # a pid is reused; with its start time it is not
            if key in foreign:
                continue
            if key not in seen:
                first = _first_sight(pid, tag, now.get(parent) or ours.get(parent))
                if first is None:
                    foreign.add(key)
                    continue
                seen[key] = first
            # Read again each time: a child seen between its fork and its exec
            # still shows its parent's command line.
            seen[key].argv = _argv(pid) or seen[key].argv
            seen[key].cpu = cpu
            now[pid] = seen[key]
        ours = now
        time.sleep(every)
    return seen


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=float, default=0.2, help="seconds between readings")
    parser.add_argument("--json", type=Path, help="one JSON line a process, to this file")
    parser.add_argument("command", nargs="+", help="the command, after --")
    args = parser.parse_args(argv)
    tag = uuid.uuid4().hex
    process = subprocess.Popen(args.command, env={**os.environ, TAG: tag})
    seen = sample(process, tag, args.every)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    by_kind: dict[str, list[float]] = defaultdict(list)
    for one in seen.values():
        by_kind[kind(one.argv)].append(one.cpu)
    total = sum(sum(cpus) for cpus in by_kind.values())
    print(f"{'CPU s':>8} {'share':>6} {'count':>6} {'mean s':>7}  kind")
    for name, cpus in sorted(by_kind.items(), key=lambda item: -sum(item[1])):
        share = sum(cpus) / total if total else 0.0
        print(f"{sum(cpus):8.1f} {share:6.1%} {len(cpus):6d} {sum(cpus) / len(cpus):7.2f}  {name}")
    print(
        f"{total:8.1f} s read in {len(seen)} processes; the command's reaped children used "
        f"{children.ru_utime + children.ru_stime:.1f} s (user + system)"
    )
    if args.json:
        with args.json.open("w") as out:
            for one in seen.values():
                out.write(json.dumps({"argv": one.argv, "test": one.test, "cpu": one.cpu}) + "\n")
    return process.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
