"""Scoring one case: the check types, required/min, the pass rule, the case
score, warnings, and the registry."""

from __future__ import annotations

import pytest

from truereward.checks import (
    BadCheck,
    CheckType,
    Measurement,
    check_names,
    get_check,
    register,
    registry,
    score_case,
)
from truereward.checks.spec import DEFAULT_CHECK


def scored(actual="", *checks, **extra):
    case = {"id": "c", "actual": actual, **extra}
    if checks:
        case["checks"] = list(checks)
    outcome = score_case(case)
    assert outcome.error is None, outcome.error
    return outcome


def test_registry_has_the_seven_types():
    assert check_names() == [
        "citation_coverage",
        "contains",
        "exact",
        "json_field",
        "json_valid",
        "regex",
        "token_f1",
    ]
    assert get_check("nope") is None


def test_a_new_check_type_is_one_registration(monkeypatch):
    check_names()  # the built-in types are loaded
    monkeypatch.setattr(
        registry._TYPES, "_items", dict(registry._TYPES._items)
    )  # undone after the test

    def parse(check, case, warn):
        if "n" not in check:
            raise BadCheck("n: missing")
        return {"n": check["n"]}

    def measure(params, context):
        hit = len(context.actual) == params["n"]
        return Measurement(float(hit), (int(hit), 1), f"length {len(context.actual)}")

    length = register(CheckType("length_is_test", "output length", parse, measure))
    assert register(length) is length  # the same again: a no-op
    with pytest.raises(ValueError, match="already registered"):
        register(CheckType("length_is_test", "other", parse, measure))
    outcome = scored("abc", {"type": "length_is_test", "n": 3})
    assert (outcome.passed, outcome.checks[0].detail, outcome.checks[0].params) == (
        True,
        "length 3",
        {"n": 3},
    )
    assert "n: missing" in score_case({"checks": [{"type": "length_is_test"}]}).error


def test_default_check_is_token_f1_min_065():
    assert DEFAULT_CHECK == {"type": "token_f1", "min": 0.65}
    # 2 of 3 tokens shared both ways: F1 = 2/3 (0.6667) >= 0.65
    outcome = scored("a b c", expected="a b d")
    (check,) = outcome.checks
    assert (check.type, check.min, check.required, check.score) == ("token_f1", 0.65, True, 0.6667)
    assert outcome.passed and outcome.score == 0.6667
    # 1 of 2: F1 = 0.5 < 0.65
    assert not scored("a b", expected="a c").passed


def test_token_f1_formula():
    # 3 tokens shared of 4 and 6: p = 3/4, r = 1/2, F1 = 2pr/(p+r) = 0.6
    check = scored("a b c d", {"type": "token_f1", "value": "a b c x y z", "min": 0.6}).checks[0]
    assert (check.score, check.passed, check.detail) == (0.6, True, "token_f1=0.6")
    # repeated tokens count as often as both sides have them: 2 shared of 4 and 4
    assert scored("a a a b", {"type": "token_f1", "value": "a b b b"}).checks[0].score == 0.5
    assert scored("", {"type": "token_f1", "value": ""}).checks[0].score == 1.0
    assert scored("x", {"type": "token_f1", "value": ""}).checks[0].score == 0.0
    assert scored("x", {"type": "token_f1", "value": "y"}).checks[0].score == 0.0


def test_exact():
    assert scored(" Hello \n World", {"type": "exact"}, expected="hello world").passed
    assert not scored("hello", {"type": "exact"}, expected="hello world").passed
    assert scored("42", {"type": "exact", "value": 42}).passed
    assert not scored("1", {"type": "exact", "value": 1.0}).passed  # its JSON is "1.0"
    assert scored("null", {"type": "exact", "value": None}).passed


def test_contains():
    check = scored("alpha beta", {"type": "contains", "value": ["ALPHA", "gamma", "beta"]}).checks[
        0
    ]
    assert (check.score, check.detail, check.passed) == (0.6667, "2/3 substrings found", False)
    assert scored("Alpha", {"type": "contains", "value": "alpha"}).passed
    assert not scored("Alpha", {"type": "contains", "value": "alpha", "caseSensitive": True}).passed
    assert scored("see the answer", {"type": "contains"}, expected="Answer").passed
    assert scored("x", {"type": "contains", "value": []}).checks[0].score == 1.0
    outcome = scored("None True", {"type": "contains", "value": [None, True]})
    assert outcome.passed and len(outcome.warnings) == 2


