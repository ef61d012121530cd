"""The ctrf and junit readers on real reports written by pytest,
pytest-json-ctrf 0.6 and the legacy pytest-json-ctrf 0.3.5."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.support.reportgen import OUTCOMES, install_legacy_ctrf, run_pytest, write_suite
from truereward import Ungradable, fold, grade_evidence, read
from truereward.readers import read_with_evidence

#: SWE-bench 5: what each outcome means for a case of each kind.
EXPECTED = {
    ("passed", "fail_to_pass"): "pass",
    ("passed", "pass_to_pass"): "pass",
    ("failed", "fail_to_pass"): "fail",
    ("failed", "pass_to_pass"): "fail",
    ("error", "fail_to_pass"): "fail",
    ("error", "pass_to_pass"): "fail",
    ("skipped", "fail_to_pass"): "fail",
    ("skipped", "pass_to_pass"): "pass",
    ("xfail", "fail_to_pass"): "pass",
    ("xfail", "pass_to_pass"): "pass",
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Reports of the same suite by every writer."""
    root = tmp_path_factory.mktemp("reports")
    project = write_suite(root / "project")
    run_pytest(
        project,
        "--junitxml",
        str(root / "junit-xunit2.xml"),
        "-o",
        "junit_family=xunit2",
        "--ctrf",
        str(root / "ctrf.json"),
    )
    run_pytest(
        project,
        "--junitxml",
        str(root / "junit-xunit1.xml"),
        "-o",
        "junit_family=xunit1",
        "-p",
        "no:ctrf-json-reporter",
    )
    # The same suite run with tests/ as the root directory: classnames lose "tests.".
    run_pytest(
        project / "tests",
        "--junitxml",
        str(root / "junit-other-root.xml"),
        "--rootdir",
        str(project / "tests"),
    )
    legacy = install_legacy_ctrf(root)
    run_pytest(project, "--ctrf", str(root / "ctrf-legacy.json"), pythonpath=str(legacy))
    return {path.stem: path for path in root.glob("*.*")}


@pytest.mark.slow
@pytest.mark.parametrize("report", ["junit-xunit2", "junit-xunit1", "ctrf"])
@pytest.mark.parametrize("kind", ["fail_to_pass", "pass_to_pass"])
def test_every_outcome_maps_with_swebench_semantics(reports, report, kind):
    reader = "ctrf" if report.startswith("ctrf") else "junit"
    case_set = dict.fromkeys(OUTCOMES, kind)
    rows = {row.id: row for row in read(reader, str(reports[report]), case_set)}
    assert set(rows) == set(OUTCOMES)
    for node_id, outcome in OUTCOMES.items():
        assert rows[node_id].verdict == EXPECTED[outcome, kind], (node_id, rows[node_id].why)


@pytest.mark.slow
def test_junit_node_ids_match_across_root_directories(reports):
    case_set = dict.fromkeys(OUTCOMES, "fail_to_pass")
    rows = {row.id: row for row in read("junit", str(reports["junit-other-root"]), case_set)}
    assert rows["tests/test_suite.py::test_pass"].verdict == "pass"
    assert rows["tests/test_suite.py::TestMath::test_param[2]"].verdict == "fail"


@pytest.mark.slow
def test_an_absent_test_fails_for_both_kinds(reports):
    case_set = {
        "tests/test_suite.py::test_nowhere": "fail_to_pass",
        "tests/test_suite.py::test_elsewhere": "pass_to_pass",
        "tests/test_suite.py::test_pass": "fail_to_pass",
    }
    for report in ("junit-xunit2", "ctrf"):
        reader = "ctrf" if report == "ctrf" else "junit"
        rows = {row.id: row for row in read(reader, str(reports[report]), case_set)}
        assert rows["tests/test_suite.py::test_nowhere"].verdict == "fail"
        assert rows["tests/test_suite.py::test_elsewhere"].verdict == "fail"
        assert "absent" in rows["tests/test_suite.py::test_elsewhere"].why


@pytest.mark.slow
def test_legacy_ctrf_reads_and_refuses_merged_parametrised_cases(reports):
    data = json.loads(reports["ctrf-legacy"].read_text())
    assert "reportFormat" not in data  # it really is the legacy shape
    case_set = dict.fromkeys(OUTCOMES, "fail_to_pass")
    rows = {row.id: row for row in read("ctrf", str(reports["ctrf-legacy"]), case_set)}
    for node_id in (
        "tests/test_suite.py::TestMath::test_param[1]",
        "tests/test_suite.py::TestMath::test_param[2]",
    ):
        assert rows[node_id].verdict == "ungradable"
        assert rows[node_id].code == "CASE_INVALID"
        assert "merged" in rows[node_id].why
    assert rows["tests/test_suite.py::test_pass"].verdict == "pass"
    assert rows["tests/test_suite.py::test_xfail"].verdict == "pass"
    assert rows["tests/test_suite.py::test_xpass_strict"].verdict == "fail"
    assert rows["tests/test_suite.py::test_skip"].verdict == "fail"
    assert not fold(list(rows.values()), case_set=case_set).gradable


