"""The grade document: shape, determinism, strict JSON, schema, verify."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given
from pydantic import ValidationError

from tests.support import strategies as gen
from tests.support.schemas import shipped
from truereward import GradeDocument, grade_document
from truereward.grade.document import digest_file
from truereward.schemas import generate, load
from truereward.util.strictjson import StrictJSONError
from truereward.verify import verify_document


def test_document_holds_the_fold_rows_and_metadata(row, tmp_path):
    evidence = tmp_path / "report.xml"
    evidence.write_bytes(b"<testsuite/>")
    document = grade_document(
        [row("b", "pass_to_pass"), row("a")],
        case_set={"a": "fail_to_pass", "b": "pass_to_pass"},
        run={
            "id": "run-7",
            "sweep": "nightly",
            "attempt": 2,
            "started": "2026-11-30T10:00:00+01:00",
            "finished": "2026-11-30T09:01:00Z",
        },
        evidence=[digest_file(evidence, name="report.xml")],
        attempts=[
            {
                "attempt": 1,
                "gradable": False,
                "refusals": [
                    {
                        "code": "EVIDENCE_UNREADABLE",
                        "blame": "grader",
                        "why": "timeout",
                        "case": None,
                    }
                ],
            }
        ],
    )
    data = json.loads(document.to_bytes())
    assert data["schema_version"] == 3
    assert data["grader"]["name"] == "truereward"
    assert data["scheme"] == "gated-binary/1"
    assert data["gradable"] is True and data["reward"] == 1.0
    assert [item["id"] for item in data["detail"]] == ["a", "b"]
    assert data["run"]["started"] == "2026-11-30T09:00:00Z"
    assert data["evidence"] == [
        {"path": "report.xml", "size": 12, "sha256": hashlib.sha256(b"<testsuite/>").hexdigest()}
    ]
    assert data["attempts"][0]["refusals"][0]["code"] == "EVIDENCE_UNREADABLE"
    assert data["inputs"]["case_set"] == {"a": "fail_to_pass", "b": "pass_to_pass"}


def test_bytes_are_canonical_and_digest_names_them(row):
    document = grade_document([row("a")])
    raw = document.to_bytes()
    assert raw.endswith(b"\n")
    assert (
        raw
        == (
            json.dumps(json.loads(raw), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
        ).encode()
    )
    assert document.digest == hashlib.sha256(raw).hexdigest()


def test_round_trip_through_bytes(row):
    document = grade_document(
        [row("a"), row("b", verdict="ungradable")],
        refusals=[{"code": "GRADER_TIMEOUT", "why": "x"}],
    )
    again = GradeDocument.from_bytes(document.to_bytes())
    assert again == document and again.digest == document.digest


@pytest.mark.parametrize(
    "text",
    [
        b'{"schema_version": NaN}',
        b'{"a": 1, "a": 2}',
        b"\xff\xfe",
        b"[1, 2",
    ],
)
def test_from_bytes_refuses_non_strict_json(text):
    with pytest.raises(StrictJSONError):
        GradeDocument.from_bytes(text)


def test_from_bytes_refuses_other_shapes(row):
    data = json.loads(grade_document([row("a")]).to_bytes())
    data["reward"] = "1.0"
    with pytest.raises(ValidationError):
        GradeDocument.from_bytes(json.dumps(data))
    data["reward"] = 1.0
    data["surprise"] = True
    with pytest.raises(ValidationError):
        GradeDocument.from_bytes(json.dumps(data))


@pytest.mark.parametrize(
    "bad",
    [
        {"id": "../escape"},
        {"id": "a/b"},
        {"sweep": ".."},
        {"id": "tab\there"},
        {"id": ""},
        {"attempt": 0},
        {"started": "2026-11-30T10:00:00"},
    ],
)
def test_run_metadata_is_validated(row, bad):
    with pytest.raises(ValidationError):
        grade_document([row("a")], run=bad)


def test_shipped_grade_schema_matches_the_model():
    assert load("grade") == generate("grade")


@given(gen.row_lists, gen.case_sets)
def test_documents_satisfy_the_shipped_schema(rows, case_set):
    document = grade_document(rows, case_set=case_set)
    shipped("grade").validate(json.loads(document.to_bytes()))


@pytest.mark.slow
@given(gen.row_lists, gen.case_sets)
def test_verify_agrees_with_every_built_document(rows, case_set):
    document = grade_document(rows, case_set=case_set)
    assert verify_document(GradeDocument.from_bytes(document.to_bytes())) == []


def test_verify_finds_a_tampered_reward(row):
    data = json.loads(grade_document([row("a"), row("b", verdict="fail")]).to_bytes())
    data["reward"] = 1.0
    found = verify_document(GradeDocument.from_bytes(json.dumps(data)))
    assert [item.where for item in found] == ["reward"]


def test_verify_finds_a_dropped_refusal(row):
    data = json.loads(grade_document([row("a"), row("b", verdict="ungradable")]).to_bytes())
    data["refusals"], data["gradable"], data["reward"] = [], True, 1.0
    found = {item.where for item in verify_document(GradeDocument.from_bytes(json.dumps(data)))}
    assert found == {"refusals", "gradable", "reward"}


def test_verify_refolds_with_the_recorded_case_set(row):
    document = grade_document([row("a")], case_set={"a": "fail_to_pass", "b": "fail_to_pass"})
    assert not document.gradable
    assert verify_document(document) == []


def test_version_3_is_written_version_1_is_read_and_a_040_document_is_refused_saying_so():
    from truereward.grade.readback import Unreadable, parse_document

    document = grade_document([{"id": "a", "kind": "fail_to_pass", "verdict": "pass"}])
    assert document.schema_version == 3
    data = document.to_bytes()
    older = data.replace(b'"schema_version": 3', b'"schema_version": 1')
    read = GradeDocument.from_bytes(older)
    assert read.schema_version == 1 and read.to_bytes() == older  # republished unchanged
    legacy = data.replace(b'"schema_version": 3', b'"schema_version": 2')
    with pytest.raises(Unreadable, match=r"schema_version.*truereward 0\.4\.0"):
        parse_document("grade.json", legacy)
    for other in (b"4", b"true", b'"3"'):
        with pytest.raises(Unreadable, match="schema_version"):
            parse_document(
                "grade.json", data.replace(b'"schema_version": 3', b'"schema_version": ' + other)
            )
