"""The fenced blocks of a Markdown document and how a test runs them as
written: in a scratch copy of the clone or in the clone, in an environment
like a fresh shell's, with the substitutions a plan declares (each must
still apply), everything a bash block left running stopped afterwards.
Used by the README's and the ops walkthrough's tests and the docs' examples."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import ROOT
from tests.support.server import SEEDED_SETTINGS, seeded_home

VENV_BIN = ROOT / ".venv" / "bin"


@dataclass(frozen=True)
class Block:
    section: str  # the heading the block is under, without its hashes
    place: int  # 1 for the section's first block, 2 for the next...
    language: str  # the fence's info string ("" when there is none)
    text: str
    line: int  # of the opening fence, 1-based

    @property
    def key(self) -> tuple[str, int]:
        return (self.section, self.place)


def readme_blocks(text: str) -> list[Block]:
    """Every fenced block, in order."""
    found: list[Block] = []
    section = ""
    places: dict[str, int] = {}
    lines = text.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        line = lines[index]
        heading = re.match(r"#{1,6} (.+)", line)
        if heading:
            section = heading.group(1).strip()
        fence = re.match(r"( *)(```|~~~)\s*(\S*)", line)
        if fence:
            # Only the fences this reader knows, so that no block goes unseen.
            assert fence.group(1) == "", f"README.md:{index + 1}: an indented fence"
            assert fence.group(2) == "```", f"README.md:{index + 1}: a ~~~ fence"
            end = next(
                (i for i in range(index + 1, len(lines)) if lines[i].rstrip() == "```"), None
            )
            assert end is not None, f"README.md:{index + 1}: a fence that is never closed"
            places[section] = places.get(section, 0) + 1
            body = "".join(lines[index + 1 : end])
            found.append(Block(section, places[section], fence.group(3), body, index + 1))
            index = end
        index += 1
    return found


@dataclass(frozen=True)
class Sub:
    """Replace ``old`` (a regular expression when ``regex``) by ``new``, exactly
    ``count`` times. ``new`` may name ``{tmp}`` (the test's temp dir),
    ``{port}`` (a free port) and ``{s3}`` (the loopback S3 endpoint)."""

    old: str
    new: str
    count: int
    why: str
    regex: bool = False


@dataclass(frozen=True)
class Env:
    """A variable added to the block's environment (same placeholders)."""

    name: str
    value: str
    why: str


@dataclass
class Ran:
    """What a block left, for its check."""

    block: Block
    cwd: Path
    tmp: Path
    output: str = ""
    namespace: dict[str, Any] = field(default_factory=dict)
    s3_client: Any = None


@dataclass(frozen=True)
class Plan:
    language: str
    how: str  # "bash", "python", "module" (a file the next block runs) or "text"
    where: str = "scratch"  # "scratch": a copy of the clone in a temp dir; "root": the clone
    subs: tuple[Sub, ...] = ()
    env: tuple[Env, ...] = ()
    claims: int = 0  # Python: how many claims the block makes
    check: Callable[[Ran], None] | None = None
    s3: bool = False  # needs the loopback S3 store, with the bucket "grades"
    slow: bool = False
    bench: bool = False  # a benchmarks block: run with ``-m bench`` (tests/conftest.py)
    timeout: float = 120.0


#: The environment of every bash block, over this process's own without
#: PREFECT_*, AWS_*, PYTEST_*, GRADE_LOGS and TRUEREWARD_* (a fresh shell):
COMMON_ENV = (
    Env("PATH", f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}", "the venv's commands"),
    Env("PREFECT_HOME", "{tmp}/prefect-home", "Prefect's files in the temp dir, not ~/.prefect"),
    Env("PREFECT_SERVER_ANALYTICS_ENABLED", "false", "offline"),
    Env("DO_NOT_TRACK", "1", "offline"),
    Env("PREFECT_SERVER_LOGGING_LEVEL", "WARNING", "a shorter log to read on failure"),
    *(
        Env(name, value, "the seeded home's database holds the block types (block_env)")
        for name, value in SEEDED_SETTINGS.items()
    ),
)


def substituted(text: str, subs: tuple[Sub, ...], values: dict[str, str]) -> str:
    for sub in subs:
        pattern = sub.old if sub.regex else re.escape(sub.old)
        found = len(re.findall(pattern, text))
        assert found == sub.count, f"{sub.old!r} is in the block {found} times, not {sub.count}"
        new = sub.new.format(**values)
        text = re.sub(pattern, new if sub.regex else new.replace("\\", "\\\\"), text)
    return text


def scratch_copy(target: Path) -> Path:
    """The clone's files as git sees them: tracked, and new files git does
    not ignore. Not its venvs (infra/lowest.sh's ``.venv-lowest-*`` are
    large), git data, outputs or caches. Without git (a copy of a copy),
    everything but those."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:
        return _copy_without_outputs(target)
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if not source.exists() and not source.is_symlink():  # deleted, not yet committed
            continue
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / name, follow_symlinks=False)
    return target


def _copy_without_outputs(target: Path) -> Path:
    top = {".venv", ".git", "out", ".bench", "build", "dist"}
    anywhere = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"}

    def ignore(directory: str, names: list[str]) -> set[str]:
        skipped = {name for name in names if name in anywhere or name.endswith(".egg-info")}
        if Path(directory) == ROOT:
            skipped |= top & set(names)
            skipped |= {name for name in names if name.startswith(".venv")}
        return skipped

    shutil.copytree(ROOT, target, ignore=ignore)
    return target


def block_env(plan: Plan, values: dict[str, str]) -> dict[str, str]:
    """The block's environment; its Prefect homes are made with a migrated
    database (:func:`seeded_home`; :data:`SEEDED_SETTINGS` are in
    :data:`COMMON_ENV`): a first start's migrations and block registration
    are CPU the suite cannot spare, and CI's main-command step starts from
    nothing."""
    dropped = ("PREFECT_", "AWS_", "PYTEST_", "GRADE_LOGS", "TRUEREWARD_")
    env = {name: value for name, value in os.environ.items() if not name.startswith(dropped)}
    for item in (*COMMON_ENV, *plan.env):
        env[item.name] = item.value.format(**values)
    for name in ("PREFECT_HOME", "TRUEREWARD_DEMO_PREFECT_HOME"):
        if name in env:
            seeded_home(Path(env[name]))
    return env


def stop_group(pgid: int, grace: float = 3.0) -> None:
    """Stop every process of the group, and every process under one of them
    (a process worker runs its flow runs in sessions of their own): SIGTERM,
    then SIGKILL after ``grace`` seconds. A worker started with ``&`` by a
    non-interactive shell ignores SIGINT, which is what Prefect turns SIGTERM
    into, so it usually needs the SIGKILL."""
    import psutil

    family: dict[int, psutil.Process] = {}
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error, ProcessLookupError):
            if os.getpgid(process.pid) == pgid:
                family[process.pid] = process
                family.update({child.pid: child for child in process.children(recursive=True)})
    for process in family.values():
        with contextlib.suppress(psutil.NoSuchProcess):
            process.terminate()
    _, alive = psutil.wait_procs(list(family.values()), timeout=grace)
    for process in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
    psutil.wait_procs(alive, timeout=10)


def run_bash(script: str, cwd: Path, env: dict[str, str], log: Path, timeout: float) -> str:
    """``bash -e`` the script in a session of its own; its output. Whatever it
    left running in the background is stopped afterwards, also on failure."""
    path = log.with_suffix(".sh")
    path.write_text(script)
    started = time.monotonic()
    # Output into a file, not a pipe: background processes keep a pipe open.
    with open(log, "wb") as output:
        process = subprocess.Popen(
            ["bash", "-e", str(path)],
            cwd=cwd,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        status: int | None = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        status = None
    finally:
        stop_group(process.pid)
        process.wait(timeout=30)
    text = log.read_text(errors="replace")
    took = time.monotonic() - started
    assert status is not None, f"not done after {took:.0f} s; its output ends:\n{text[-4000:]}"
    assert status == 0, f"exit status {status}; its output ends:\n{text[-4000:]}"
    return text


def python_blocks(name: str) -> list[str]:
    text = (ROOT / "docs" / name).read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.S)
