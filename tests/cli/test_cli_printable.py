"""What the command line prints of a forged grade: a reason holding terminal
escapes (retitle the window, clear the screen, a C1 CSI, a bidi override, a
carriage return) is shown, never acted on, in every format; JSON still
reads back to the stored text; error lines on stderr are shown alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.markdown import as_read, code_blocks, table_rows
from tests.support.terminal import acted_on, as_shown
from truereward import grade_document, publish
from truereward.cli import main

FORGED = "\x1b]0;owned\x07\x1b[2J\x9b31m\u202edrawer 0\rreward 1"


def forged_sweep(root: Path) -> Path:
    """``healed`` (refused once with the forged reason, then reward 1/3) and
    ``down`` (still refused for the grader, retryable, the same reason)."""
    rows = [
        {"id": f"t::{name}", "kind": "fail_to_pass", "verdict": verdict}
        for name, verdict in (("a", "pass"), ("b", "fail"), ("c", "fail"))
    ]
    first = {"code": "GRADER_TIMEOUT", "blame": "grader", "why": FORGED}
    healed = grade_document(
        rows,
        scheme="weighted-mean/1",
        run={"id": "healed", "sweep": "s", "attempt": 2},
        attempts=[{"attempt": 1, "gradable": False, "refusals": [first]}],
    )
    down = grade_document(
        [{**rows[0], "verdict": "ungradable", "code": "GRADER_TIMEOUT", "why": FORGED}],
        run={"id": "down", "sweep": "s"},
    )
    for document in (healed, down):
        publish(document, root / document.run.id)
    return root


def retries(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["sweep", "retries", *args]) == 0
    return capsys.readouterr().out


def test_a_forged_reason_is_shown_never_acted_on(tmp_path: Path, capsys) -> None:
    root = str(forged_sweep(tmp_path / "out"))
    for format in ("table", "markdown", "json"):
        text = retries(capsys, root, "--format", format)
        assert not any(map(acted_on, text)), (format, text)
    table = retries(capsys, root)
    assert f"GRADER_TIMEOUT (grader): {as_shown(FORGED)}; 2: gradable" in table
    assert [line.split()[:3] for line in table.splitlines()[1:3]] == [
        ["down", "ungradable", "—"],
        ["healed", "gradable", "0.3333"],  # rounded as the sweep reports write a figure
    ]
    rows = table_rows(retries(capsys, root, "--format", "markdown"))
    assert [row[:3] for row in rows] == [
        ["down", "ungradable", "—"],
        ["healed", "gradable", "0.3333"],
    ]
    assert rows[1][4] == f"1: GRADER_TIMEOUT (grader): {as_read(FORGED)}; 2: gradable"
    listed = json.loads(retries(capsys, root, "--format", "json"))
    assert [run["attempts"][0]["why"] for run in listed["runs"]] == [FORGED, FORGED]
    assert listed["runs"][1]["reward"] == 1 / 3


def test_the_markdown_commands_hold_a_target_that_could_close_their_block(
    tmp_path: Path, capsys
) -> None:
    # The target is the operator's own path; one with a line of backticks
    # in it must not end the block of commands early.
    root = str(forged_sweep(tmp_path / "out\n```\nrm -rf ~\n"))
    commands = json.loads(retries(capsys, root, "--format", "json"))["regrade"]
    assert "```" in commands["local"]
    blocks = code_blocks(retries(capsys, root, "--format", "markdown"))
    assert blocks == [("bash", f"{commands['deployment']}\n{commands['local']}\n")]


def test_an_error_line_shows_the_path_it_names(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "gone\x1b[2J\u202e"
    assert main(["fold", str(missing)]) == 2
    error = capsys.readouterr().err
    assert not any(map(acted_on, error)), error
    assert as_shown(str(missing)) in error
