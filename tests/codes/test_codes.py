"""Refusal codes: the shared list, declarations, entry points, Ungradable."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from truereward import codes
from truereward.codes import Blame, Ungradable, declare, lookup
from truereward.util.exceptions import UnknownName

SHARED_TABLE = {
    "CASE_INVALID": ("grader", False),
    "CASE_NOT_PREPARED": ("grader", True),
    "CASE_NOT_GRADED": ("grader", True),
    "CASES_MISSING": ("grader", False),
    "NOTHING_GRADED": ("grader", True),
    "NO_FAIL_TO_PASS": ("grader", False),
    "EVIDENCE_UNREADABLE": ("grader", True),
    "GRADER_TIMEOUT": ("grader", True),
    "EVIDENCE_MISSING": ("run", False),
    "EVIDENCE_MALFORMED": ("run", False),
    "RUN_NOT_DETERMINISTIC": ("run", False),
}


def test_shared_list_is_exactly_the_spec_table():
    assert {
        name: (code.blame.value, code.retry) for name, code in codes.SHARED.items()
    } == SHARED_TABLE


def test_unknown_code_lists_the_known_codes():
    with pytest.raises(UnknownName) as caught:
        lookup("NOT_DECLARED_ANYWHERE")
    assert "CASE_INVALID" in str(caught.value) and "RUN_NOT_DETERMINISTIC" in str(caught.value)


def test_declare_adds_codes_and_identical_redeclaration_is_a_noop():
    spec = {
        "DECL_ONE_TIMEOUT": {"meaning": "the judge timed out", "blame": "grader", "retry": True}
    }
    declare(spec)
    declare(spec)
    assert lookup("DECL_ONE_TIMEOUT").blame is Blame.GRADER
    assert lookup("DECL_ONE_TIMEOUT").retry is True


def test_a_different_redeclaration_is_an_error():
    declare({"DECL_TWO": {"meaning": "a", "blame": "run"}})
    with pytest.raises(ValueError, match="already registered differently"):
        declare({"DECL_TWO": {"meaning": "b", "blame": "run"}})


def test_shared_codes_cannot_be_redeclared():
    with pytest.raises(ValueError, match="shared code"):
        declare({"CASE_INVALID": {"meaning": "x", "blame": "grader"}})


@pytest.mark.parametrize("name", ["lower_case", "AB", "1ABC", "A-B-C", "A" * 65, ""])
def test_names_must_match_the_pattern(name):
    with pytest.raises(ValueError, match="must match"):
        declare({name: {"meaning": "x", "blame": "grader"}})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"meaning": "", "blame": "grader"}, "meaning"),
        ({"blame": "grader"}, "meaning"),
        ({"meaning": "x", "blame": "judge"}, "blame"),
        ({"meaning": "x", "blame": "grader", "retry": "yes"}, "retry"),
        ({"meaning": "x", "blame": "grader", "side": "run"}, "unknown declaration keys"),
        ({"meaning": "x", "blame": "run", "retry": True}, "run-blamed"),
    ],
)
def test_bad_declarations_are_rejected(spec, message):
    with pytest.raises(ValueError, match=message):
        declare({"DECL_BAD_ONE": spec})


def test_a_batch_is_checked_whole_before_any_is_added():
    with pytest.raises(ValueError, match="meaning"):
        declare(
            {
                "DECL_BATCH_OK": {"meaning": "fine", "blame": "grader"},
                "DECL_BATCH_BAD": {"meaning": "", "blame": "grader"},
            }
        )
    assert not codes.known("DECL_BATCH_OK")


def test_ungradable_carries_code_blame_and_pickles():
    error = Ungradable("EVIDENCE_MISSING", "no report at /logs/ctrf.json", case="a")
    again = pickle.loads(pickle.dumps(error))
    assert (again.code, again.why, again.case) == (
        "EVIDENCE_MISSING",
        "no report at /logs/ctrf.json",
        "a",
    )
    assert again.blame is Blame.RUN and again.retry is False


def test_ungradable_with_unknown_code_is_an_error():
    with pytest.raises(UnknownName):
        Ungradable("TYPO_CODE", "x")


def _make_distribution(where: Path, name: str, module: str, body: str, target: str) -> None:
    (where / f"{module}.py").write_text(textwrap.dedent(body))
    info = where / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[truereward.codes]\n{name} = {target}\n")


def test_codes_are_discovered_through_entry_points(tmp_path):
    _make_distribution(
        tmp_path,
        "demo_reader",
        "demo_reader_codes",
        """
        CODES = {"DEMO_JUDGE_ABSTAINED": {"meaning": "the judge abstained",
                                          "blame": "grader", "retry": True}}
    """,
        "demo_reader_codes:CODES",
    )
    _make_distribution(
        tmp_path,
        "broken_reader",
        "broken_reader_codes",
        """
        raise RuntimeError("cannot import")
    """,
        "broken_reader_codes:CODES",
    )
    script = textwrap.dedent("""
        import warnings
        from truereward import CaseResult
        from truereward.codes import lookup
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            row = CaseResult(id="a", kind="fail_to_pass", verdict="ungradable",
                             code="DEMO_JUDGE_ABSTAINED")
        code = lookup(row.code)
        print(code.blame.value, code.retry, any("broken_reader" in str(w.message) for w in seen))
    """)
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path), "PATH": ""},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["grader", "True", "True"]
