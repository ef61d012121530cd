"""Runs a small Harbor job over verifier logs that truereward published.

Not a test module and never imported by the tests: ``tests/support/harbor.py`` runs it
with the Python of a venv that has Harbor installed (``python -I``, so that
``tests/support/harbor.py`` beside it does not shadow the ``harbor`` package)::

    python -I harbor_driver.py REQUEST.json RESULT.json

REQUEST names a work directory and the job's trials::

    {"work": "/abs/dir", "trials": [{"task": "task-a", "logs": "/abs/published",
                                     "exit": 0, "stale": false}, ...]}

Every trial runs through Harbor's own ``Job`` (its trial, its ``Verifier``, its
reward parsing, its metrics and pass@k) with the ``nop`` agent, in
:class:`DirectorySandbox`: a stand-in for a container, a host directory that
is the sandbox's ``/``. Each task's ``tests/test.sh`` copies the files of the
trial's ``logs`` into ``/logs/verifier`` (what a verifier that publishes with
truereward leaves there) and exits with ``exit`` (Harbor ignores the code).
``stale`` leaves a ``reward.txt`` and ``reward.json`` of 1.0 in the sandbox's
``/logs/verifier`` before the trial, as an earlier attempt might have.

A trial may instead name a real task directory, whose own verifier runs::

    {"task": "harbor-task", "task_dir": "/abs/samples/harbor-task",
     "app": "/abs/agent-end-state" | null, "env": {"PATH": ..., ...},
     "keep": "/abs/copy-of-the-trial-verifier-dir"}

The agent's sandbox starts with ``app`` as its ``/app`` (the state the agent
left; null: no ``/app`` at all) and the nop agent changes nothing. Harbor
then verifies as the task says. In shared mode it uploads ``tests/`` and runs
``/tests/test.sh`` in the agent's sandbox. In separate mode it collects the
task's artifacts from the agent's sandbox, stops it, starts the verifier's
sandbox (another directory, "built" from the task's ``tests/`` as the sample's
``tests/Dockerfile`` does: ``COPY . /tests/``, ``WORKDIR /tests``, no
``/app``), puts the artifacts back at their paths there, and runs
``/tests/test.sh``. Commands run with ``env`` (where the image's packages are:
``PATH``, ``PYTHONPATH``) and with ``APP_DIR``, ``TESTS_DIR`` and
``GRADE_LOGS`` naming the sandbox's ``/app``, ``/tests`` and
``/logs/verifier`` (the sample's scripts read them; Harbor's own commands are
rewritten as before). ``keep``: where the trial's verifier directory (what
Harbor downloaded from ``/logs/verifier``) is copied after the job. Each
trial's answer has ``test_exit``: how ``/tests/test.sh`` exited.

RESULT is JSON: per trial, what Harbor recorded (rewards, exception,
reward_valid), and per agent/dataset group the job's metrics and pass@k.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import harbor
from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities

#: The sandbox paths Harbor's commands name, mapped into the sandbox directory.
SANDBOX_ROOTS = ("logs", "tests", "solution", "app", "runtime", "installed-agent")
_ROOTS = "|".join(SANDBOX_ROOTS)
_SANDBOX_PATH = re.compile(rf"(?<![\w./-])/(?=(?:{_ROOTS})(?:/|\b))")

TASK_TOML = """\
schema_version = "1.4"

[verifier]
timeout_sec = 120.0

