"""``truereward grade``: reader + fold + publish from the command line."""

from __future__ import annotations

import json

import pytest

from tests.support.reportgen import run_pytest, write_suite
from truereward.cli import main
from truereward.verify import verify_published


@pytest.mark.slow
def test_grade_a_junit_report_for_a_swebench_instance(tmp_path, capsys):
    project = write_suite(tmp_path / "project")
    run_pytest(project, "--junitxml", str(tmp_path / "junit.xml"))
    (tmp_path / "instance.json").write_text(
        json.dumps(
            {
                "FAIL_TO_PASS": json.dumps(["tests/test_suite.py::test_pass"]),
                "PASS_TO_PASS": json.dumps(
                    ["tests/test_suite.py::test_skip", "tests/test_suite.py::TestMath::test_method"]
                ),
            }
        )
    )
    logs = tmp_path / "logs"
    status = main(
        [
            "grade",
            str(tmp_path / "junit.xml"),
            "--reader",
            "junit",
            "--case-set",
            str(tmp_path / "instance.json"),
            "--logs",
            str(logs),
            "--run-id",
            "r-1",
        ]
    )
    assert status == 0
    assert "gradable: reward 1.0" in capsys.readouterr().out
    document, found = verify_published(logs)
    assert found == []
    assert document.evidence[0].path.endswith("junit.xml")
    assert document.run is not None and document.run.id == "r-1"


def test_refused_evidence_is_published_as_an_ungradable_grade(tmp_path, capsys):
    (tmp_path / "task.json").write_text(
        json.dumps({"reader": "ctrf", "cases": [{"id": "a", "kind": "fail_to_pass"}]})
    )
    logs = tmp_path / "logs"
    assert (
        main(
            [
                "grade",
                str(tmp_path / "missing.json"),
                "--case-set",
                str(tmp_path / "task.json"),
                "--logs",
                str(logs),
            ]
        )
        == 0
    )
    assert "ungradable: EVIDENCE_MISSING (run)" in capsys.readouterr().out
    assert not (logs / "reward.txt").exists()
    assert verify_published(logs)[1] == []


def test_bad_reader_or_spec_exits_2(tmp_path, capsys):
    (tmp_path / "task.json").write_text(
        json.dumps({"cases": [{"id": "a", "kind": "fail_to_pass"}]})
    )
    assert (
        main(
            [
                "grade",
                str(tmp_path),
                "--case-set",
                str(tmp_path / "task.json"),
                "--logs",
                str(tmp_path / "l"),
            ]
        )
        == 2
    )
    assert "no reader given" in capsys.readouterr().err
    assert (
        main(
            [
                "grade",
                str(tmp_path),
                "--reader",
                "tap",
                "--case-set",
                str(tmp_path / "task.json"),
                "--logs",
                str(tmp_path / "l"),
            ]
        )
        == 2
    )
    assert "unknown reader 'tap'" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text('{"cases": [{"id": "a", "kind": "maybe"}]}')
    assert (
        main(
            [
                "grade",
                str(tmp_path),
                "--reader",
                "state",
                "--case-set",
                str(tmp_path / "bad.json"),
                "--logs",
                str(tmp_path / "l"),
            ]
        )
        == 2
    )
    assert "cases.0.kind" in capsys.readouterr().err
