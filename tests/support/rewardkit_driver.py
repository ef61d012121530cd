"""Runs harbor-rewardkit over criterion cases, one tests directory per case.

Not a test module and never imported by the tests: ``tests/support/rewardkit.py`` runs
it with the Python of a venv that has rewardkit installed (``python -I``)::

    python -I rewardkit_driver.py REQUEST.json RESULT.json

REQUEST: ``{"workspace": "/abs/app", "work": "/abs/dir", "cases": [{"id",
"call", "workspace"?}, ...]}``. For each case the driver writes
``WORK/<n>/tests/check.py`` (``from rewardkit import criteria`` and the
case's ``call``) and runs rewardkit's ``runner.run`` on it, the function its
command line runs, with ``--workspace`` the case's workspace (default: the
request's) and ``--output`` a fresh ``WORK/<n>/out/reward.json``. RESULT maps
each case id to ``reward`` (reward.json's ``reward``), ``value`` (the
criterion's value in reward-details.json), ``wrote`` (whether reward.json
exists) and ``error`` (the exception ``run`` raised, as rewardkit's command
line would print it before exiting 1; then it wrote nothing).
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from rewardkit.runner import run


def one(workspace: str, work: Path, call: str) -> dict[str, Any]:
    tests = work / "tests"
    out = work / "out"
    tests.mkdir(parents=True)
    out.mkdir()
    (tests / "check.py").write_text(f"from rewardkit import criteria\n\n{call}\n")
    result: dict[str, Any] = {"reward": None, "value": None, "error": None, "wrote": False}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run(tests, workspace=workspace, output=out / "reward.json")
    except Exception as error:  # noqa: BLE001 - what rewardkit's command line would die of
        result["error"] = f"{type(error).__name__}: {error}"
    reward = out / "reward.json"
    if reward.exists():
        result["wrote"] = True
        result["reward"] = json.loads(reward.read_text()).get("reward")
        details = json.loads((out / "reward-details.json").read_text())
        (criterion,) = details["reward"]["criteria"]
        result["value"] = criterion["value"]
    return result


def main() -> None:
    request = json.loads(Path(sys.argv[1]).read_text())
    work = Path(request["work"])
    answers = {}
    for index, case in enumerate(request["cases"]):
        answers[case["id"]] = one(
            case.get("workspace") or request["workspace"], work / str(index), case["call"]
        )
    Path(sys.argv[2]).write_text(
        json.dumps({"version": importlib.metadata.version("harbor-rewardkit"), "cases": answers})
    )


if __name__ == "__main__":
    main()