[agent]
timeout_sec = 120.0
"""

# Run as /tests/test.sh: the sandbox's root is the parent of this script's
# directory (``/`` in a real container, the sandbox directory here).
TEST_SH = """\
#!/bin/bash
root="$(cd "$(dirname "$0")/.." && pwd)"
cp -pR "$root/published/." "$root/logs/verifier/"
exit "$(cat "$root/published-exit")"
"""

#: trial directory name -> the request's trial it was handed.
CLAIMED: dict[str, dict[str, Any]] = {}
#: trial directory name -> the exit status of its /tests/test.sh (Harbor ignores it).
TEST_EXITS: dict[str, int] = {}


class DirectorySandbox(BaseEnvironment):
    """A host directory standing for a container's filesystem.

    Commands run in a local ``bash`` after the sandbox paths in them
    (``/logs/...``, ``/tests/...``) are rewritten into the directory; uploads
    and downloads copy files in and out. The log directories are not mounted,
    so Harbor downloads ``/logs/verifier`` after the tests, as it does from a
    Docker container by default. On start it takes the next trial of its task
    from the queue that the driver filled (``queue`` keyword).
    """

    def __init__(self, *args: Any, queue: str, **kwargs: Any) -> None:
        self._queue = Path(queue)
        super().__init__(*args, **kwargs)
        # Harbor names a separate verifier's environment "<trial>__verifier__<key>".
        self._verifier = "__verifier__" in self.session_id
        name = self.trial_paths.trial_dir.name
        self._root = (
            self._queue.parent / "sandboxes" / (f"{name}__verifier" if self._verifier else name)
        )
        self._workdir = self._root
        self._env: dict[str, str] = {}

    @staticmethod
    def type() -> str:
        return "truereward-directory-sandbox"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities()

    def _validate_definition(self) -> None:
        pass

    def _host(self, path: str | os.PathLike[str]) -> Path:
        return self._root / str(path).lstrip("/")

    def _rewrite(self, command: str) -> str:
        return _SANDBOX_PATH.sub(str(self._root).replace("\\", "\\\\") + "/", command)

    async def start(self, force_build: bool) -> None:
        if self._verifier:
            self._start_verifier(CLAIMED[self.trial_paths.trial_dir.name])
            return
        pending = self._queue / self.environment_name
        claimed = self._queue.parent / "claimed"
        claimed.mkdir(exist_ok=True)
        for entry in sorted(pending.iterdir()):
            target = claimed / f"{self.trial_paths.trial_dir.name}.json"
            try:
                entry.rename(target)
            except FileNotFoundError:
                continue  # another trial took it first
            break
        else:
            raise RuntimeError(f"no trial left for task {self.environment_name}")
        trial = json.loads(target.read_text())
        CLAIMED[self.trial_paths.trial_dir.name] = trial
        if trial.get("task_dir"):
            self._start_agent(trial)
            return
        for name in ("logs/agent", "logs/verifier", "logs/artifacts", "tests", "app"):
            (self._root / name).mkdir(parents=True, exist_ok=True)
        shutil.copytree(trial["logs"], self._root / "published")
        (self._root / "published-exit").write_text(f"{int(trial['exit'])}\n")
        if trial["stale"]:
            (self._root / "logs/verifier/reward.txt").write_text("1.0\n")
            (self._root / "logs/verifier/reward.json").write_text('{"reward": 1.0}')

    def _sandbox_env(self, trial: dict[str, Any]) -> None:
        self._env = {
            "APP_DIR": str(self._root / "app"),
            "TESTS_DIR": str(self._root / "tests"),
            "GRADE_LOGS": str(self._root / "logs" / "verifier"),
            **trial.get("env", {}),
        }

    def _start_agent(self, trial: dict[str, Any]) -> None:
        """The agent's container of a real task: its /app as the agent left it
        (none when ``app`` is null), WORKDIR /app."""
        for name in ("logs/agent", "logs/verifier", "logs/artifacts"):
            (self._root / name).mkdir(parents=True, exist_ok=True)
        if trial["app"] is not None:
            shutil.copytree(trial["app"], self._root / "app", symlinks=True)
            self._workdir = self._root / "app"
        self._sandbox_env(trial)

    def _start_verifier(self, trial: dict[str, Any]) -> None:
        """A separate verifier's container, as the sample's tests/Dockerfile
        builds it: the task's tests/ copied to /tests, WORKDIR /tests, no /app."""
        for name in ("logs/verifier", "logs/artifacts"):
            (self._root / name).mkdir(parents=True, exist_ok=True)
        shutil.copytree(self.environment_dir, self._root / "tests")
        self._workdir = self._root / "tests"
        self._sandbox_env(trial)

    async def stop(self, delete: bool) -> None:
        pass

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        target = self._host(target_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source_path, target)

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        shutil.copytree(source_dir, self._host(target_dir), dirs_exist_ok=True)

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(self._host(source_path), target_path)

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        shutil.copytree(self._host(source_dir), target_dir, dirs_exist_ok=True)

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        with (self._root.parent / "commands.log").open("a") as log:
            log.write(f"{self.trial_paths.trial_dir.name}: {command}\n")
        process = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            self._rewrite(command),
            cwd=self._host(cwd) if cwd else self._workdir,
            env={**os.environ, **self._env, **(self._merge_env(env) or {})},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(), timeout_sec)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise
        if "/tests/test.sh" in command and "chmod" not in command:
            TEST_EXITS[self.trial_paths.trial_dir.name] = process.returncode or 0
        return ExecResult(
            stdout=out.decode(errors="replace"),
            stderr=err.decode(errors="replace"),
            return_code=process.returncode if process.returncode is not None else -1,
        )


