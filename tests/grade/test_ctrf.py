"""ctrf.json: valid against the official CTRF schema, never greener than the grade."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.support import strategies as gen
from tests.support.strategies import floats_in
from truereward import ctrf, grade_document
from truereward.grade.ctrfreport import UNGRADABLE_TEST
from truereward.grade.files import render

SCHEMA = json.loads((Path(__file__).parents[1] / "data" / "ctrf.schema.json").read_text())


def validate(report):
    jsonschema.Draft7Validator(SCHEMA).validate(report)


def test_gradable_run(row):
    report = ctrf(
        grade_document(
            [row("a", duration_s=1.2346), row("b", "pass_to_pass")],
            run={"started": "2026-11-30T10:00:00Z", "finished": "2026-11-30T10:00:02Z"},
        )
    )
    validate(report)
    assert report["reportFormat"] == "CTRF" and report["specVersion"] == "1.0.0"
    summary = report["results"]["summary"]
    assert (summary["tests"], summary["passed"], summary["other"]) == (2, 2, 0)
    assert summary["stop"] - summary["start"] == 2000
    first = report["results"]["tests"][0]
    assert first["duration"] == 1235 and isinstance(first["duration"], int)
    assert first["suite"] == ["fail_to_pass"] and first["rawStatus"] == "pass"


def test_ungradable_run_with_refusals_that_have_no_row(row):
    document = grade_document(
        [
            row("a"),
            row("b", verdict="ungradable", code="CASE_NOT_GRADED", why="crashed"),
            row("a", verdict="fail"),
        ],
        case_set={"a": "fail_to_pass", "b": "fail_to_pass", "c": "pass_to_pass"},
        refusals=[{"code": "GRADER_TIMEOUT", "why": "budget"}],
    )
    report = ctrf(document)
    validate(report)
    tests = report["results"]["tests"]
    other = [test for test in tests if test["status"] == "other"]
    names = sorted(test["name"] for test in other)
    # the ungradable row, the duplicate id, the missing case, the run-level timeout
    assert names == ["GRADER_TIMEOUT", "a [CASE_INVALID]", "b", "c [CASES_MISSING]"]
    missing = next(test for test in other if test["name"] == "c [CASES_MISSING]")
    assert missing["extra"]["truereward"] == {
        "code": "CASES_MISSING",
        "blame": "grader",
        "case": "c",
        "kind": "pass_to_pass",
    }
    assert report["extra"]["truereward"]["gradable"] is False
    assert report["extra"]["truereward"]["reward"] is None
    # The grade has no reward: one failed test stands for it, beside the row
    # that failed (a duplicate of "a"); no other case is called failed.
    failed = [test for test in tests if test["status"] == "failed"]
    assert [test["name"] for test in failed] == ["a", UNGRADABLE_TEST]
    assert failed[1:] == [
        {
            "name": UNGRADABLE_TEST,
            "status": "failed",
            "rawStatus": "ungradable",
            "duration": 0,
            "suite": ["grade"],
            "message": "the run has no reward: GRADER_TIMEOUT (grader), CASE_INVALID (grader), "
            "CASE_NOT_GRADED (grader), CASES_MISSING (grader)",
            "extra": {
                "truereward": {
                    "grade": "ungradable",
                    "codes": ["GRADER_TIMEOUT", "CASE_INVALID", "CASE_NOT_GRADED", "CASES_MISSING"],
                }
            },
        }
    ]
    summary = report["results"]["summary"]
    assert (summary["tests"], summary["passed"], summary["failed"], summary["other"]) == (
        7,
        1,
        2,
        4,
    )


@pytest.mark.parametrize("rows", [[], [{"id": "g", "kind": "pass_to_pass", "verdict": "pass"}]])
def test_run_level_refusals_appear_as_other_tests(rows):
    report = ctrf(grade_document(rows))
    validate(report)
    assert report["results"]["summary"]["other"] == 1
    # and the grade, which has no reward, as the one failed test
    assert report["results"]["summary"]["failed"] == 1


def test_reruns_are_the_attempts_before_the_final_one(row):
    # As the CTRF schema and pytest-json-ctrf count them: the test's own
    # status is the final attempt's, retryAttempts the earlier ones.
    document = grade_document(
        [
            row("a", reruns=[{"verdict": "fail", "why": "cold"}, {"verdict": "fail", "why": ""}]),
            row("b", "pass_to_pass", "fail", reruns=[{"verdict": "fail", "why": "again"}]),
            row("c", "pass_to_pass"),
        ]
    )
    report = ctrf(document)
    validate(report)
    a, b, c = report["results"]["tests"]
    assert (a["status"], a["retries"], a["flaky"]) == ("passed", 2, True)
    assert a["retryAttempts"] == [
        {"attempt": 1, "status": "failed", "message": "cold"},
        {"attempt": 2, "status": "failed"},
    ]
    assert (b["status"], b["retries"], b["flaky"]) == ("failed", 1, False)
    assert b["retryAttempts"] == [{"attempt": 1, "status": "failed", "message": "again"}]
    assert "retries" not in c and "retryAttempts" not in c and "flaky" not in c
    assert report["results"]["summary"]["flaky"] == 1


@pytest.mark.slow
@given(gen.row_lists, gen.case_sets)
def test_every_report_validates_and_is_never_greener_than_the_grade(rows, case_set):
    document = grade_document(rows, case_set=case_set)
    report = ctrf(document)
    validate(report)
    summary = report["results"]["summary"]
    tests = report["results"]["tests"]
    assert summary["tests"] == len(tests)
    for status in ("passed", "failed", "other"):
        assert summary[status] == sum(test["status"] == status for test in tests)
    # A reader that counts failed tests alone (GitHub's CTRF reporter) sees a
    # failure whenever the grade is ungradable, and no case is failed that
    # did not fail: the failed tests are the failing rows and the grade's.
    failing_rows = sum(row.verdict == "fail" for row in document.detail)
    assert summary["failed"] == failing_rows + (not document.gradable)
    assert [t["name"] for t in tests if t["suite"] == ["grade"]] == (
        [] if document.gradable else [UNGRADABLE_TEST]
    )
    if not document.gradable:
        assert summary["other"] >= 1
        assert summary["failed"] >= 1
    for test in tests:  # every attempt listed is one before the final one
        assert len(test.get("retryAttempts", [])) == test.get("retries", 0)
    assert report["extra"]["truereward"]["grade_sha256"] == document.digest


@pytest.mark.slow
@given(gen.row_lists, st.floats(0, 1), st.sampled_from(["gated-binary/1", "mean-score/1"]))
@example([{"id": "a", "kind": "fail_to_pass", "verdict": "pass"}], 3e-05, "mean-score/1")
def test_the_views_one_float_is_the_reward_so_its_bytes_are_the_standard_librarys(
    rows, score, scheme
):
    # files.render names the reward as the view's only float and so skips
    # orjson's float search (strictjson.canonical_bytes's floats=); a score
    # below 1e-4 makes a reward that orjson would write otherwise.
    scored = [{**row, "measures": {**row.get("measures", {}), "score": score}} for row in rows]
    document = grade_document(scored, scheme=scheme)
    report = ctrf(document)
    assert floats_in(report) == ([] if document.reward is None else [document.reward])
    standard = json.dumps(report, sort_keys=True, ensure_ascii=False, allow_nan=False, indent=2)
    assert render(document)[document.publication.ctrf] == (standard + "\n").encode()
