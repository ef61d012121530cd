"""docs/ops.md's walkthrough runs as written, and prints what it shows.

The walkthrough's sections (``1. ...`` to ``6. ...``) are run in order as one
``bash -e`` script in a scratch copy of the clone, the way tests/project/test_readme.py
runs the README's blocks (the same environment: the venv's commands first on
``PATH``, Prefect's home in the temp dir, offline); nothing in a block is
substituted. Every line of a ``text`` block of the walkthrough is what the
commands before it print: each must be in the output, in the order shown.
Every other block of the page is listed in :data:`NOT_RUN` with the reason,
so a new block cannot go unseen.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.doc_blocks import Plan, block_env, readme_blocks, run_bash, scratch_copy

OPS = ROOT / "docs" / "ops.md"

#: Blocks outside the walkthrough, by (heading, place), and why they are not run here.
NOT_RUN = {
    ("Finding them", 1): "the walkthrough's step 2 runs sweep retries; the rest are its options",
    ("Grading exactly those again", 1): "needs a server and a deployment: "
    "tests/prefect/test_prefect_deployment.py runs it",
    ("Grading exactly those again", 2): "the walkthrough's step 4 runs this command",
}


def walkthrough() -> tuple[str, list[str]]:
    """The walkthrough's bash script (its blocks in order) and the lines its
    text blocks show, in order."""
    script, shown = [], []
    seen = set()
    for block in readme_blocks(OPS.read_text()):
        if not re.match(r"\d\. ", block.section):
            assert block.key in NOT_RUN, f"docs/ops.md:{block.line}: a block neither run nor listed"
            seen.add(block.key)
            continue
        if block.language == "bash":
            script.append(block.text)
        else:
            assert block.language == "text", f"docs/ops.md:{block.line}: {block.language!r}"
            shown += [line for line in block.text.splitlines() if line.strip()]
    assert seen == set(NOT_RUN), set(NOT_RUN) - seen
    return "".join(script), shown


def test_the_walkthrough_lists_every_step() -> None:
    script, shown = walkthrough()
    assert script.count("python flows/grade_run.py") == 3
    assert "faults.json" in script and "--regrade grader-refusals" in script
    assert any("graded now 30" in line for line in shown)


@pytest.mark.slow
@pytest.mark.longest
def test_the_ops_walkthrough_runs_as_written(tmp_path: Path) -> None:
    script, shown = walkthrough()
    clone = scratch_copy(tmp_path / "clone")
    env = block_env(Plan("bash", "bash"), {"tmp": str(tmp_path), "port": "", "s3": ""})
    output = run_bash(script, clone, env, tmp_path / "walkthrough.log", timeout=1200)
    at = 0
    for line in shown:
        found = output.find(line.strip(), at)
        assert found >= 0, f"docs/ops.md shows {line!r}; the output from there:\n{output[at:]}"
        at = found + len(line.strip())
    # What the page says happened, on the published files.
    graded = clone / "out" / "graded"
    grade = json.loads((graded / "run-29-store-down" / "grade.json").read_text())
    assert grade["gradable"] and len(grade["attempts"]) == 3  # three refused, then healed
    fixed = json.loads((graded / "run-26-cases-missing" / "grade.json").read_text())
    assert fixed["gradable"] and "definition" not in fixed
    waiting = json.loads((graded / "run-27-no-fail-to-pass" / "grade.json").read_text())
    assert not waiting["gradable"] and not waiting["attempts"]  # never graded twice
    assert re.fullmatch(r"[0-9a-f]{64}", waiting["definition"])