@pytest.mark.slow
def test_legacy_ctrf_xfails_without_the_xfail_tag_are_passes(reports):
    """pytest-json-ctrf 0.3.5 writes an xfail as ``skipped``, tagged
    ``xfail`` only for a bare ``@pytest.mark.xfail``; its ``trace`` is the
    failure's traceback, where a real skip's is the (path, line, reason)
    tuple."""
    tests = {
        test["name"]: test
        for test in json.loads(reports["ctrf-legacy"].read_text())["results"]["tests"]
    }
    imperative = tests["tests/test_suite.py::test_xfail_imperative"]
    assert imperative["status"] == "skipped" and "xfail" not in imperative.get("tags", [])
    assert "XFailed" in imperative["trace"]
    assert tests["tests/test_suite.py::test_skip_imperative"]["trace"].startswith("(")
    case_set = {
        "tests/test_suite.py::test_xfail_imperative": "fail_to_pass",
        "tests/test_suite.py::test_xfail_raises": "fail_to_pass",
        "tests/test_suite.py::test_skip_imperative": "fail_to_pass",
        "tests/test_suite.py::test_skip": "pass_to_pass",
    }
    rows = {row.id: row for row in read("ctrf", str(reports["ctrf-legacy"]), case_set)}
    assert rows["tests/test_suite.py::test_xfail_imperative"].verdict == "pass"
    assert rows["tests/test_suite.py::test_xfail_raises"].verdict == "pass"
    assert rows["tests/test_suite.py::test_skip_imperative"].verdict == "fail"
    assert "skipped" in rows["tests/test_suite.py::test_skip_imperative"].why
    assert rows["tests/test_suite.py::test_skip"].verdict == "pass"


@pytest.mark.slow
def test_reading_records_evidence_digests(reports):
    reading = read_with_evidence(
        "junit", str(reports["junit-xunit2"]), {"tests/test_suite.py::test_pass": "fail_to_pass"}
    )
    (digest,) = reading.evidence
    assert digest.size == reports["junit-xunit2"].stat().st_size


@pytest.mark.parametrize(
    ("reader", "content"),
    [
        ("junit", b"garbage"),
        ("junit", b"<testsuite/>"),
        ("ctrf", b"garbage"),
        ("ctrf", b'{"reportFormat": "CTRF", "results": {"tests": []}}'),
    ],
)
def test_a_refused_evidence_file_is_still_digested(tmp_path, reader, content):
    path = tmp_path / "report"
    path.write_bytes(content)
    document = grade_evidence(reader, str(path), {"a::t": "fail_to_pass"})
    assert [refusal.code for refusal in document.refusals] == ["EVIDENCE_MALFORMED"]
    (digest,) = document.evidence
    assert digest.path == str(path)
    assert digest.size == len(content)
    assert digest.sha256 == hashlib.sha256(content).hexdigest()


def test_absent_evidence_has_no_digest(tmp_path):
    document = grade_evidence("junit", str(tmp_path / "nothing.xml"), {"a::t": "fail_to_pass"})
    assert [refusal.code for refusal in document.refusals] == ["EVIDENCE_MISSING"]
    assert document.evidence == ()


@pytest.mark.slow
def test_a_whole_pytest_run_folds_to_the_expected_reward(reports):
    case_set = {
        "tests/test_suite.py::test_pass": "fail_to_pass",
        "tests/test_suite.py::test_xfail": "fail_to_pass",
        "tests/test_suite.py::test_skip": "pass_to_pass",
        "tests/test_suite.py::TestMath::test_method": "pass_to_pass",
    }
    for reader, report in (("junit", "junit-xunit2"), ("ctrf", "ctrf")):
        rows = read(reader, str(reports[report]), case_set)
        result = fold(rows, case_set=case_set)
        assert result.gradable and result.reward == 1.0, (reader, result.refusals)


def test_missing_evidence_is_evidence_missing(tmp_path):
    for reader in ("junit", "ctrf"):
        with pytest.raises(Ungradable) as caught:
            read(reader, str(tmp_path / "nothing.xml"), {"a": "fail_to_pass"})
        assert caught.value.code == "EVIDENCE_MISSING"
