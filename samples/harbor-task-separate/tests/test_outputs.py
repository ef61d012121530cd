"""The verifier of the count task: one test per case of task.json, graded with truereward.

Harbor copies this directory to /tests and runs tests/test.sh from the working directory;
test.sh runs this module with ``pytest -p truereward.plugin``. Each test grades one case
through the plugin's ``grade`` fixture: ``read_case`` runs the agent's ``/app/count.py`` on
the case's input. At the end of the session the plugin folds the rows of every case and
publishes the grade in /logs/verifier: ``reward.json`` and ``reward.txt`` only when the
whole case set was graded.

Where the agent's files come from: in Harbor's shared mode this runs in the agent's own
container and reads ``/app`` as the agent left it. In separate mode (``harbor-task-separate``)
it runs in a container of its own, and ``/app`` is the artifact Harbor copied out of the
agent's container; task.toml's ``[verifier.env]`` says so with ``APP_FROM_ARTIFACTS=1``, and
then an ``/app`` that is absent means nothing arrived: the case is ungradable
(``EVIDENCE_UNREADABLE``, the grader's), never a fail. A ``count.py`` missing from an ``/app``
that arrived is the agent's doing: a fail, in both modes.

Outside a container: ``APP_DIR`` is the agent's directory (default /app), ``GRADE_LOGS``
the logs directory (default /logs/verifier; the plugin reads it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from truereward import CaseResult, CaseSpec
from truereward.codes import Ungradable
from truereward.plugin import cases

APP = Path(os.environ.get("APP_DIR", "/app"))
#: Set (task.toml's [verifier.env]) when /app reaches this verifier as a Harbor artifact.
FROM_ARTIFACTS = os.environ.get("APP_FROM_ARTIFACTS") == "1"
CASES = cases("task.json")


def read_case(case: CaseSpec) -> CaseResult:
    """Pass when ``count.py`` prints the case's expected counts for its input and exits 0.
    No time limit here: pytest-timeout (test.sh's ``--timeout``) stops a program that hangs,
    and the case fails."""
    given, expected = case.options.get("stdin"), case.options.get("expect")
    if not isinstance(given, str) or not isinstance(expected, str):
        raise Ungradable("CASE_NOT_PREPARED", f"{case.id}: task.json gives no stdin and expect")
    if FROM_ARTIFACTS and not APP.is_dir():
        raise Ungradable(
            "EVIDENCE_UNREADABLE",
            f"{APP} did not reach the verifier: Harbor collected no such artifact from the "
            "agent's container (the trial's artifacts/manifest.json says why: the copy failed, "
            "or the agent removed the directory)",
        )
    program = APP / "count.py"
    if not program.is_file():
        return CaseResult(id=case.id, kind=case.kind, verdict="fail", why=f"no {program}")
    done = subprocess.run(
        [sys.executable, str(program)],
        input=given.encode("utf-8"),
        capture_output=True,
        check=False,
    )
    got = done.stdout.decode("utf-8", "replace").strip()
    if done.returncode == 0 and got == expected:
        return CaseResult(id=case.id, kind=case.kind, verdict="pass")
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return CaseResult(
        id=case.id,
        kind=case.kind,
        verdict="fail",
        why=f"expected {expected!r}, got {got!r} (exit {done.returncode})"
        + (f": {said[-1][:200]}" if said else ""),
    )


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_case(
    case: CaseSpec, grade: Callable[[CaseSpec, Callable[[CaseSpec], CaseResult]], None]
) -> None:
    grade(case, read_case)