def write_task(directory: Path) -> None:
    (directory / "environment").mkdir(parents=True)
    (directory / "tests").mkdir()
    (directory / "instruction.md").write_text("Nothing to do: the verifier's files are given.\n")
    (directory / "environment" / "Dockerfile").write_text("FROM ubuntu:24.04\nWORKDIR /app\n")
    (directory / "task.toml").write_text(TASK_TOML)
    (directory / "tests" / "test.sh").write_text(TEST_SH)
    (directory / "tests" / "test.sh").chmod(0o755)


async def run(request: dict[str, Any]) -> dict[str, Any]:
    from harbor.job import Job
    from harbor.models.job.config import JobConfig
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig

    work = Path(request["work"]).resolve()
    queue = work / "queue"
    tasks: list[TaskConfig] = []
    for index, trial in enumerate(request["trials"]):
        if trial.get("task_dir"):
            task_dir = Path(trial["task_dir"])
        else:
            task_dir = work / "tasks" / trial["task"]
            if not task_dir.exists():
                write_task(task_dir)
        (queue / trial["task"]).mkdir(parents=True, exist_ok=True)
        entry = {"index": index, "stale": False, "exit": 0, **trial}
        (queue / trial["task"] / f"{index:06d}.json").write_text(json.dumps(entry))
        # One task config per trial (n_attempts=1): Harbor makes a trial of
        # each, the same trials as n_attempts over each task once.
        tasks.append(TaskConfig(path=task_dir))

    config = JobConfig(
        job_name="truereward",
        jobs_dir=work / "jobs",
        quiet=True,
        n_attempts=1,
        n_concurrent_trials=1,
        environment=EnvironmentConfig(
            import_path=f"{__name__}:DirectorySandbox", kwargs={"queue": str(queue)}
        ),
        agents=[AgentConfig(name="nop")],
        tasks=tasks,
    )
    job = await Job.create(config)
    result = await job.run()

    trials: list[dict[str, Any] | None] = [None] * len(request["trials"])
    for trial_result in result.trial_results:
        given = CLAIMED[trial_result.trial_name]
        exception = trial_result.exception_info
        if given.get("keep"):
            shutil.copytree(
                work / "jobs" / "truereward" / trial_result.trial_name / "verifier", given["keep"]
            )
        trials[given["index"]] = {
            "task": trial_result.task_name,
            "trial": trial_result.trial_name,
            "rewards": (
                trial_result.verifier_result.rewards
                if trial_result.verifier_result is not None
                else None
            ),
            "reward_valid": trial_result.reward_valid,
            "test_exit": TEST_EXITS.get(trial_result.trial_name),
            "exception": exception.exception_type if exception else None,
            "message": exception.exception_message if exception else None,
        }
    groups = {
        key: {
            "n_trials": stats.n_trials,
            "n_errors": stats.n_errors,
            "metrics": stats.metrics,
            "pass_at_k": {str(k): v for k, v in stats.pass_at_k.items()},
            "exception_stats": dict(stats.exception_stats),
        }
        for key, stats in result.stats.evals.items()
    }
    return {
        "harbor": {"version": harbor.__version__, "file": harbor.__file__},
        "trials": trials,
        "groups": groups,
    }


def main() -> None:
    request_path, result_path = sys.argv[1], sys.argv[2]
    request = json.loads(Path(request_path).read_text())
    result = asyncio.run(run(request))
    Path(result_path).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
