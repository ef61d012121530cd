"""truereward.util.segments: a run id or sweep name is one safe segment; a
path inside a run stays inside it, and every field that names one (a
request's evidence and case_set, a fault plan's evidence, a state case's
path) refuses the same paths, naming the field."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from truereward.grading import GradeRequest
from truereward.readers.faults import FaultPlan
from truereward.readers.state import _Expectation
from truereward.util.segments import check_inner_path

INSIDE = ["task.json", "logs/verifier/rows.jsonl", "./out/result.json", "a b/c.json", "x:y"]
OUTSIDE = [
    "",
    "/etc/passwd",
    "../task.json",
    "logs/../../x",
    "logs//rows.jsonl",
    "logs/",
    "..\\x",
    "logs\\rows.jsonl",
    "s3://bucket/key",
    "file:///etc/passwd",
]


@pytest.mark.parametrize("path", INSIDE)
def test_a_relative_path_inside_is_kept(path: str) -> None:
    assert check_inner_path(path, "the run") == path


@pytest.mark.parametrize("path", OUTSIDE)
def test_a_path_that_could_leave_is_refused_saying_where(path: str) -> None:
    with pytest.raises(ValueError, match="a relative path inside the run"):
        check_inner_path(path, "the run")


@given(st.lists(st.sampled_from(["a", "b.json", "..", "."]), min_size=1, max_size=6))
def test_a_path_with_a_parent_part_is_always_refused(parts: list[str]) -> None:
    path = "/".join(parts)
    if ".." in parts:
        with pytest.raises(ValueError, match="a relative path inside the run"):
            check_inner_path(path, "the run")
    else:
        assert check_inner_path(path, "the run") == path


@pytest.mark.parametrize("path", OUTSIDE)
def test_every_field_naming_a_path_in_a_run_refuses_the_same_paths(path: str) -> None:
    for field in ("evidence", "case_set"):
        # The empty path is refused by the field's type (at least 1 character).
        named = field if not path else f"{field}: a relative path inside the run"
        with pytest.raises(ValidationError, match=named):
            GradeRequest.model_validate({"sweep": "sweep", field: path})
    with pytest.raises(ValidationError, match="evidence"):
        FaultPlan.model_validate({"evidence": path})
    with pytest.raises(ValidationError, match="path"):
        _Expectation.model_validate({"path": path})
