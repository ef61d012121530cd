"""Parity with ai-eval-forge 0.2.0, the real package, installed by this module.

On the corpus of ``tests/support/checks_corpus.py`` (every check type and the edge
cases of its input handling), the library and the command line agree with
ai-eval-forge per case and per check (passed, score) and on the summary;
the documented improvements differ exactly as documented; what ai-eval-forge
crashes on is a per-case error here. Random ASCII cases agree too.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.aef_reference import Reference, install
from tests.support.checks_corpus import CRASHES, IMPROVED, SAME
from truereward.checks import score_case, score_suite

#: Every test here compares with ai-eval-forge, installed by pip and run in a process of its own.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def aef(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reference]:
    reference = Reference(install(tmp_path_factory.mktemp("ai-eval-forge")))
    yield reference
    reference.close()


def check_view(check: Any) -> tuple[str, bool, bool, float, float]:
    if isinstance(check, dict):
        return (check["type"], check["required"], check["passed"], check["score"], check["min"])
    return (check.type, check.required, check.passed, check.score, check.min)


def ours_suite(cases: list[Any]) -> tuple[list[Any], dict[str, Any]]:
    result = score_suite(cases)
    return result.cases, result.summary.to_json()


def assert_same_suite(theirs: dict[str, Any], outcomes: list[Any], summary: dict[str, Any]):
    assert len(theirs["cases"]) == len(outcomes)
    for their, our in zip(theirs["cases"], outcomes, strict=True):
        label = our.id
        assert our.error is None, (label, our.error)
        assert str(their["id"]) == our.id
        assert (their["passed"], their["score"]) == (our.passed, our.score), label
        assert [check_view(c) for c in their["checks"]] == [check_view(c) for c in our.checks], (
            label
        )
    expected = dict(theirs["summary"], errors=0)
    assert summary == expected


def test_corpus_agrees_per_case_per_check_and_on_the_summary(aef):
    theirs = aef.suite(SAME)
    outcomes, summary = ours_suite(SAME)
    assert_same_suite(theirs, outcomes, summary)
    # The corpus is not trivial: both verdicts, every check type, non-zero sums.
    kinds = {check.type for outcome in outcomes for check in outcome.checks}
    assert kinds == {
        "exact",
        "contains",
        "regex",
        "token_f1",
        "json_valid",
        "json_field",
        "citation_coverage",
    }
    assert 0 < summary["passed"] < summary["total"]
    assert summary["totalCostUsd"] > 0 and summary["averageLatencyMs"] > 0


@pytest.mark.parametrize("item", IMPROVED, ids=[item["case"]["id"] for item in IMPROVED])
def test_improvements_differ_as_documented(aef, item):
    theirs = aef.case(item["case"])["ok"]["checks"][0]
    ours = score_case(item["case"]).checks[0]
    assert (theirs["passed"], theirs["score"]) == item["aef"], "ai-eval-forge changed?"
    assert (ours.passed, ours.score) == item["ours"], item["why"]
    assert item["aef"] != item["ours"] or "note" in item


@pytest.mark.parametrize(("bad", "message"), CRASHES, ids=[str(c)[:40] for c, _ in CRASHES])
def test_what_aef_crashes_on_is_a_per_case_error(aef, bad, message):
    assert "raises" in aef.case(bad)
    outcome = score_case(bad, 3)
    assert outcome.error is not None and message in outcome.error
    assert outcome.passed is False and outcome.score is None and outcome.checks == ()
    # ... and the rest of the suite is scored as ai-eval-forge scores it alone.
    outcomes, summary = ours_suite([*SAME[:5], bad, *SAME[5:10]])
    theirs = aef.suite(SAME[:10])
    kept = [o for o in outcomes if o.error is None]
    assert [(o.passed, o.score) for o in kept] == [
        (c["passed"], c["score"]) for c in theirs["cases"]
    ]
    assert summary["errors"] == 1 and summary["total"] == 11
    assert summary["averageScore"] == theirs["summary"]["averageScore"]


def write_cases(path: Path, cases: list[Any], *, array: bool) -> Path:
    if array:
        path.write_text(json.dumps(cases, indent=2))
    else:
        path.write_text("".join(json.dumps(case) + "\n" for case in cases))
    return path


def run_ours(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "truereward", "checks", *args],
        capture_output=True,
        text=True,
        input=stdin,
        check=False,
    )


@pytest.mark.parametrize("array", [False, True], ids=["jsonl", "array"])
def test_command_line_agrees(aef, tmp_path, array):
    path = write_cases(tmp_path / "cases.json", SAME, array=array)
    theirs = aef.cli("score", str(path))
    ours = run_ours("score", str(path), "--jobs", "1")
    assert theirs.returncode == ours.returncode == 1, ours.stderr
    their_report, our_report = json.loads(theirs.stdout), json.loads(ours.stdout)
    assert our_report["summary"] == dict(their_report["summary"], errors=0)
    for their, our in zip(their_report["cases"], our_report["cases"], strict=True):
        assert (str(their["id"]), their["passed"], their["score"]) == (
            our["id"],
            our["passed"],
            our["score"],
        )
        assert [check_view(c) for c in their["checks"]] == [check_view(c) for c in our["checks"]]
    # Every key ai-eval-forge writes is there (consumers keep working).
    assert set(their_report["cases"][0]) <= set(our_report["cases"][0])
    assert set(their_report["cases"][0]["checks"][0]) <= set(our_report["cases"][0]["checks"][0])
    assert set(their_report["cases"][0]["meta"]) == set(our_report["cases"][0]["meta"])


def test_command_line_exit_codes_agree(aef, tmp_path):
    passing = write_cases(tmp_path / "pass.jsonl", [SAME[0]], array=False)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    for path in (passing, empty):
        theirs, ours = aef.cli("score", str(path)), run_ours("score", str(path))
        assert theirs.returncode == ours.returncode == 0
        assert json.loads(ours.stdout)["summary"] == dict(
            json.loads(theirs.stdout)["summary"], errors=0
        )
    assert aef.cli("score", str(tmp_path / "absent.jsonl")).returncode == 2
    assert run_ours("score", str(tmp_path / "absent.jsonl")).returncode == 2


def test_a_crash_aborts_aef_but_not_us(aef, tmp_path):
    cases = [*SAME[:3], CRASHES[6][0], *SAME[3:6]]
    path = write_cases(tmp_path / "cases.jsonl", cases, array=False)
    theirs = aef.cli("score", str(path))
    assert theirs.returncode != 0 and "Traceback" in theirs.stderr and not theirs.stdout
    ours = run_ours("score", str(path))
    assert ours.returncode == 2
    report = json.loads(ours.stdout)
    assert report["summary"]["total"] == 7 and report["summary"]["errors"] == 1
    error = report["cases"][3]["error"]
    assert error["file"] == str(path) and error["line"] == 4
    assert "unknown check type" in error["message"]
    assert f"{path}:4: case unknown-type: " in ours.stderr


def test_compare_agrees(aef, tmp_path):
    baseline = write_cases(tmp_path / "base.jsonl", SAME, array=False)
    # The current run: some outputs changed, one case removed, one added.
    changed = [dict(case) for case in SAME[1:]]
    for case in changed[::7]:
        case["actual"] = "something else entirely"
    changed.append({"id": "new-case", "actual": "x", "expected": "x"})
    current = write_cases(tmp_path / "cur.jsonl", changed, array=False)
    reports = {}
    for name, path in (("base", baseline), ("cur", current)):
        report = tmp_path / f"{name}.aef.json"
        report.write_text(aef.cli("score", str(path)).stdout)
        reports[name] = report
        assert run_ours("score", str(path), "--output", str(tmp_path / f"{name}.ours.json"))
    for base, cur in (
        (reports["base"], reports["cur"]),
        (tmp_path / "base.ours.json", tmp_path / "cur.ours.json"),
    ):
        theirs = aef.cli("compare", str(base), str(cur), "--format", "json")
        ours = run_ours("compare", str(base), str(cur), "--format", "json")
        assert theirs.returncode == ours.returncode == 1
        their, our = json.loads(theirs.stdout), json.loads(ours.stdout)
        for key in ("regressions", "improvements", "score_changes"):
            assert [(d["id"], d["baseline_score"], d["current_score"]) for d in their[key]] == [
                (d["id"], d["baseline_score"], d["current_score"]) for d in our[key]
            ], key
        for key in ("unchanged", "added_ids", "removed_ids", "has_regressions"):
            assert their[key] == our[key], key
        # (cases without an id are named by position, so they move too)
        assert our["regressions"] and "default-equal" in our["removed_ids"]
        assert "new-case" in our["added_ids"]


# Random ASCII cases: no improvement applies except the threshold, whose
# effect is known exactly: a check fails in ai-eval-forge and passes here
# only when its reported score reaches min.
WORDS = ["alpha", "beta", "gamma", "delta", "Alpha", "x1", "42", "don't", "snake_case", "a"]
text = st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join)
minimum = st.one_of(
    st.sampled_from([0, 0.5, 0.65, 0.75, 1, 0.6667, 0.3333, 0.2, 0.8]),
    st.integers(0, 10_000).map(lambda units: units / 10_000),
)
json_text = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["a", "b"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner),
    max_leaves=6,
).map(json.dumps)
checks = st.one_of(
    st.builds(lambda v, m: {"type": "token_f1", "value": v, "min": m}, text, minimum),
    st.builds(lambda v, m: {"type": "exact", "value": v, "min": m}, text, minimum),
    st.builds(
        lambda v, c, m: {"type": "contains", "value": v, "caseSensitive": c, "min": m},
        st.lists(st.sampled_from(WORDS), max_size=4),
        st.booleans(),
        minimum,
    ),
    st.builds(lambda m: {"type": "json_valid", "min": m}, minimum),
    st.builds(
        lambda p, v: {"type": "json_field", "path": p, "value": v},
        st.sampled_from(["", "a", "a.b", "0", "a.0", "b.a.1"]),
        st.sampled_from([1, "a", [1], {"a": 1}, True]),
    ),
    st.builds(
        lambda r, f: {"type": "regex", "pattern": r, "flags": f},
        st.sampled_from(["alpha", "^a", r"\d+", "x1$", "(beta|gamma)"]),
        st.sampled_from(["", "i", "m", "ims"]),
    ),
    st.builds(
        lambda ids, m: {"type": "citation_coverage", "sources": ids, "min": m},
        st.lists(st.sampled_from(["s1", "s2", "doc3"]), max_size=3),
        minimum,
    ),
)
cited = st.lists(st.sampled_from(["[s1]", "(s2)", "doc3", "alpha", "beta"]), max_size=4).map(
    " ".join
)
random_case = st.builds(
    lambda actual, expected, picked, required: {
        "actual": actual,
        "expected": expected,
        "checks": [dict(check, required=r) for check, r in zip(picked, required, strict=False)],
    },
    st.one_of(text, json_text, cited),
    text,
    st.lists(checks, max_size=4),
    st.lists(st.booleans(), min_size=4, max_size=4),
)


@settings(max_examples=150)
@given(st.lists(random_case, min_size=1, max_size=4))
def test_random_ascii_cases_agree(aef, cases):
    theirs = aef.suite(cases)
    outcomes, summary = ours_suite(cases)
    for their, our in zip(theirs["cases"], outcomes, strict=True):
        assert our.error is None
        for their_check, our_check in zip(their["checks"], our.checks, strict=True):
            assert their_check["score"] == our_check.score
            reported_reaches = their_check["score"] >= their_check["min"]
            assert our_check.passed == (their_check["passed"] or reported_reaches)
        assert their["score"] == our.score
        if all(c["passed"] == o.passed for c, o in zip(their["checks"], our.checks, strict=True)):
            assert their["passed"] == our.passed
    assert summary["averageScore"] == theirs["summary"]["averageScore"]
    assert summary["total"] == theirs["summary"]["total"]


def test_reader_streams_a_json_array_like_aef_parses_it(aef, tmp_path):
    # One pretty-printed array with a BOM-less header and odd whitespace.
    text = "  \n[\n" + ",\n\n".join(json.dumps(case, indent=1) for case in SAME) + "\n]\n"
    from truereward.checks import score_file

    out = io.StringIO()
    report = score_file(io.BytesIO(text.encode()), out, file="cases.json")
    assert report.summary.to_json() == dict(aef.suite(SAME)["summary"], errors=0)


def test_library_result_is_ai_eval_forge_s_dict(aef):
    # Cases whose tags and ids are already what the report writes: the whole
    # to_json() of the suite equals ai-eval-forge's to_dict(), but for "errors".
    plain = [
        case
        for case in SAME
        if isinstance(case.get("id"), str)
        and case.get("id")
        and not isinstance(case.get("tags"), str)
        and not isinstance(case.get("checks"), dict)
    ]
    ours = score_suite(plain).to_json()
    theirs = aef.suite(plain)
    assert ours["summary"].pop("errors") == 0
    for case in ours["cases"]:
        case.pop("warnings", None)
        for check in case["checks"]:
            check.pop("detail")
    for case in theirs["cases"]:
        for check in case["checks"]:
            check.pop("detail")
    assert ours == theirs
