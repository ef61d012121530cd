"""Harbor's reward kit (``harbor-rewardkit`` 0.2.3) installed the way a task
installs it, for the rewardkit bridge's tests.

rewardkit needs Python 3.12 or newer, so it gets a venv of its own, made like
Harbor's (``tests/harbor.py``): outside the repository, once per machine,
keyed by version (``~/.cache/truereward-tests/rewardkit-bridge-0.2.3-py3.12``,
or under ``$XDG_CACHE_HOME``), reused when its marker names the same
requirement and interpreter and rewardkit imports from it with that version,
built under a lock so that xdist workers build it once. Nothing here skips: no
Python 3.12 or a failed install raises :class:`RewardkitUnavailable` with
pip's output.

It holds ``harbor-rewardkit==0.2.3`` alone (and what it depends on), as a
task's verifier image would: the bridge runs it as a task's interpreter.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from pathlib import Path

from tests.harbor import _locked, cache_root, find_python312

REWARDKIT_VERSION = "0.2.3"
REQUIREMENT = f"harbor-rewardkit=={REWARDKIT_VERSION}"
INSTALL_TIMEOUT = 1800


class RewardkitUnavailable(RuntimeError):
    """rewardkit's venv could not be made: no Python 3.12, or pip failed."""


def venv_dir() -> Path:
    return cache_root() / f"rewardkit-bridge-{REWARDKIT_VERSION}-py3.12"


def _marker(python: str) -> dict[str, str]:
    return {"requirement": REQUIREMENT, "python": os.path.realpath(python)}


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
            "import importlib.metadata as m, rewardkit.runner; "
            "print(m.version('harbor-rewardkit'))",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return check.returncode == 0 and check.stdout.strip() == REWARDKIT_VERSION


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
    )
    if done.returncode != 0:
        raise RewardkitUnavailable(
            f"{what} failed (exit {done.returncode}): {' '.join(argv)}\n"
            f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
        )


@functools.cache
def rewardkit_python() -> Path:
    """The Python of a venv with ``harbor-rewardkit==0.2.3``: the cached one
    when valid, else made now (once across xdist workers). Raises
    :class:`RewardkitUnavailable`."""
    try:
        python = find_python312()
    except RuntimeError as error:
        raise RewardkitUnavailable(str(error)) from error
    venv = venv_dir()
    with _locked(venv.with_name(venv.name + ".lock")):
        if not _valid(venv, python):
            shutil.rmtree(venv, ignore_errors=True)
            _run([python, "-m", "venv", str(venv)], f"making a venv with {python}")
            _run(
                [
                    str(venv / "bin" / "python"),
                    "-m",
                    "pip",
                    "install",
                    "--disable-pip-version-check",
                    "--no-input",
                    REQUIREMENT,
                ],
                f"pip install {REQUIREMENT}",
            )
            (venv / "truereward-ready.json").write_text(json.dumps(_marker(python)))
            if not _valid(venv, python):
                raise RewardkitUnavailable(f"{REQUIREMENT} installed into {venv} does not import")
    return venv / "bin" / "python"


if __name__ == "__main__":  # pragma: no cover - a manual check
    print(rewardkit_python())
