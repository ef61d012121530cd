"""Publishing is whole-or-absent under kill -9.

A forked child publishes a stream of different grades into one directory
(each replacing the one before), and is killed with SIGKILL at a random
moment, many times. After every kill, every file present must parse, and the
set must be consistent: a reward file only beside a gradable grade.json with
that reward. A final clean publish must then end fully consistent.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import select
import signal
import time
from pathlib import Path

import pytest

from truereward import GradeDocument, grade_document, publish
from truereward.publishing.local import TEMP_PATTERN
from truereward.util.strictjson import loads
from truereward.verify import verify_published

KILLS = 200


def documents(row):
    """Grades with rewards 1.0 and 0.0, and ungradable ones, all different."""
    out = []
    for index in range(6):
        guard = row(f"g{index}", "pass_to_pass")
        out.append(grade_document([row("a"), guard]))
        out.append(grade_document([row("a", verdict="fail"), guard]))
        out.append(grade_document([row("a"), guard, row("b", verdict="ungradable")]))
    return out


def publish_forever(grades: list[GradeDocument], directory: Path, done: int) -> None:
    """The child: replace whatever is published with the next grade, forever,
    writing a byte to the pipe ``done`` after each publish."""
    index = 0
    while True:
        try:
            current = (directory / "grade.json").read_bytes()
            replaces = hashlib.sha256(current).hexdigest()
        except FileNotFoundError:
            replaces = None
        index = (index + 1) % len(grades)
        if grades[index].digest == replaces:
            continue
        publish(grades[index], directory, replaces=replaces)
        os.write(done, b".")


def check_consistent(directory: Path) -> None:
    names = {path.name for path in directory.iterdir() if not TEMP_PATTERN.match(path.name)}
    assert names <= {"grade.json", "ctrf.json", "reward.json", "reward.txt"}, names
    document = None
    if "grade.json" in names:
        document = GradeDocument.from_bytes((directory / "grade.json").read_bytes())
    if "ctrf.json" in names:
        assert loads((directory / "ctrf.json").read_bytes())["reportFormat"] == "CTRF"
    if "reward.txt" in names:
        value = float((directory / "reward.txt").read_text())
        assert document is not None and document.gradable and document.reward == value
    if "reward.json" in names:
        flat = loads((directory / "reward.json").read_bytes())
        assert all(isinstance(v, int | float) and math.isfinite(v) for v in flat.values())
        assert document is not None and document.gradable and flat["reward"] == document.reward


def wait_for_publishes(done: int, count: int) -> float:
    """Wait until the child has finished ``count`` more publishes; the
    seconds a publish took on average, counted from the call (the first
    includes the child's start), or 0.0 for none. A child that stops
    publishing fails the test instead of hanging it."""
    started = time.monotonic()
    for _ in range(count):
        ready, _, _ = select.select([done], [], [], 60)
        assert ready, "the publishing child finished no publish in 60 s"
        assert os.read(done, 1) == b"."
    return (time.monotonic() - started) / count if count else 0.0


@pytest.mark.slow
def test_kill_9_at_random_moments_never_leaves_a_torn_or_inconsistent_set(row, tmp_path):
    grades = documents(row)
    chance = random.Random(20261130)
    killed_while_publishing = 0
    states: set[tuple[str, ...]] = set()
    # How long a publish takes here, measured as the test goes: the kill
    # lands at a random moment within about one publish, whatever the
    # machine's speed (a fixed 0-20 ms window on a loaded machine killed
    # every child before its first publish, so only () and a temp file
    # were ever seen).
    publish_s = 0.005
    for _ in range(KILLS):
        done, notify = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            try:
                os.close(done)
                publish_forever(grades, tmp_path, notify)
            finally:
                os._exit(1)
        os.close(notify)
        took = wait_for_publishes(done, chance.randint(0, 2))
        publish_s = took or publish_s
        time.sleep(chance.uniform(0.0, 1.5 * publish_s))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        os.close(done)
        if os.WIFSIGNALED(status):
            killed_while_publishing += 1
        check_consistent(tmp_path)
        states.add(
            tuple(
                sorted(
                    "temp" if TEMP_PATTERN.match(path.name) else path.name
                    for path in tmp_path.iterdir()
                )
            )
        )
    assert killed_while_publishing == KILLS  # the child never ended on its own
    # The kills landed in the middle of publishes, not only between them.
    assert len(states) >= 3, states
    assert any("temp" in state for state in states), states

    # After all that, one clean publish ends fully consistent, temp files cleaned.
    current = (
        hashlib.sha256((tmp_path / "grade.json").read_bytes()).hexdigest()
        if (tmp_path / "grade.json").exists()
        else None
    )
    final = grade_document([row("z"), row("y", "pass_to_pass")])
    publish(final, tmp_path, replaces=current)
    assert verify_published(tmp_path)[1] == []
    assert not [path for path in tmp_path.iterdir() if TEMP_PATTERN.match(path.name)]
