"""Report formats: json (ai-eval-forge's shape), markdown, junit, ctrf (valid
against the official schema)."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from tests.support.markdown import HOSTILE, as_read, table_rows
from truereward.checks import score_case, score_file
from truereward.checks.formats.json_report import case_json

SCHEMA = json.loads((Path(__file__).parents[1] / "data" / "ctrf.schema.json").read_text())

CASES = [
    {"id": "pass", "actual": "a b", "expected": "a b", "latencyMs": 1500, "tags": ["x", 2]},
    {"id": "fail|pipe", "actual": "a", "checks": [{"type": "exact", "value": "b"}], "costUsd": 0.5},
    {"id": "warned", "actual": "x", "checks": [{"type": "regex", "pattern": "x", "flags": "g"}]},
    {"id": "bad", "checks": [{"type": "nope"}]},
    {"id": "ctl\x01<&>\ud800", "actual": "\x02", "expected": "\x02"},
]


def render(format: str, cases=CASES) -> tuple[str, object]:
    data = "\n".join(json.dumps(case) for case in cases) + "\n{broken\n"
    out = io.StringIO()
    report = score_file(io.BytesIO(data.encode()), out, file="suite.jsonl", format=format)
    return out.getvalue(), report


def test_json_has_ai_eval_forge_s_shape():
    text, _report = render("json")
    document = json.loads(text)
    assert set(document) == {"summary", "cases"}
    assert document["summary"] == {
        "total": 6,
        "passed": 3,
        "failed": 3,
        "passRate": 0.5,
        "averageScore": 0.75,
        "totalCostUsd": 0.5,
        "averageLatencyMs": 375,
        "errors": 2,
    }
    first = document["cases"][0]
    assert set(first) == {"id", "passed", "score", "checks", "meta"}
    assert set(first["checks"][0]) == {"type", "required", "passed", "score", "min", "detail"}
    assert first["meta"] == {"input": None, "tags": ["x", 2], "costUsd": 0.0, "latencyMs": 1500.0}
    assert document["cases"][2]["warnings"] == [
        "checks[0] (regex): flags: 'g' ignored (known: i, m, s)"
    ]
    assert document["cases"][3]["error"]["line"] == 4
    assert document["cases"][5]["error"] == {
        "file": "suite.jsonl",
        "line": 6,
        "message": "invalid JSON at line 1 column 2: "
        "Expecting property name enclosed in double quotes",
    }
    assert text.isascii()


@given(
    st.fixed_dictionaries(
        {"actual": st.text(max_size=20), "expected": st.text(max_size=20)},
        optional={
            "id": st.text(max_size=5),
            "input": st.none() | st.text(max_size=5) | st.lists(st.integers(), max_size=2),
            "tags": st.lists(st.text(max_size=3), max_size=2),
            "latencyMs": st.floats(0, 1e6),
            "costUsd": st.floats(0, 10),
        },
    )
)
def test_fast_json_lines_equal_the_model(case):
    outcome = score_case(case)
    assert json.loads(case_json(outcome, file="f", line=1)) == outcome.to_json(file="f", line=1)


def test_ctrf_is_valid_and_never_greener():
    text, _report = render("ctrf")
    document = json.loads(text)
    jsonschema.Draft7Validator(SCHEMA).validate(document)
    summary = document["results"]["summary"]
    assert (summary["tests"], summary["passed"], summary["failed"], summary["other"]) == (
        6,
        3,
        1,
        2,
    )
    tests = {test["name"]: test for test in document["results"]["tests"]}
    assert tests["bad"]["status"] == "other" and tests["bad"]["rawStatus"] == "error"
    assert tests["pass"]["duration"] == 1500 and tests["pass"]["tags"] == ["x", "2"]
    assert tests["pass"]["line"] == 1 and tests["pass"]["filePath"] == "suite.jsonl"
    assert tests["fail|pipe"]["message"] == "failed: exact (0.0 < 1.0)"
    assert document["extra"]["truereward"]["checks"]["errors"] == 2


def test_junit_counts_and_escapes():
    text, _ = render("junit")
    root = ElementTree.fromstring(text.encode())
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("6", "1", "2")
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == 6
    by_name = {case.get("name"): case for case in cases}
    assert (
        by_name["fail|pipe"].find("failure").get("message").startswith("score 0.0; failed: exact")
    )
    assert "unknown check type" in by_name["bad"].find("error").get("message")
    assert by_name["pass"].get("time") == "1.500"
    assert "ctl\ufffd<&>\ufffd" in by_name  # characters XML cannot carry are replaced
    assert "token_f1: pass score 1.0 min 0.65" in by_name["pass"].find("system-out").text


def test_markdown_summary_and_rows():
    text, _ = render("markdown")
    assert text.startswith("# Checks report\n\n- File: `suite.jsonl`\n- Total: 6\n- Passed: 3\n")
    assert "- Errors (not scored): 2\n- Pass rate: 50%\n- Average score: 0.75\n" in text
    assert "| pass | pass | 1.0 | - |" in text
    assert "| fail\\|pipe | fail | 0.0 | exact |" in text
    assert "| bad | error | - | suite.jsonl:4: checks[0] (nope): unknown check type" in text
    assert text.count("\n|") == 2 + 6


def test_markdown_rows_show_the_case_ids_as_they_are():
    text, _ = render("markdown", [{"id": name, "actual": "a", "expected": "a"} for name in HOSTILE])
    rows = table_rows(text)
    assert [row[0] for row in rows[:-1]] == [as_read(name) for name in HOSTILE]
    assert all(row[1:3] == ["pass", "1.0"] for row in rows[:-1]), rows
    assert rows[-1][:2] == ["case-4", "error"]  # the broken line render() adds


def test_empty_suite_in_every_format():
    for format in ("json", "markdown", "junit", "ctrf"):
        out = io.StringIO()
        report = score_file(io.BytesIO(b""), out, file="empty.jsonl", format=format)
        assert report.summary.total == 0
        if format == "json":
            assert json.loads(out.getvalue())["summary"]["passRate"] == 0.0
        elif format == "ctrf":
            jsonschema.Draft7Validator(SCHEMA).validate(json.loads(out.getvalue()))
        elif format == "junit":
            assert ElementTree.fromstring(out.getvalue()).get("tests") == "0"
