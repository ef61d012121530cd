"""The checks reader: criteria checks on a run's answer, graded under
mean-score/1 and gated-binary/1, with evaluation reports."""

from __future__ import annotations

import json

import pytest

from truereward import TaskSpec, Ungradable, fold, grade_evidence, read
from truereward.evaluate import EvaluationReport

CRITERIA = [
    {
        "id": "mentions-paris",
        "kind": "fail_to_pass",
        "options": {"checks": [{"type": "contains", "value": ["Paris"]}]},
    },
    {
        "id": "cites",
        "kind": "fail_to_pass",
        "options": {
            "sources": [{"id": "src1"}, {"id": "src2"}],
            "checks": [{"type": "citation_coverage", "min": 1}],
        },
    },
    {
        "id": "close-to-reference",
        "kind": "pass_to_pass",
        "options": {"expected": "Paris is the capital of France"},
    },
]


@pytest.fixture
def answer(tmp_path):
    path = tmp_path / "answer.txt"
    path.write_text("Paris is the capital of France [src1].")
    return str(path)


def test_criteria_become_rows_with_scores_and_reports(answer):
    rows = {row.id: row for row in read("checks", answer, CRITERIA)}
    assert rows["mentions-paris"].verdict == "pass"
    assert rows["cites"].verdict == "fail"
    assert rows["cites"].measures["score"] == 0.5
    assert rows["close-to-reference"].verdict == "pass"
    report = EvaluationReport.from_data(rows["cites"].report)  # a row holds it as data
    assert str(report.metric) == "checks/case"
    assert [str(detail.metric) for detail in report.details] == ["checks/citation_coverage"]
    assert report.details[0].metric.parameters["sources"] == ["src1", "src2"]


def test_mean_score_and_gated_binary_rewards(answer):
    spec = TaskSpec.of(CRITERIA)
    rows = read("checks", answer, spec)
    dense = fold(rows, case_set=spec, scheme="mean-score/1")
    strict = fold(rows, case_set=spec, scheme="gated-binary/1")
    scores = [row.measures["score"] for row in rows]
    assert dense.reward == pytest.approx(sum(scores) / 3)
    assert strict.reward == 0.0


def test_a_broken_criterion_is_case_invalid(answer):
    rows = read(
        "checks",
        answer,
        [{"id": "bad", "kind": "fail_to_pass", "options": {"checks": [{"type": "telepathy"}]}}],
    )
    assert rows[0].code == "CASE_INVALID"


def test_an_answer_inside_json(tmp_path):
    path = tmp_path / "out.json"
    path.write_text(json.dumps({"output": '{"user": {"name": "Alice"}}', "tokens": 12}))
    criteria = [
        {
            "id": "name",
            "kind": "fail_to_pass",
            "options": {"checks": [{"type": "json_field", "path": "user.name", "value": "Alice"}]},
        }
    ]
    (row,) = read("checks", str(path), criteria, answer="/output")
    assert row.verdict == "pass"
    with pytest.raises(Ungradable) as caught:
        read("checks", str(path), criteria, answer="/missing")
    assert caught.value.code == "EVIDENCE_MALFORMED"


def test_grading_a_run_through_the_reader(answer, tmp_path):
    document = grade_evidence(
        "checks", answer, CRITERIA, scheme="mean-score/1", run={"id": "answer-7"}
    )
    assert document.gradable
    assert 0 < document.reward < 1
    assert document.detail[0].report is not None
