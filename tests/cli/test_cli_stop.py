"""A command over a sweep, stopped and watched: Ctrl-C (SIGINT to its
process group) or SIGTERM stops it at once with one line saying how far it
got and what it wrote; its progress shows on stderr when stderr is a
terminal, and nothing shows otherwise."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import signal
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from tests.support.sweeps import make_sweep
from truereward.grading import GradeRequest, grade_request

TRUEREWARD = str(Path(sys.executable).with_name("truereward"))
#: Runs whose lines (about 170 bytes each) are many times what the pipe and
#: Python's stdout buffer hold together: with 150, a quick machine verified
#: them all before the test's signal.
RUNS = 600
#: The smallest pipe Linux makes: the command's stdout fills it within a few runs.
PIPE_BYTES = 4096


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sweep of :data:`RUNS` graded runs (each run's files under it)."""
    root = tmp_path_factory.mktemp("graded")
    sweep = make_sweep(root / "sweep", {f"r{index:03d}": "pass" for index in range(RUNS)}, cases=1)
    result = grade_request(GradeRequest(sweep=str(sweep), target=str(root / "out")))
    assert result.summary.runs == RUNS
    return root / "out"


def _waiting(fd: int) -> int:
    """Bytes waiting to be read in the pipe ``fd``."""
    buffer = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, buffer)
    return int.from_bytes(buffer, sys.byteorder)


def _ignored(pid: int) -> list[str]:
    """The signals the process ``pid`` ignores, by name (for a failure's message)."""
    with open(f"/proc/{pid}/status") as status:
        mask = next(int(line.split()[1], 16) for line in status if line.startswith("SigIgn:"))
    return [signal.Signals(bit + 1).name for bit in range(31) if mask >> bit & 1]


