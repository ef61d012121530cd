"""A CaseResult may carry an evaluation report, as data; rows and documents
without one are exactly what they were before reports existed."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import given
from pydantic import ValidationError

from tests.support import strategies as gen
from tests.support.schemas import shipped
from truereward import CaseResult, GradeDocument, grade_document
from truereward.evaluate import EvaluationReport, Metric
from truereward.verify import verify_document

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

REPORT = EvaluationReport(
    metric=Metric(namespace="checks", name="token_f1", parameters={"min": 0.8}),
    verdict="pass",
    score=0.9,
    feedback="close enough",
    details=[EvaluationReport(metric=Metric(name="exact"), verdict="fail", score=0.0)],
)


def golden_documents() -> list[GradeDocument]:
    rows = [
        {
            "id": f"tests/test_m{index // 3}.py::test_case_{index}[p-{index}]",
            "kind": "fail_to_pass" if index < 2 else "pass_to_pass",
            "verdict": "fail" if index == 3 else "pass",
            "why": "assert 2 == 3" if index == 3 else "",
            "observations": [{"name": "stdout", "verdict": "seen", "why": "ü"}],
            "measures": {"ms": 10.5 + index},
            "checks": [{"check": "determinism", "holds": True}] if index == 4 else [],
            "containment": {"sandbox": "gvisor"} if index == 0 else None,
            "duration_s": 0.25 * index,
        }
        for index in range(6)
    ]
    broken = [
        *rows[:5],
        {
            "id": rows[5]["id"],
            "kind": "pass_to_pass",
            "verdict": "ungradable",
            "code": "CASE_NOT_GRADED",
            "why": "reader crashed",
        },
    ]
    case_set = {row["id"]: row["kind"] for row in rows}
    return [
        grade_document(rows, case_set=case_set, run={"id": "run-1", "sweep": "nightly"}),
        grade_document(broken, case_set=case_set, run={"id": "run-1", "attempt": 2}),
        grade_document(rows[:2], scheme="fix-rate/1"),
    ]


def test_documents_without_reports_are_byte_identical_to_before_reports():
    # Digests of these documents computed by the code before `report` existed
    # (commit 9b54376), when documents said schema_version 1: labelled 1, the
    # bytes, and so every published digest, are unchanged; documents now say
    # 3 and differ in that alone.
    as_version_1 = [
        GradeDocument.model_validate({**dict(document), "schema_version": 1})
        for document in golden_documents()
    ]
    for old, new in zip(as_version_1, golden_documents(), strict=True):
        assert new.schema_version == 3
        assert new.to_bytes().replace(b'"schema_version": 3', b'"schema_version": 1') == (
            old.to_bytes()
        )
    assert [document.digest for document in as_version_1] == [
        "57e1dbc500a54de4220432395b91f2a4fd8531f7c399e7370c8b19477abcd1a9",
        "63f5fb07992ac6228fbf9bc8638634335c9151c91064ce7516c1b7dc7b42fbc6",
        "3b714a3f1216b874484defab3c26ab7ceeef408887c8fd7ef9b9de6b40ab7b07",
    ]
    for document in golden_documents():
        assert b'"report"' not in document.to_bytes()


@given(gen.rows())
def test_a_row_without_a_report_has_exactly_the_ten_keys(row):
    result = CaseResult.from_row(row)
    assert result.report is None
    assert set(result.to_row()) == ROW_KEYS
    assert set(CaseResult.from_row({**row, "report": None}).to_row()) == ROW_KEYS


def test_a_row_with_a_report_round_trips_strictly():
    result = CaseResult(id="a", kind="fail_to_pass", verdict="pass", report=REPORT)
    row = result.to_row()
    assert set(row) == {*ROW_KEYS, "report"}
    assert row["report"]["metric"] == {
        "namespace": "checks",
        "name": "token_f1",
        "parameters": {"min": 0.8},
    }
    again = CaseResult.from_row(json.loads(json.dumps(row, allow_nan=False)))
    assert again == result and EvaluationReport.from_data(again.report) == REPORT
    assert CaseResult.model_validate_json(result.model_dump_json()) == result
    shipped("row").validate(row)


@pytest.mark.parametrize(
    "report", ["pass", ["a"], 1.0, {"score": float("nan")}, {"a": [{"b": 1e999}]}]
)
def test_a_report_that_is_not_a_finite_json_object_makes_the_row_invalid(report):
    with pytest.raises(ValidationError) as error:
        CaseResult.from_row(
            {"id": "a", "kind": "fail_to_pass", "verdict": "pass", "report": report}
        )
    assert error.value.errors()[0]["loc"][0] == "report"


@pytest.mark.parametrize(
    "report",
    [
        {"metric": {"name": "m"}},
        {"metric": {"name": "m"}, "metadata": {"a": 1}},
        {"metric": {"name": "m"}, "score": 2},
        {"metric": {"name": "m"}, "verdict": "pass", "unknown": True},
        {"metric": {"name": ""}, "verdict": "pass"},
        {"verdict": "pass"},
    ],
)
def test_the_row_holds_a_report_as_data_and_the_evaluation_model_refuses_a_bad_one(report):
    # The record does not import the evaluation model (docs/design.md): it
    # keeps the object, frozen; reading it as a report checks its shape.
    row = CaseResult.from_row(
        {"id": "a", "kind": "fail_to_pass", "verdict": "pass", "report": report}
    )
    assert row.to_row()["report"] == report
    with pytest.raises(TypeError):
        row.report["verdict"] = "fail"  # type: ignore[index]
    with pytest.raises(ValidationError):
        EvaluationReport.from_data(row.report)


@pytest.mark.parametrize(
    "report",
    [
        {"metric": {"name": "m"}},
        {"metric": {"name": "m"}, "feedback": "  "},
        {"metric": {"name": "m"}, "score": 2},
    ],
)
def test_the_shipped_row_schema_refuses_reports_without_an_outcome(report):
    row = {"id": "a", "kind": "fail_to_pass", "verdict": "pass", "report": report}
    with pytest.raises(jsonschema.ValidationError):
        shipped("row").validate(row)


def test_a_report_rides_in_the_grade_document_and_never_changes_the_reward():
    plain = [
        {"id": "a", "kind": "fail_to_pass", "verdict": "pass"},
        {"id": "b", "kind": "pass_to_pass", "verdict": "pass"},
    ]
    failing_report = EvaluationReport(metric=Metric(name="judge"), verdict="fail", score=0.0)
    with_reports = [{**plain[0], "report": failing_report}, plain[1]]
    bare, annotated = grade_document(plain), grade_document(with_reports)
    assert bare.reward == annotated.reward == 1.0
    assert bare.digest != annotated.digest
    again = GradeDocument.from_bytes(annotated.to_bytes())
    assert again == annotated
    assert EvaluationReport.from_data(again.detail[0].report) == failing_report
    assert verify_document(again) == []
    shipped("grade").validate(json.loads(annotated.to_bytes()))


def test_a_record_built_without_validation_from_the_ten_keys_still_dumps_as_before():
    # A record built with pydantic's model_construct from already valid
    # values of the ten row keys (no `report`, no `reruns`) dumps the same.
    made = CaseResult(id="a", kind="fail_to_pass", verdict="pass")
    values = made.to_row()
    built = CaseResult.model_construct(**{name: getattr(made, name) for name in values})
    assert built.to_row() == values and set(built.to_row()) == ROW_KEYS
