"""Harbor's own code, run over what truereward publishes.

Harbor (the Terminal-Bench 2 harness) needs Python 3.12 or newer, so it gets a
venv of its own, outside the repository and made once per machine, keyed by
version: ``~/.cache/truereward-tests/harbor-0.26.0-py3.12`` (or under
``$XDG_CACHE_HOME``). A venv is reused when its marker file names the same
requirement and interpreter and Harbor imports from it; otherwise it is made
again. Workers of one session (xdist) take a lock, so one of them builds it and
the others wait. Nothing here ever skips: a missing Python 3.12 or a failed
install raises :class:`HarborUnavailable` with the installer's output.

The functions run ``tests/support/harbor_driver.py`` in that venv: a real Harbor
``Job`` with the ``nop`` agent in a stand-in sandbox (a host directory; no
Docker, no network), whose verifier script leaves a trial's published files in
``/logs/verifier``. What comes back is what Harbor recorded:

- :func:`harbor_reward`: one trial, what Harbor's ``Verifier`` parsed from a
  verifier logs directory (``rewards``, or the exception and no reward);
- :func:`harbor_metrics`: a job of several trials (of one or more tasks) and
  the job's metrics (Harbor's default ``Mean``) and ``pass@k``. Harbor has no
  pass@1: its k are 2, 4, 8, ... and 5, 10, 15, ... up to the fewest trials
  with a valid reward of any task (``harbor/utils/pass_at_k.py``), so pass@k
  needs a mapping with at least two gradable trials per task.
"""

from __future__ import annotations

import fcntl
import functools
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypedDict

from tests.support.installs import make_venv

HARBOR_VERSION = "0.26.0"
REQUIREMENT = f"harbor=={HARBOR_VERSION}"
PYTHON_SERIES = (3, 12)
DRIVER = Path(__file__).with_name("harbor_driver.py")

#: Where to look for Python 3.12, after ``$TRUEREWARD_PYTHON312``.
PYENV_GLOB = "~/.pyenv/versions/3.12.*/bin/python"

INSTALL_TIMEOUT = 1800
RUN_TIMEOUT = 600


class HarborUnavailable(RuntimeError):
    """Harbor's venv could not be made: no Python 3.12, or the install failed."""


class Trial(TypedDict):
    """One trial as Harbor recorded it."""

    task: str
    trial: str
    rewards: dict[str, float | int] | None
    reward_valid: bool
    exception: str | None
    message: str | None
    #: How /tests/test.sh exited (Harbor ignores it), when it ran.
    test_exit: int | None


class JobMetrics(TypedDict):
    """A job's figures as Harbor computed them (one agent, no dataset: ``nop__adhoc``)."""

    metrics: list[dict[str, float | int]]
    pass_at_k: dict[int, float]
    n_trials: int
    n_errors: int
    trials: list[Trial]


# --- the venv ---------------------------------------------------------------------------------


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "truereward-tests"


def venv_dir() -> Path:
    major, minor = PYTHON_SERIES
    return cache_root() / f"harbor-{HARBOR_VERSION}-py{major}.{minor}"