def test_regex():
    assert scored("Order 12", {"type": "regex", "pattern": r"order \d+"}).passed  # "i" default
    assert not scored("Order 12", {"type": "regex", "pattern": "order", "flags": ""}).passed
    assert scored("a\nb", {"type": "regex", "pattern": "^b", "flags": "m"}).passed
    assert scored("a\nb", {"type": "regex", "pattern": "a.b", "flags": "s"}).passed
    assert (
        scored("v1", {"type": "regex", "value": r"v\d"}).checks[0].detail == "matched at offset 0"
    )
    outcome = scored("abc", {"type": "regex", "pattern": "B", "flags": "gi"})
    assert outcome.passed and outcome.warnings == (
        "checks[0] (regex): flags: 'g' ignored (known: i, m, s)",
    )
    assert outcome.checks[0].params == {"pattern": "B", "flags": "i"}


def test_json_valid():
    assert scored('{"a": [1]}', {"type": "json_valid"}).passed
    check = scored("{a: 1}", {"type": "json_valid"}).checks[0]
    assert not check.passed and "line 1 column 2" in check.detail
    assert not scored("NaN", {"type": "json_valid"}).passed


def test_json_field_equality_is_ai_eval_forge_s():
    doc = '{"n": 1, "f": 1.0, "t": true, "o": {"b": 1, "a": 2}}'
    assert scored(doc, {"type": "json_field", "path": "n", "value": 1}).passed
    assert not scored(doc, {"type": "json_field", "path": "n", "value": 1.0}).passed
    assert not scored(doc, {"type": "json_field", "path": "t", "value": 1}).passed
    assert scored(doc, {"type": "json_field", "path": "o", "value": {"a": 2, "b": 1}}).passed
    check = scored(doc, {"type": "json_field", "path": "o.a", "value": 3}).checks[0]
    assert check.detail == "o.a=2"


def test_citation_coverage():
    case_sources = [{"id": "s1"}, {"id": "s2"}, "s3", {"id": ""}]
    check = scored("[s1] (s3)", {"type": "citation_coverage"}, sources=case_sources).checks[0]
    assert (check.score, check.passed) == (0.6667, False)
    own = {"type": "citation_coverage", "sources": ["k"], "min": 0.5}
    assert scored("[k]", own, sources=["zz"]).passed  # the check's sources come first
    assert scored("no sources", {"type": "citation_coverage"}).checks[0].score == 1.0


def test_pass_rule_and_score():
    # required checks decide; the score is the mean of every check's score
    outcome = scored(
        "a",
        {"type": "exact", "value": "a"},
        {"type": "exact", "value": "b", "required": False},
        {"type": "contains", "value": ["a", "z"], "required": False},
    )
    assert outcome.passed
    assert outcome.score == 0.5  # (1 + 0 + 0.5) / 3
    # every check optional: every check must pass
    optional = {"type": "exact", "value": "b", "required": False}
    assert not scored("a", optional, {"type": "json_valid", "required": False}).passed
    # "required": 0 keeps the check required (only false makes it optional)
    outcome = scored(
        "a",
        {"type": "exact", "value": "b", "required": 0},
        {"type": "json_valid", "required": False},
    )
    assert not outcome.passed
    assert "required 0 is not a boolean" in outcome.warnings[0]


def test_case_score_mean_is_rounded_like_ai_eval_forge():
    # (0.3333 + 0 + 1) / 3 = 0.44443... -> 0.4444
    outcome = scored(
        "[a]",
        {"type": "citation_coverage", "sources": ["a", "b", "c"], "min": 0},
        {"type": "json_valid", "required": False, "min": 0},
        {"type": "regex", "pattern": "a"},
    )
    assert [check.score for check in outcome.checks] == [0.3333, 0.0, 1.0]
    assert outcome.score == 0.4444


