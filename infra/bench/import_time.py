"""Start-up cost: ``python -c "import truereward"`` and ``truereward fold`` on
20 rows, against ``python -c pass``, in the same run (fresh interpreters,
alternating).

    .venv/bin/python infra/bench/import_time.py [--quick]

Each measurement is a fresh process; the figures are medians of wall time
and of the child's CPU time (user + system, from ``getrusage``), which is
fairer on a shared, loaded machine. The children run with bytecode caching
on (``PYTHONDONTWRITEBYTECODE`` removed from their environment) after one
warm-up run, as on an installed package: a venv that has no ``.pyc`` files
and may not write them (``uv pip install`` writes none; a session with
``PYTHONDONTWRITEBYTECODE=1``) compiles every module it imports on every
start, which costs more than the rest of the command.

Targets: ``import truereward`` under 0.25 s; ``truereward fold`` of 20 rows
into a fresh logs directory under 0.1 s wall.

Also measured, as the floor of any command that validates with pydantic: a
process that imports pydantic and builds one strict model of two fields
(``pydantic floor``). Building a model's validator is what loads
pydantic-core and pydantic's schema machinery; ``truereward fold`` cannot
start faster than that.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import cached_bytecode_env

#: The child processes' environment: bytecode caching on, no analytics.
ENV = cached_bytecode_env()


#: The floor: pydantic imported and one strict model's validator built.
PYDANTIC_FLOOR = (
    "from pydantic import BaseModel, ConfigDict\n"
    "class Row(BaseModel):\n"
    "    model_config = ConfigDict(strict=True, frozen=True)\n"
    "    id: str\n"
    "    verdict: str\n"
    "Row(id='a', verdict='pass')"
)


def timed(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``command`` (which must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, env=ENV, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def write_rows(path: Path) -> None:
    """20 passing rows, 5 fail-to-pass and 15 pass-to-pass, as JSON lines."""
    with path.open("w", encoding="utf-8") as out:
        for index in range(20):
            kind = "fail_to_pass" if index < 5 else "pass_to_pass"
            row = {"id": f"tests/test_m.py::test_{index}", "kind": kind, "verdict": "pass"}
            out.write(json.dumps(row) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds = 5 if args.quick else 30
    work = Path(tempfile.mkdtemp(prefix="truereward-import-time-"))
    try:
        rows = work / "rows.jsonl"
        write_rows(rows)
        python = [sys.executable]
        fold = [*python, "-m", "truereward", "fold", str(rows), "--logs"]
        commands = {
            "pass": [*python, "-c", "pass"],
            "import": [*python, "-c", "import truereward"],
            "pydantic": [*python, "-c", PYDANTIC_FLOOR],
            "fold": fold,
        }
        for name, command in commands.items():  # warm-up: bytecode written
            timed([*command, str(work / "warm")] if name == "fold" else command)
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for index in range(rounds):
            for name, command in commands.items():
                if name == "fold":
                    command = [*command, str(work / f"logs-{index}")]
                wall, cpu = timed(command)
                walls[name].append(wall)
                cpus[name].append(cpu)
        wall = {name: statistics.median(values) for name, values in walls.items()}
        cpu = {name: statistics.median(values) for name, values in cpus.items()}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name, label in (
        ("pass", "python -c pass"),
        ("import", "python -c 'import truereward'"),
        ("pydantic", "pydantic floor (one model)"),
        ("fold", "truereward fold (20 rows)"),
    ):
        print(
            f"{label:32s} wall {wall[name] * 1e3:6.1f} ms, cpu {cpu[name] * 1e3:6.1f} ms "
            f"(medians of {rounds})"
        )
    print(
        f"RATIO import_time whole={wall['import']:.3f}s "
        f"import={wall['import'] - wall['pass']:.3f}s "
        f"ratio={wall['import'] / wall['pass']:.2f} (target: whole < 0.25 s)"
    )
    print(
        f"RATIO cli_fold wall={wall['fold']:.3f}s cpu={cpu['fold']:.3f}s "
        f"over-python={wall['fold'] - wall['pass']:.3f}s "
        f"pydantic-floor={wall['pydantic']:.3f}s (target: wall < 0.1 s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