def find_python312() -> str:
    """A Python 3.12 interpreter: ``$TRUEREWARD_PYTHON312``, pyenv's 3.12, then
    ``python3.12`` on PATH. :class:`HarborUnavailable` names what was tried."""
    candidates: list[str] = []
    if os.environ.get("TRUEREWARD_PYTHON312"):
        candidates.append(os.environ["TRUEREWARD_PYTHON312"])
    candidates += sorted(glob.glob(os.path.expanduser(PYENV_GLOB)), reverse=True)
    on_path = shutil.which("python3.12")
    if on_path:
        candidates.append(on_path)
    tried: list[str] = []
    for candidate in candidates:
        try:
            done = subprocess.run(
                [candidate, "-c", "import sys; print(*sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        except OSError as exc:
            tried.append(f"{candidate}: {exc}")
            continue
        if done.returncode == 0 and tuple(map(int, done.stdout.split())) == PYTHON_SERIES:
            return candidate
        tried.append(f"{candidate}: {done.stdout.strip() or done.stderr.strip()}")
    raise HarborUnavailable(
        "Harbor needs Python 3.12 and none was found (set TRUEREWARD_PYTHON312, or install "
        f"pyenv's 3.12 as {PYENV_GLOB}); tried: {tried or 'nothing'}"
    )


def _marker(python: str) -> dict[str, str]:
    return {"requirement": REQUIREMENT, "python": os.path.realpath(python)}


def _valid(venv: Path, python: str) -> bool:
    marker = venv / "truereward-ready.json"
    try:
        if json.loads(marker.read_text()) != _marker(python):
            return False
    except (OSError, ValueError):
        return False
    check = subprocess.run(
        [str(venv / "bin" / "python"), "-I", "-c", "import harbor; print(harbor.__version__)"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return check.returncode == 0 and check.stdout.strip() == HARBOR_VERSION


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@functools.cache
def harbor_python() -> Path:
    """The Python of a venv with ``harbor==0.26.0``: the cached one when valid,
    else made now (once across xdist workers). Raises :class:`HarborUnavailable`."""
    python = find_python312()
    venv = venv_dir()
    with _locked(venv.with_name(venv.name + ".lock")):
        if not _valid(venv, python):
            shutil.rmtree(venv, ignore_errors=True)
            make_venv(venv, python, [REQUIREMENT], error=HarborUnavailable, timeout=INSTALL_TIMEOUT)
            (venv / "truereward-ready.json").write_text(json.dumps(_marker(python)))
            if not _valid(venv, python):
                raise HarborUnavailable(f"{REQUIREMENT} installed into {venv} does not import")
    return venv / "bin" / "python"


# --- running Harbor ---------------------------------------------------------------------------


def run_job(trials: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Run the driver over ``trials`` (``task``, ``logs`` and optionally ``exit``,
    ``stale``; see ``tests/support/harbor_driver.py``) and return its JSON answer."""
    python = harbor_python()
    with tempfile.TemporaryDirectory(prefix="truereward-harbor-") as scratch:
        work = Path(scratch)
        request = {
            "work": str(work / "work"),
            "trials": [_absolute(trial) for trial in trials],
        }
        (work / "request.json").write_text(json.dumps(request))
        env = {
            **os.environ,
            "HARBOR_TELEMETRY": "0",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            # Harbor keeps a config directory (platformdirs): keep it in the scratch.
            "XDG_CONFIG_HOME": str(work / "config"),
        }
        done = subprocess.run(
            [str(python), "-I", str(DRIVER), str(work / "request.json"), str(work / "result.json")],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )
        if done.returncode != 0:
            commands = work / "work" / "sandboxes" / "commands.log"
            raise AssertionError(
                f"Harbor's job failed (exit {done.returncode})\n--- stdout\n{done.stdout}\n"
                f"--- stderr\n{done.stderr}\n--- sandbox commands\n"
                f"{commands.read_text() if commands.exists() else '(none)'}"
            )
        answer: dict[str, Any] = json.loads((work / "result.json").read_text())
    if answer["harbor"]["version"] != HARBOR_VERSION:
        raise AssertionError(f"the driver ran Harbor {answer['harbor']}, not {HARBOR_VERSION}")
    return answer


def _absolute(trial: Mapping[str, Any]) -> dict[str, Any]:
    """The trial with its paths absolute (the driver runs elsewhere)."""
    return {
        **trial,
        **{
            key: str(Path(trial[key]).resolve())
            for key in ("logs", "task_dir", "app", "keep")
            if trial.get(key) is not None
        },
    }


class TaskTrial(TypedDict):
    """One trial of a real task for :func:`harbor_run_tasks`."""

    task_dir: Path
    app: Path | None
    env: Mapping[str, str]
    keep: Path


def harbor_run_tasks(trials: Sequence[TaskTrial]) -> list[Trial]:
    """Trials of real tasks, in one job, as Harbor 0.26 runs them, each task's
    own verifier included, with the ``nop`` agent. Per trial: the agent's
    ``/app`` is ``app`` as given (None: there is none); the task's verifier
    runs in the mode its task.toml says (shared: in the agent's sandbox;
    separate: in a sandbox of its own that gets the task's artifacts); ``env``
    holds what the images install (``PATH``, ``PYTHONPATH``); what Harbor
    downloaded from ``/logs/verifier`` is copied to ``keep``. Tasks are told
    apart by their directory's name. See ``tests/support/harbor_driver.py``."""
    answer = run_job(
        [
            {
                "task": trial["task_dir"].name,
                "task_dir": trial["task_dir"],
                "app": trial["app"],
                "env": dict(trial["env"]),
                "keep": trial["keep"],
            }
            for trial in trials
        ]
    )
    return [_trial(trial) for trial in answer["trials"]]


def harbor_reward(logs_dir: Path | str, *, exit_code: int = 0, stale: bool = False) -> Trial:
    """What Harbor 0.26 records for a trial whose verifier left ``logs_dir``'s
    files in ``/logs/verifier`` and exited with ``exit_code``: ``rewards`` (the
    parsed ``reward.json``, else ``reward.txt`` as ``{"reward": x}``), or None
    with ``exception`` (``RewardFileNotFoundError``, ``VerifierOutputParseError``,
    ...) and ``reward_valid`` False. ``stale``: the sandbox holds reward files of
    1.0 from before (Harbor removes both before its verifier runs)."""
    answer = run_job([{"task": "task", "logs": logs_dir, "exit": exit_code, "stale": stale}])
    (trial,) = answer["trials"]
    return _trial(trial)


def harbor_metrics(trials: Sequence[Path | str] | Mapping[str, Sequence[Path | str]]) -> JobMetrics:
    """Harbor's job figures over trials: a list of logs directories (one task
    each) or ``{task: [logs directory, ...]}`` (several trials of one task, as
    pass@k wants). ``metrics`` is the job's metric list (Harbor's default is one
    ``Mean``: ``[{"mean": m}]`` for single-key rewards, else one mean per
    key), ``pass_at_k`` maps k to the value (empty when Harbor does not compute
    it), ``n_trials`` counts trials with a valid reward, ``n_errors`` those with
    an exception; ``trials`` are in the order given."""
    if isinstance(trials, Mapping):
        given = [{"task": task, "logs": logs} for task, runs in trials.items() for logs in runs]
    else:
        given = [{"task": f"task-{index}", "logs": logs} for index, logs in enumerate(trials)]
    answer = run_job(given)
    groups = answer["groups"]
    if list(groups) != ["nop__adhoc"]:
        raise AssertionError(f"expected one group of trials, Harbor made {list(groups)}")
    group = groups["nop__adhoc"]
    return {
        "metrics": group["metrics"],
        "pass_at_k": {int(k): v for k, v in group["pass_at_k"].items()},
        "n_trials": group["n_trials"],
        "n_errors": group["n_errors"],
        "trials": [_trial(trial) for trial in answer["trials"]],
    }


def _trial(raw: Mapping[str, Any]) -> Trial:
    return {
        "task": raw["task"],
        "trial": raw["trial"],
        "rewards": raw["rewards"],
        "reward_valid": raw["reward_valid"],
        "exception": raw["exception"],
        "message": raw["message"],
        "test_exit": raw.get("test_exit"),
    }


if __name__ == "__main__":  # pragma: no cover - a manual check
    print(harbor_python())
    print(json.dumps(harbor_reward(sys.argv[1]), indent=2))
