"""Stopping cleanly: a real SIGINT or SIGTERM to the demo's process group,
to a flow process on the ephemeral API, and to a CLI command over a sweep.
Each stops within :data:`STOP_SECONDS`, says on one line what was published
and how to resume, prints no traceback and no retry storm, and loses
nothing: running the same command again grades only what is missing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.server import SEEDED_SETTINGS, offline_env, seeded_home
from tests.support.sweeps import make_sweep, snapshot

ROOT = Path(__file__).resolve().parents[2]

#: Seconds from the signal to the end of the process, at most.
STOP_SECONDS = 5.0
#: Bytes a stopped process may print after the signal, at most.
AFTER_BYTES = 2048


class Watched:
    """A process started in a process group of its own, its output (stdout
    and stderr together) read as it comes, each chunk with its time."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path = ROOT) -> None:
        self.process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.chunks: list[tuple[float, bytes]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.chunks.append((time.monotonic(), line))

    def wait_for(self, ready: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            assert self.process.poll() is None, self.output()
            assert time.monotonic() < deadline, self.output()
            time.sleep(0.02)

    def signal(self, number: signal.Signals, *, group: bool) -> tuple[float, int, float]:
        """Send ``number`` (to the group, or the process alone); returns the
        time it was sent, the exit status and the seconds until the exit."""
        sent = time.monotonic()
        if group:
            os.killpg(self.process.pid, number)
        else:
            os.kill(self.process.pid, number)
        try:
            status = self.process.wait(timeout=60)
        finally:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
        took = time.monotonic() - sent
        self._reader.join(5)
        return sent, status, took

    def output(self, since: float = 0.0) -> str:
        return b"".join(chunk for at, chunk in self.chunks if at >= since).decode(errors="replace")

    def group_gone(self, timeout: float) -> bool:
        """Whether every process of the group has ended within ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                os.killpg(self.process.pid, 0)
            except ProcessLookupError:
                return True
            time.sleep(0.1)
        return False


def _grades(out: Path) -> list[Path]:
    return sorted(out.glob("*/grade.json"))


def _assert_one_clean_line(after: str, signame: str, status: int) -> str:
    """The output after the signal: under :data:`AFTER_BYTES`, no traceback,
    no retry storm, and one line that says what was published and how to
    resume; returns that line."""
    assert len(after.encode()) < AFTER_BYTES, after
    assert "Traceback" not in after and "Error" not in after, after
    stopped = [line for line in after.splitlines() if f"stopped by {signame}" in line]
    assert len(stopped) == 1, after
    assert f"exit status {status}" in stopped[0], stopped[0]
    return stopped[0]


@pytest.mark.slow
def test_ctrl_c_to_the_demo_stops_it_at_once_and_the_rerun_grades_only_the_rest(
    tmp_path: Path,
) -> None:
    """SIGINT to the demo's process group once its first grades are
    published: it ends within 5 s, with one line saying what was published
    and how to resume, and never says "verified"; run again, it grades the
    rest, every grade published before the signal left as it was."""
    out = tmp_path / "demo"
    env = offline_env(
        TRUEREWARD_DEMO_PREFECT_HOME=str(seeded_home(tmp_path / "prefect-home")), **SEEDED_SETTINGS
    )
    demo = Watched(["bash", "infra/demo.sh", str(out)], env)
    # The sample's store-down run is read three times, 0.5 s and 1 s apart:
    # grading is still under way when the first grades are published.
    demo.wait_for(lambda: bool(_grades(out)), timeout=300)
    sent, status, took = demo.signal(signal.SIGINT, group=True)
    assert status == 130, demo.output()
    assert took < STOP_SECONDS, (took, demo.output(sent))
    after = demo.output(sent)
    line = _assert_one_clean_line(after, "SIGINT", 130)
    assert "verified" not in demo.output()
    assert "to resume" in line and f"--target {out}" in line, line
    assert demo.group_gone(STOP_SECONDS), "a process of the demo outlived it"
    before = snapshot(out)
    graded = [path.parent.name for path in _grades(out)]
    assert 0 < len(graded) < 30, graded  # stopped mid-grading
    assert f"published {len(graded)} of 30 runs" in line, line

    again = subprocess.run(
        ["bash", "infra/demo.sh", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.rstrip().endswith("verified"), again.stdout
    assert len(_grades(out)) == 30
    after_rerun = snapshot(out)
    for run in graded:  # nothing graded twice: same bytes, same mtimes
        mine = {name: value for name, value in before.items() if name.startswith(f"{run}/")}
        assert mine and all(after_rerun[name] == value for name, value in mine.items()), run


@pytest.mark.slow
def test_sigterm_to_a_flow_process_on_the_ephemeral_api_stops_it_and_its_server(
    tmp_path: Path,
) -> None:
    """SIGTERM to the flow process alone (as a supervisor sends it), mid
    grading on the ephemeral API: it ends within 5 s with status 143 and
    one line, and the ephemeral API server it started ends with it."""
    sweep = make_sweep(tmp_path / "sweep", {f"r{i:02d}": ("slow", 0.3) for i in range(40)})
    out = tmp_path / "out"
    env = offline_env(
        PREFECT_HOME=str(seeded_home(tmp_path / "prefect-home")),
        PREFECT_LOGGING_LEVEL="WARNING",
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="180",
        **SEEDED_SETTINGS,
    )
    argv = [sys.executable, "flows/grade_run.py", str(sweep), "--target", str(out)]
    flow = Watched([*argv, "--concurrency", "2", "--chunk-size", "1"], env)
    flow.wait_for(lambda: len(_grades(out)) >= 2, timeout=300)
    sent, status, took = flow.signal(signal.SIGTERM, group=False)
    assert status == 143, flow.output()
    assert took < STOP_SECONDS, (took, flow.output(sent))
    line = _assert_one_clean_line(flow.output(sent), "SIGTERM", 143)
    assert flow.group_gone(STOP_SECONDS), "the ephemeral API server outlived its flow process"
    graded = len(_grades(out))
    assert 2 <= graded < 40 and f"published {graded} of 40 runs" in line, line
    assert f"{40 - graded} not graded" in line, line
