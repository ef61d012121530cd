"""The record: CaseResult strictness, rows, and the shipped row schema."""

from __future__ import annotations

import json
import math

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.support import strategies as gen
from tests.support.schemas import shipped
from truereward import CaseResult
from truereward.schemas import generate, load

ROW_KEYS = {
    "id",
    "kind",
    "verdict",
    "code",
    "why",
    "observations",
    "measures",
    "checks",
    "containment",
    "duration_s",
}


def error_fields(error: ValidationError) -> list[tuple]:
    return [item["loc"] for item in error.errors()]


def test_to_row_has_the_ten_keys_and_round_trips():
    result = CaseResult(
        id="t::a",
        kind="fail_to_pass",
        verdict="pass",
        why="ok",
        observations=[{"name": "stdout", "verdict": "seen", "why": "x"}],
        measures={"ms": 12.5},
        checks=[{"check": "determinism", "holds": True}],
        containment={"sandbox": "gvisor", "network": False},
        duration_s=0.25,
    )
    row = result.to_row()
    assert set(row) == ROW_KEYS
    assert json.loads(json.dumps(row)) == row
    assert CaseResult.from_row(row) == result


@given(gen.rows())
def test_every_valid_row_round_trips_through_json(row):
    result = CaseResult.from_row(row)
    again = CaseResult.from_row(json.loads(json.dumps(result.to_row())))
    assert again == result


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("id", ""),
        ("id", " leading"),
        ("id", "trailing "),
        ("id", "tab\tinside"),
        ("id", "x" * 513),
        ("id", 5),
        ("kind", "guard"),
        ("verdict", "passed"),
        ("verdict", True),
        ("why", None),
        ("measures", {"ms": float("nan")}),
        ("measures", {"ms": float("inf")}),
        ("measures", {"ms": True}),
        ("measures", {"ms": "12"}),
        ("duration_s", -1.0),
        ("duration_s", float("nan")),
        ("duration_s", False),
        ("containment", {"x": float("nan")}),
        ("containment", "sandboxed"),
        ("observations", [{"name": "a"}]),
        ("checks", [{"check": "determinism", "holds": 1}]),
        ("checks", [{"check": "determinism", "holds": "yes"}]),
    ],
)
def test_invalid_fields_are_rejected_naming_the_field(field, value):
    row = {"id": "a", "kind": "fail_to_pass", "verdict": "pass", field: value}
    with pytest.raises(ValidationError) as caught:
        CaseResult.from_row(row)
    assert any(loc and loc[0] == field for loc in error_fields(caught.value))


def test_unknown_fields_are_rejected():
    with pytest.raises(ValidationError) as caught:
        CaseResult.from_row({"id": "a", "kind": "fail_to_pass", "verdict": "pass", "score": 1})
    assert error_fields(caught.value) == [("score",)]


def test_ints_are_accepted_as_floats_but_bools_never():
    result = CaseResult.from_row(
        {
            "id": "a",
            "kind": "fail_to_pass",
            "verdict": "pass",
            "measures": {"bytes": 1024},
            "duration_s": 2,
        }
    )
    assert result.measures == {"bytes": 1024.0} and result.duration_s == 2.0


def test_a_code_goes_with_ungradable_and_with_no_other():
    with pytest.raises(ValidationError, match="needs a refusal code"):
        CaseResult(id="a", kind="fail_to_pass", verdict="ungradable")
    with pytest.raises(ValidationError, match="only an ungradable case"):
        CaseResult(id="a", kind="fail_to_pass", verdict="fail", code="CASE_NOT_GRADED")
    with pytest.raises(ValidationError, match="known codes"):
        CaseResult(id="a", kind="fail_to_pass", verdict="ungradable", code="NOPE_NOT_A_CODE")
    ok = CaseResult(id="a", kind="fail_to_pass", verdict="ungradable", code="EVIDENCE_MISSING")
    assert not ok.graded


def test_the_record_is_frozen():
    result = CaseResult(id="a", kind="fail_to_pass", verdict="pass")
    with pytest.raises(ValidationError):
        result.verdict = "fail"  # type: ignore[misc]


def test_unicode_ids_are_fine():
    assert CaseResult(
        id="tests/test_ü.py::test_名前[1-2]", kind="fail_to_pass", verdict="pass"
    ).id.endswith("[1-2]")


def test_shipped_row_schema_matches_the_model():
    assert load("row") == generate("row")


@given(gen.rows())
def test_valid_rows_satisfy_the_shipped_schema(row):
    shipped("row").validate(CaseResult.from_row(row).to_row())


@pytest.mark.parametrize(
    "row",
    [
        {"id": "a", "kind": "fail_to_pass", "verdict": "ungradable"},
        {"id": "a", "kind": "fail_to_pass", "verdict": "pass", "code": "CASE_INVALID"},
        {"id": " a", "kind": "fail_to_pass", "verdict": "pass"},
        {"id": "a", "kind": "fail_to_pass", "verdict": "pass", "extra": 1},
    ],
)
def test_invalid_rows_fail_the_shipped_schema_too(row):
    with pytest.raises(jsonschema.ValidationError):
        shipped("row").validate(row)


@given(
    st.dictionaries(
        st.sampled_from([*sorted(ROW_KEYS), "other"]),
        st.none()
        | st.booleans()
        | st.integers()
        | st.text(max_size=5)
        | st.floats()
        | st.lists(st.integers(), max_size=2),
    )
)
def test_garbage_rows_raise_only_validation_errors(garbage):
    try:
        result = CaseResult.from_row(garbage)
    except ValidationError:
        return
    assert all(math.isfinite(value) for value in result.measures.values())


@given(st.text(max_size=20) | st.text(alphabet=st.characters(max_codepoint=0x3000), max_size=6))
def test_the_id_pattern_and_check_case_id_agree(text):
    from truereward.record.cases import check_case_id

    try:
        check_case_id(text)
        expected = True
    except ValueError:
        expected = False
    try:
        CaseResult(id=text, kind="fail_to_pass", verdict="pass")
        accepted = True
    except ValidationError:
        accepted = False
    assert accepted == expected
