"""Peak resident memory and wall time of Python code run in a fresh process.

The peak is ``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`` taken, once
the measured process has exited, in a small launcher process whose only
child it is. Measured from a pytest worker directly it would not be the
measured process's own: on Linux a process's ``ru_maxrss`` starts at the
peak of the process it was spawned from (exec records the replaced address
space's high-water mark), and a pytest worker may have grown past any
budget on other tests. The launcher is small, so what the measured process
inherits from it is small.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from typing import IO

#: Peak resident memory allowed to a process that grades hostile input.
BUDGET_MB = 300

LAUNCH = textwrap.dedent("""
    import json, resource, subprocess, sys
    ran = subprocess.run([sys.executable, "-c", *sys.argv[1:]], capture_output=True)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    sys.stderr.buffer.write(ran.stderr)
    print(json.dumps({"returncode": ran.returncode, "peak_kb": peak_kb}))
    sys.stdout.flush()
    sys.stdout.buffer.write(ran.stdout)
""")


@dataclass(frozen=True)
class Measured:
    """What the measured process printed and exited with, its peak resident
    memory (MB) and the wall time of the whole launch (seconds)."""

    returncode: int
    stdout: str
    stderr: str
    peak_mb: float
    seconds: float


def measured(
    code: str, *args: str, stdin: IO[bytes] | None = None, timeout: float = 300
) -> Measured:
    """Run ``python -c code args...`` in a fresh process under the launcher
    (module docstring); ``stdin`` is its standard input."""
    started = time.monotonic()
    launched = subprocess.run(
        [sys.executable, "-c", LAUNCH, code, *args],
        capture_output=True,
        stdin=stdin,
        timeout=timeout,
        check=False,
    )
    seconds = time.monotonic() - started
    assert launched.returncode == 0, launched.stderr.decode()[-3000:]
    head, _, rest = launched.stdout.partition(b"\n")
    outcome = json.loads(head)
    return Measured(
        returncode=outcome["returncode"],
        stdout=rest.decode(),
        stderr=launched.stderr.decode(),
        peak_mb=outcome["peak_kb"] / 1024,  # Linux: kilobytes
        seconds=seconds,
    )


def cli_code() -> str:
    """Code that runs the command line on its arguments and exits with its
    status (for :func:`measured`)."""
    return "import sys; from truereward.cli import main; sys.exit(main(sys.argv[1:]))"
