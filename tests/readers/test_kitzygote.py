"""The rewardkit zygote (``tests/support/kitzygote.py``) stands in for the
venv's interpreter faithfully: what a program prints, where it runs, what it
sees in its environment, how it ends (status or signal), and that killing
the stand-in's process group ends what the program started."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.kitzygote import rewardkit_zygote

pytestmark = pytest.mark.slow


def test_streams_directory_environment_and_status_are_the_callers(tmp_path: Path) -> None:
    zygote = rewardkit_zygote()
    code = (
        "import os, sys; print(sys.argv[1:], os.getcwd(), os.environ['ASKED']);"
        "print('to stderr', file=sys.stderr); sys.exit(7)"
    )
    done = subprocess.run(
        [str(zygote.python), "-I", "-c", code, "one", "two"],
        cwd=tmp_path,
        env={**os.environ, "ASKED": "yes"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 7
    assert done.stdout == f"['one', 'two'] {tmp_path} yes\n"
    assert done.stderr == "to stderr\n"


def test_a_run_killed_by_a_signal_ends_its_stand_in_so() -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    done = subprocess.run([str(rewardkit_zygote().python), "-c", code], timeout=60, check=False)
    assert done.returncode == -signal.SIGTERM


def test_rewardkit_itself_answers_through_its_stand_in() -> None:
    done = subprocess.run(
        [str(rewardkit_zygote().rewardkit), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.startswith("usage: rewardkit"), done


def test_killing_the_stand_ins_group_ends_what_the_run_started(tmp_path: Path) -> None:
    started = tmp_path / "child.pid"
    code = (
        "import subprocess, sys, time;"
        "child = subprocess.Popen(['sleep', '300']);"
        f"open({str(started)!r}, 'w').write(str(child.pid)); time.sleep(300)"
    )
    stand_in = subprocess.Popen(
        [str(rewardkit_zygote().python), "-c", code], start_new_session=True
    )
    deadline = time.monotonic() + 60
    while not started.exists() or not started.read_text():
        assert time.monotonic() < deadline, "the run never started its child"
        time.sleep(0.05)
    child = int(started.read_text())
    os.killpg(stand_in.pid, signal.SIGKILL)
    stand_in.wait()
    deadline = time.monotonic() + 30
    while Path(f"/proc/{child}").exists() and "Z" not in _state(child):
        assert time.monotonic() < deadline, "what the run started outlived its stand-in"
        time.sleep(0.05)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"
