"""Running a program for a criterion, bounded in time and in output.

:func:`run_program` starts ``argv`` in a session of its own, standard input
closed, reading both streams as they come (never more than ``max_output``
bytes each). It **finishes** (exited, streams ended; the rest of its
process group is killed then, so nothing it started outlives it), **times
out** (``timeout`` wall seconds, or something outside its group still holds
its output: the group is killed) or **floods** (over ``max_output`` on a
stream: killed at once). Starting it raises ``OSError`` as ``Popen`` does;
the caller decides whose fault. docs/criteria.md.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Ran", "kill_group", "run_program"]

_CHUNK = 1 << 16


@dataclass(frozen=True)
class Ran:
    """How a program ended (module docstring): ``ended`` is ``finished``,
    ``timeout`` or ``flooded``; ``returncode`` is its exit status when
    finished (negative: killed by that signal); ``stdout`` and ``stderr``
    are what it wrote (up to the bound)."""

    ended: Literal["finished", "timeout", "flooded"]
    returncode: int | None
    stdout: bytes
    stderr: bytes
    seconds: float


def kill_group(pid: int) -> None:
    """SIGKILL to process group ``pid``; nothing when it is gone already."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def run_program(
    argv: Sequence[str],
    *,
    cwd: str,
    timeout: float,
    max_output: int,
    env: Mapping[str, str] | None = None,
) -> Ran:
    """Run ``argv`` (module docstring)."""
    started = time.monotonic()
    deadline = started + timeout
    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=None if env is None else dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
    )
    assert process.stdout is not None and process.stderr is not None
    out, err = bytearray(), bytearray()
    held = {process.stdout.fileno(): out, process.stderr.fileno(): err}
    ended: Literal["finished", "timeout", "flooded"] = "finished"
    selector = selectors.DefaultSelector()
    try:
        for fd in held:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        group_killed = False
        while selector.get_map() and ended == "finished":
            if not group_killed and process.poll() is not None:
                kill_group(process.pid)  # what it left running, now that it exited
                group_killed = True
            left = deadline - time.monotonic()
            if left <= 0:
                ended = "timeout"
                break
            for key, _ in selector.select(timeout=min(left, 0.1)):
                fd = int(key.fd)
                try:
                    chunk = os.read(fd, _CHUNK)
                except BlockingIOError:
                    continue
                if not chunk:
                    selector.unregister(fd)
                    continue
                held[fd] += chunk
                if len(held[fd]) > max_output:
                    ended = "flooded"
                    break
        if ended == "finished":
            try:
                process.wait(timeout=max(deadline - time.monotonic(), 0))
            except subprocess.TimeoutExpired:
                ended = "timeout"
    finally:
        # Whatever it started is killed too, however it ended.
        kill_group(process.pid)
        process.wait()
        selector.close()
        process.stdout.close()
        process.stderr.close()
    return Ran(
        ended=ended,
        returncode=process.returncode if ended == "finished" else None,
        stdout=bytes(out[:max_output]),
        stderr=bytes(err[:max_output]),
        seconds=time.monotonic() - started,
    )
