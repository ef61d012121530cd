"""infra/cpu_by_process.py: a command's CPU by kind of process, its children
found through the tag in their environment or through their parent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.scripts import load_script

SCRIPT = ROOT / "infra" / "cpu_by_process.py"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["/v/bin/python", "/v/bin/prefect", "server", "start", "--port", "1"],
            "prefect server start",
        ),
        (
            ["/v/bin/python", "/v/bin/prefect", "--no-prompt", "deploy", "--name", "local"],
            "prefect deploy",
        ),
        (["/v/bin/python", "-m", "prefect.engine"], "python -m prefect.engine"),
        (["/v/bin/python", "-I", "/t/kitzygote_server.py", "/tmp/z/socket"], "kitzygote_server.py"),
        (["/v/bin/python", "/v/bin/truereward", "grade", "/tmp/run"], "truereward grade"),
        (
            ["python3", "-u", "-c", "import sys;exec(eval(sys.stdin.readline()))"],
            "pytest-xdist worker",
        ),
        (["python3", "-c", "print(1)\n\nprint(2)"], "python -c print(1) print(2)"),
        (["/usr/lib/chromium/chromium --type=renderer --user-data-dir=/tmp/x"], "chromium"),
        (
            ["/v/bin/python", "flows/grade_run.py", "nightly", "--target", "out"],
            "grade_run.py nightly",
        ),
        (["python3"], "python3"),
        ([], "(gone before read)"),
    ],
)
def test_a_process_is_named_by_what_it_runs(argv: list[str], expected: str) -> None:
    assert load_script("infra/cpu_by_process.py").kind(argv) == expected


# Burns the CPU, then sleeps long enough for a reading to see all of it.
BURN = (
    "import time\nt = time.process_time()\nwhile time.process_time() - t < {}: pass\n"
    "time.sleep(0.5)\n"
)


def test_children_are_counted_with_or_without_the_tag_and_the_status_is_the_commands(
    tmp_path: Path,
) -> None:
    # The parent burns 0.3 s, its child (with an empty environment, so found
    # only through its parent) 0.6 s, then the parent exits 3.
    parent = (
        "import subprocess, sys\n"
        + BURN.format(0.3)
        + f"subprocess.run([sys.executable, '-c', {BURN.format(0.6)!r}], env={{}}, check=True)\n"
        + "sys.exit(3)\n"
    )
    out = tmp_path / "processes.jsonl"
    command = [sys.executable, "-c", parent]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--every", "0.05", "--json", str(out), "--", *command],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    processes = [json.loads(line) for line in out.read_text().splitlines()]
    cpu = {process["argv"][2].split("\n")[0]: process["cpu"] for process in processes}
    assert set(cpu) == {"import subprocess, sys", "import time"}, processes
    # /proc gives user and system time each cut down to whole clock ticks, so a
    # reading may fall short by up to two ticks (CI once read 0.59 for 0.6).
    short = 2 / os.sysconf("SC_CLK_TCK")
    assert cpu["import subprocess, sys"] >= 0.3 - short, cpu
    assert cpu["import time"] >= 0.6 - short, cpu
    assert "2 processes" in done.stdout.splitlines()[-1], done.stdout