def _read_all(fd: int, into: list[bytes]) -> None:
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # a pty whose other end closed
            return
        if not chunk:
            return
        into.append(chunk)


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_stopped_sweep_command_says_how_far_it_got_on_one_line(
    graded: Path, number: signal.Signals
) -> None:
    """``verify --repair --json`` over a sweep, its stdout a pipe nobody
    reads yet (so it is stuck mid-sweep), its stderr a terminal: the signal
    ends it within 5 s with 128 + the signal's number and one line (how
    many runs it verified, how many it repaired, how to resume), no
    traceback; its progress showed on the terminal before."""
    out_read, out_write = os.pipe()
    fcntl.fcntl(out_write, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    terminal, attached = pty.openpty()
    # A process started with SIGINT ignored keeps ignoring it, as a shell's
    # background job does; the suite once saw the command finish through a
    # Ctrl-C here, so it starts with the default, as from a terminal.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        process = subprocess.Popen(
            [TRUEREWARD, "verify", str(graded), "--repair", "--json"],
            stdin=subprocess.DEVNULL,
            stdout=out_write,
            stderr=attached,
            start_new_session=True,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    ignored = _ignored(process.pid)
    os.close(out_write)
    os.close(attached)
    said: list[bytes] = []
    reader = threading.Thread(target=_read_all, args=(terminal, said), daemon=True)
    reader.start()
    deadline = time.monotonic() + 60
    while _waiting(out_read) < PIPE_BYTES // 2 or b"runs" not in b"".join(said):
        assert process.poll() is None and time.monotonic() < deadline, b"".join(said)
        time.sleep(0.02)
    before = len(b"".join(said))
    os.killpg(process.pid, number)
    sent = time.monotonic()
    printed: list[bytes] = []
    drain = threading.Thread(target=_read_all, args=(out_read, printed), daemon=True)
    drain.start()
    try:
        status = process.wait(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    took = time.monotonic() - sent
    reader.join(5)
    drain.join(5)
    os.close(out_read)
    after = b"".join(said)[before:].decode(errors="replace")
    assert status == 128 + number and took < 5, (status, took, ignored, after)
    assert "Traceback" not in after and len(after) < 2048, after
    lines = [line for line in after.splitlines() if f"stopped by {number.name}" in line]
    assert len(lines) == 1, after
    reported = b"".join(printed).count(b"\n")
    found = re.search(
        rf"truereward verify: stopped by {number.name}: verified (\d+) of {RUNS} runs; ", lines[0]
    )
    assert found, lines[0]
    verified = int(found.group(1))
    assert 0 < verified < RUNS, verified  # stopped mid-sweep
    # The signal may come while the last verified run's line is being written
    # to the full pipe: that run is counted, its line may not have arrived.
    assert reported <= verified <= reported + 1, (reported, lines[0])
    assert (
        f"0 runs repaired (each whole); exit status {128 + number}; "
        "run the same command again to resume"
    ) in lines[0], lines[0]


def test_progress_shows_only_on_a_terminal(graded: Path) -> None:
    """``sweep summary``'s progress is on stderr when it is a terminal, and
    stderr stays empty when it is not (a pipe, a log)."""
    piped = subprocess.run(
        [TRUEREWARD, "sweep", "summary", str(graded)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
    assert f"| 1 | {RUNS} |" in piped.stdout
    terminal, attached = pty.openpty()
    process = subprocess.Popen(
        [TRUEREWARD, "sweep", "summary", str(graded)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=attached,
    )
    os.close(attached)
    said: list[bytes] = []
    reader = threading.Thread(target=_read_all, args=(terminal, said), daemon=True)
    reader.start()
    stdout, _ = process.communicate(timeout=120)
    reader.join(5)
    assert process.returncode == 0
    shown = b"".join(said).decode(errors="replace")
    # The last frame counts every run (the total is not known up front).
    assert f"{RUNS}/?\x1b[0m runs" in shown, shown
    assert f"| 1 | {RUNS} |" in stdout.decode()


def test_the_truereward_logger_reaches_stderr_when_asked(graded: Path) -> None:
    """``TRUEREWARD_LOG_LEVEL=INFO`` sends the ``truereward`` logger to
    stderr: the count of runs read; without it nothing."""
    env = {**os.environ, "TRUEREWARD_LOG_LEVEL": "INFO"}
    said = subprocess.run(
        [TRUEREWARD, "sweep", "summary", str(graded)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=env,
    )
    assert said.returncode == 0
    assert said.stderr == f"truereward.cli: {graded}: read {RUNS} runs\n", said.stderr


def test_the_plain_loop_logs_and_reports_its_progress(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``grade_request`` logs its plan and headline to ``truereward.grading``
    and calls ``progress(published, total)`` after each chunk, growing to
    the total."""
    sweep = make_sweep(tmp_path / "sweep", {f"r{index}": "pass" for index in range(5)}, cases=1)
    seen: list[tuple[int, int]] = []
    with caplog.at_level("INFO", logger="truereward"):
        result = grade_request(
            GradeRequest(sweep=str(sweep), target=str(tmp_path / "out")),
            progress=lambda done, total: seen.append((done, total)),
        )
    assert seen == [(done, 5) for done in range(1, 6)], seen
    said = [
        record.getMessage() for record in caplog.records if record.name == "truereward.grading.loop"
    ]
    assert said[0].startswith("grading 5 runs of ") and said[-1] == result.headline(), said


def test_a_stopped_flow_says_so_on_one_line() -> None:
    """A flow run stopped by a signal: one line, its counts, its status and
    the command that resumes; before grading, nothing published."""
    from truereward.prefect.lost import LostReport, render_lost

    line = render_lost(
        LostReport(
            why="stopped by SIGTERM",
            stage="grading",
            exit_status=143,
            runs=40,
            published={"created": 7, "unchanged": 3},
            not_graded_count=30,
            resume=["python flows/grade_run.py sweep --target out", "prefect deployment run x"],
            signal="SIGTERM",
        )
    )
    assert line == (
        "grade-run: stopped by SIGTERM: published 10 of 40 runs, 30 not graded; exit status 143; "
        "to resume (published grades are kept): python flows/grade_run.py sweep --target out"
    )
    early = render_lost(
        LostReport(why="x", stage="planning", exit_status=130, signal="SIGINT", resume=["again"])
    )
    assert "\n" not in early and "stopped by SIGINT: nothing was published" in early
