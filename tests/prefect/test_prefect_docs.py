"""docs/prefect.md says what the code does: every request field is
documented, the example request is valid, the sample sweep's headline is
the one the flow prints, and the "own flows" example runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT
from truereward.grading import GradeRequest, grade_request

DOC = (ROOT / "docs" / "prefect.md").read_text()


def test_every_request_field_is_in_the_table() -> None:
    table = re.findall(r"^\| `(\w+)` \|", DOC, re.M)
    assert set(table) == set(GradeRequest.model_fields)


def test_the_example_request_is_valid() -> None:
    section = DOC.split("## The request", 1)[1]
    example = re.search(r"```json\n(.*?)```", section, re.S)
    assert example is not None
    request = GradeRequest.model_validate(json.loads(example.group(1)))
    assert request.max_attempts == 4 and request.sweep_label == "nightly-2026-11-30"


def test_the_sample_sweep_headline_is_the_documented_one(tmp_path: Path) -> None:
    result = grade_request(
        GradeRequest(sweep=str(ROOT / "samples" / "sweep"), target=str(tmp_path)),
        sleep=lambda _: None,
    )
    assert f"`{result.headline()}`" in DOC
    assert "Published: unchanged 30" in DOC
    again = grade_request(
        GradeRequest(sweep=str(ROOT / "samples" / "sweep"), target=str(tmp_path)),
        sleep=lambda _: None,
    )
    assert again.published == {"unchanged": 30}


@pytest.mark.slow
def test_the_own_flow_example_runs(prefect_client_settings: str, tmp_path: Path) -> None:
    from tests.support.sweeps import make_sweep

    code = re.search(r"## The tasks, in your own flows\n\n```python\n(.*?)```", DOC, re.S)
    assert code is not None
    namespace: dict[str, object] = {}
    exec(compile(code.group(1), "docs/prefect.md", "exec"), namespace)
    sweep = make_sweep(tmp_path / "sweep", {"a": "pass", "b": ("heal", 1), "c": "missing"})
    namespace["my_grading"](str(sweep), str(tmp_path / "out"))  # type: ignore[operator]
    grades = {
        run: json.loads((tmp_path / "out" / run / "grade.json").read_text())
        for run in ("a", "b", "c")
    }
    assert [grades[run]["gradable"] for run in ("a", "b", "c")] == [True, True, False]
    assert grades["b"]["run"]["attempt"] == 2