@pytest.mark.parametrize(
    ("check", "warning"),
    [
        ({}, "no type; token_f1 assumed, with min 1"),
        ({"type": ""}, "type '' is empty; token_f1 assumed"),
        ({"type": "exact", "min": "0.5"}, "min '0.5' is a string; read as 0.5"),
        ({"type": "exact", "min": True}, "min True is a boolean; read as 1.0"),
        ({"type": "exact", "min": 2}, "min 2.0 is above 1: the check can never pass"),
        ({"type": "exact", "min": -1}, "min -1.0 is below 0: the check always passes"),
        ({"type": "contains", "caseSensitive": "false"}, "caseSensitive 'false' is not a boolean"),
        ({"type": "json_field", "path": "a..b", "value": 1}, "has empty segments; read as 'a.b'"),
        ({"type": "json_field", "path": 5, "value": 1}, "path 5 is not a string; read as '5'"),
        ({"type": "citation_coverage", "sources": "ab"}, "each of its characters is read as an id"),
        ({"type": "citation_coverage", "sources": [{"x": 1}]}, "has no id"),
    ],
)
def test_tolerated_inputs_keep_their_meaning_and_warn(check, warning):
    outcome = score_case({"id": "w", "actual": "a", "checks": [check]})
    assert outcome.error is None
    assert any(warning in text for text in outcome.warnings), outcome.warnings


def test_case_fields():
    outcome = score_case(
        {"actual": "x", "tags": "smoke", "meta": {"costUsd": "0.5", "latencyMs": 20}}, index=7
    )
    assert outcome.id == "case-7"
    assert outcome.meta.tags == ("smoke",)
    assert (outcome.meta.cost_usd, outcome.meta.latency_ms) == (0.5, 20.0)
    assert score_case({"id": 12, "actual": "x"}).id == "12"
    assert score_case({"id": "", "actual": "x"}, 3).id == "case-3"
    both = score_case({"actual": "x", "costUsd": 1, "meta": {"costUsd": 9}})
    assert both.meta.cost_usd == 1.0
    assert score_case({"actual": None, "expected": "null"}).passed  # null is the text "null"
    assert score_case({"output": "a b", "reference": "a b"}).passed


def test_every_bad_check_is_named():
    outcome = score_case(
        {
            "id": "bad",
            "checks": [{"type": "exact"}, {"type": "nope"}, {"type": "exact", "min": None}],
        }
    )
    assert outcome.error.startswith(
        "checks[1] (nope): unknown check type 'nope' (known: citation_coverage, contains, exact,"
    )
    assert "checks[2] (exact): min: a number, got None" in outcome.error
    assert (outcome.passed, outcome.score, outcome.checks) == (False, None, ())


def test_params_are_kept_for_reports():
    outcome = scored(
        "x",
        {"type": "contains", "value": ["x"], "caseSensitive": True},
        {"type": "json_field", "path": "a[0]", "exists": True},
        {"type": "citation_coverage", "min": 0.5},
        sources=[{"id": "s"}],
    )
    assert [check.params for check in outcome.checks] == [
        {"caseSensitive": True, "value": ["x"]},
        {"path": "a[0]", "exists": True},
        {"sources": ["s"]},
    ]


def test_every_check_result_can_become_an_evaluation_report():
    from truereward.evaluate import EvaluationReport, Metric

    outcome = scored(
        '{"a": [1, {"b": null}]}',
        {"type": "exact", "value": {"x": 1}},
        {"type": "contains", "value": ["a", 1]},
        {"type": "regex", "pattern": "a", "flags": "gim"},
        {"type": "token_f1", "min": 0.5},
        {"type": "json_valid"},
        {"type": "json_field", "path": "a[1].b", "value": None},
        {"type": "citation_coverage", "sources": [{"id": "s1"}, 2]},
        expected="a b",
    )
    for check in outcome.checks:
        metric = Metric(namespace="checks", name=check.type, parameters=dict(check.params))
        report = EvaluationReport(
            metric=metric,
            verdict="pass" if check.passed else "fail",
            score=check.score,
            feedback=check.detail,
        )
        assert str(report.metric) == f"checks/{check.type}"
        assert check.report() == report
    case = outcome.report()
    assert (str(case.metric), case.verdict.to_row(), case.score) == (
        "checks/case",
        "pass" if outcome.passed else "fail",
        outcome.score,
    )
    assert case.details == [check.report() for check in outcome.checks]
