"""Harbor's reward kit (``harbor-rewardkit`` 0.2.3), run over a workspace.

rewardkit needs Python 3.12 or newer, so it gets a venv of its own, made like
Harbor's (``tests/support/harbor.py``): outside the repository, once per machine,
keyed by version (``~/.cache/truereward-tests/rewardkit-0.2.3-py3.12``, or
under ``$XDG_CACHE_HOME``), reused when its marker names the same
requirements and interpreter and rewardkit imports from it, built under a
lock so that xdist workers build it once. Nothing here skips: no Python 3.12
or a failed install raises :class:`RewardkitUnavailable` with the installer's
output.

:func:`rewardkit_scores` runs ``tests/support/rewardkit_driver.py`` in that venv:
each case is a tests directory of its own holding one Python file that calls
one criterion, run by rewardkit's own ``runner.run`` (what its command line
calls) into a fresh output directory. What comes back per case is what
rewardkit wrote (``reward.json``'s ``reward`` and the criterion's value in
``reward-details.json``) or, when it wrote nothing, the exception it raised.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypedDict, TypeVar

from tests.support.harbor import _locked, cache_root, find_python312
from tests.support.installs import make_venv

REWARDKIT_VERSION = "0.2.3"
#: rewardkit and what its image and spreadsheet criteria import (its ``image``
#: extra is Pillow; its ``documents`` extra would bring markitdown for the one
#: openpyxl it needs), pinned so the venv means one thing.
REQUIREMENTS = (
    f"harbor-rewardkit=={REWARDKIT_VERSION}",
    "pillow==13.0.0",
    "openpyxl==3.1.5",
)
DRIVER = Path(__file__).with_name("rewardkit_driver.py")

INSTALL_TIMEOUT = 1800
RUN_TIMEOUT = 900


class RewardkitUnavailable(RuntimeError):
    """rewardkit's venv could not be made: no Python 3.12, or the install failed."""


class KitResult(TypedDict):
    """What rewardkit did with one case: ``reward`` (reward.json) and
    ``value`` (the criterion's value in reward-details.json), or ``error``
    (the exception it raised; then it wrote nothing)."""

    reward: float | None
    value: float | None
    error: str | None
    wrote: bool


def venv_dir() -> Path:
    return cache_root() / f"rewardkit-{REWARDKIT_VERSION}-py3.12"


def _marker(python: str) -> dict[str, Any]:
    return {"requirements": list(REQUIREMENTS), "python": os.path.realpath(python)}


def _valid(venv: Path, python: str) -> bool:
    try:
        if json.loads((venv / "truereward-ready.json").read_text()) != _marker(python):
            return False
    except (OSError, ValueError):
        return False
    check = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-I",
            "-c",
            "import importlib.metadata as m, rewardkit, PIL, openpyxl; "
            "print(m.version('harbor-rewardkit'))",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return check.returncode == 0 and check.stdout.strip() == REWARDKIT_VERSION


@functools.cache
def rewardkit_python() -> Path:
    """The Python of a venv with ``harbor-rewardkit==0.2.3``: the cached one
    when valid, else made now (once across xdist workers). Raises
    :class:`RewardkitUnavailable`."""
    try:
        python = find_python312()
    except RuntimeError as error:
        raise RewardkitUnavailable(str(error)) from None
    venv = venv_dir()
    with _locked(venv.with_name(venv.name + ".lock")):
        if not _valid(venv, python):
            shutil.rmtree(venv, ignore_errors=True)
            make_venv(
                venv, python, REQUIREMENTS, error=RewardkitUnavailable, timeout=INSTALL_TIMEOUT
            )
            (venv / "truereward-ready.json").write_text(json.dumps(_marker(python)))
            if not _valid(venv, python):
                raise RewardkitUnavailable(f"{REQUIREMENTS} installed into {venv} do not import")
    return venv / "bin" / "python"


def rewardkit_scores(
    workspace: Path | str, cases: Sequence[Mapping[str, Any]]
) -> dict[str, KitResult]:
    """What rewardkit 0.2.3 gives each case over ``workspace``: ``cases`` are
    ``{"id", "call", "workspace"?}``, ``call`` a line of Python calling one
    criterion (``criteria.file_exists("notes.txt")``), ``workspace`` another
    workspace for that case. Keyed by case id."""
    python = rewardkit_python()
    with tempfile.TemporaryDirectory(prefix="truereward-rewardkit-") as scratch:
        work = Path(scratch)
        request = {
            "workspace": str(Path(workspace).resolve()),
            "work": str(work / "work"),
            "cases": [
                {key: case[key] for key in ("id", "call", "workspace") if key in case}
                for case in cases
            ],
        }
        (work / "request.json").write_text(json.dumps(request))
        env = {
            **os.environ,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "HOME": str(work / "home"),
            "PYTHONWARNINGS": "ignore",
        }
        done = subprocess.run(
            [str(python), "-I", str(DRIVER), str(work / "request.json"), str(work / "out.json")],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(
                f"the rewardkit driver failed (exit {done.returncode})\n--- stdout\n"
                f"{done.stdout}\n--- stderr\n{done.stderr}"
            )
        answer: dict[str, Any] = json.loads((work / "out.json").read_text())
    if answer["version"] != REWARDKIT_VERSION:
        raise AssertionError(f"the driver ran rewardkit {answer['version']}")
    results: dict[str, KitResult] = answer["cases"]
    return results


Theirs = TypeVar("Theirs")
Ours = TypeVar("Ours")


def side_by_side(theirs: Callable[[], Theirs], ours: Callable[[], Ours]) -> tuple[Theirs, Ours]:
    """``theirs`` (rewardkit's run) in a thread while ``ours`` (truereward's
    on the same input) runs here, so that the two overlap: each with
    processes and outputs of its own, and each waiting out the same timeouts
    and failures. Either one's exception is raised."""
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(theirs)
        mine = ours()
        return running.result(), mine


if __name__ == "__main__":  # pragma: no cover - a manual check
    print(rewardkit_python())
