"""The improvements over ai-eval-forge, one by one, with the worked examples
of docs/checks.md (test_checks_parity.py shows ai-eval-forge's answers)."""

from __future__ import annotations

import io
import json
import time

import pytest

from truereward.checks import ScoringOptions, score_case, score_file
from truereward.checks.text import normalize, tokens


def first(case, **options):
    outcome = score_case(case, 0, ScoringOptions(**options))
    assert outcome.error is None, outcome.error
    return outcome.checks[0]


# Unicode-aware tokens and text.


def test_tokens_are_unicode_words():
    assert tokens("Café crème, naïve!") == ["café", "crème", "naïve"]
    assert tokens("Καλημέρα ΚΌΣΜΕ") == ["καλημέρα", "κόσμε"]
    assert tokens("नमस्ते दुनिया") == ["नमस्ते", "दुनिया"]  # combining vowel signs stay
    assert tokens("東京は晴れ") == ["東", "京", "は", "晴", "れ"]
    assert tokens("ｶﾀｶﾅ ＡＢＣ１２") == ["カ", "タ", "カ", "ナ", "abc12"]
    assert tokens("Don't stop_now 42x") == ["don", "t", "stop", "now", "42x"]


def test_tokens_fold_case_the_unicode_way():
    assert tokens("STRASSE") == tokens("straße") == ["strasse"]
    assert tokens("ﬁnal") == ["final"]


def test_token_f1_on_accented_words():
    # ai-eval-forge: "café" is the token "caf", so this scored 1.0
    assert first({"actual": "café", "expected": "caf", "checks": [{"type": "token_f1"}]}).score == 0
    check = first({"actual": "Café au lait", "expected": "CAFÉ AU LAIT"})
    assert (check.passed, check.score) == (True, 1.0)


def test_token_f1_on_greek_is_measured():
    # ai-eval-forge finds no token in either text: both empty, F1 1.0
    check = first({"actual": "Καλημέρα", "expected": "κόσμε"})
    assert (check.passed, check.score) == (False, 0.0)


def test_exact_folds_and_normalises():
    for actual, expected in (("Straße", "STRASSE"), ("ＡＢＣ １２３", "abc 123"), ("ﬁne", "FINE")):
        assert normalize(actual) == normalize(expected)
        check = first({"actual": actual, "expected": expected, "checks": [{"type": "exact"}]})
        assert check.passed
    assert normalize("  A\u00a0\u2003b\n") == "a b"


# A regex engine with a time bound.


def test_catastrophic_pattern_gives_up_in_bounded_time_and_is_not_scored():
    case = {
        "actual": "a" * 5000 + "!",
        "checks": [{"type": "regex", "pattern": "(a|aa)+$", "flags": ""}, {"type": "json_valid"}],
    }
    started = time.monotonic()
    outcome = score_case(case, 0, ScoringOptions(regex_timeout=0.2))
    elapsed = time.monotonic() - started
    assert elapsed < 5, elapsed  # the bound is 0.2 s; ai-eval-forge does not return
    # Not a failed check: the case is an error of the grader's bound, without a score.
    assert outcome.gave_up and outcome.errored
    assert (outcome.passed, outcome.score, outcome.checks) == (False, None, ())
    assert outcome.error.startswith("checks[0] (regex): gave up: the search ran out of its 0.2 s")
    assert "catastrophic backtracking" in outcome.error
    assert "bounds: 0.2 s per regex search, 5 s per case" in outcome.error
    assert outcome.to_json()["error"]["code"] == "CHECK_GAVE_UP"


def test_regex_syntax_is_python_re():
    # the regex package alone would accept these; ai-eval-forge (re) refuses them
    for pattern in (r"\p{L}", "(?<n>a)", "x(?i)y"):
        outcome = score_case({"actual": "a", "checks": [{"type": "regex", "pattern": pattern}]})
        assert outcome.error is not None and "not a valid regular expression" in outcome.error


@pytest.mark.parametrize(
    ("pattern", "text", "score"),
    [
        # re reads [[:alpha:]] as the set "[:alph" then "]"; the regex package
        # alone would read a POSIX class. The answers are re's (and ai-eval-forge's).
        ("[[:alpha:]]", "x", 0),
        ("^[[:alpha:]]$", "a]", 1),
        ("[^[:digit:]]]", "1]", 0),
        (r"[\[:a]]", ":]", 1),
        ("[]:[]", "[", 1),
    ],
)
def test_brackets_inside_a_set_mean_what_re_says(pattern, text, score):
    import re

    check = first({"actual": text, "checks": [{"type": "regex", "pattern": pattern}]})
    assert check.score == score == int(bool(re.search(pattern, text, re.IGNORECASE)))


# json_field: missing is not null, a.b[0] paths, exists.

DOC = json.dumps({"a": {"b": [10, {"c": None}]}, "n": None, "k[0]": "literal"})


def field(**params):
    return first({"actual": DOC, "checks": [{"type": "json_field", **params}]})


def test_missing_path_is_not_null():
    assert not field(path="a.zzz", value=None).passed
    assert "a.zzz is missing" in field(path="a.zzz", value=None).detail
    assert not field(path="n.deeper", value=None).passed  # through null
    assert field(path="n", value=None).passed  # present and null
    assert field(path="a.b.1.c", value=None).passed


def test_no_value_means_null_and_warns():
    outcome = score_case({"actual": DOC, "checks": [{"type": "json_field", "path": "n"}]})
    assert outcome.checks[0].passed
    assert any("use exists: true" in warning for warning in outcome.warnings)


def test_output_that_is_not_json_is_not_null():
    check = first({"actual": "sorry, no", "checks": [{"type": "json_field", "value": None}]})
    assert not check.passed and check.detail.startswith("output is not JSON")


def test_bracket_and_dot_paths():
    assert field(path="a.b[0]", value=10).passed
    assert field(path="a.b.0", value=10).passed
    assert field(path="a.b[1].c", value=None).passed
    assert field(path="a.b[-1].c", value=None).passed
    assert field(path="a.b[2]", exists=False).passed
    assert field(path="k[0]", value="literal").passed  # a key with brackets is still found
    matrix = first(
        {
            "actual": "[[1, 2], [3, 4]]",
            "checks": [{"type": "json_field", "path": "[1][0]", "value": 3}],
        }
    )
    assert matrix.passed


def test_exists():
    assert field(path="n", exists=True).passed
    assert field(path="a.b", exists=True, value=[10, {"c": None}]).passed
    assert not field(path="a.b", exists=True, value=[10]).passed
    assert not field(path="nope", exists=True).passed
    assert field(path="nope", exists=False).passed
    assert not field(path="n", exists=False).passed


@pytest.mark.parametrize(
    "bad", [{"exists": "yes"}, {"exists": False, "value": 1}], ids=["not-bool", "contradiction"]
)
def test_bad_exists_is_a_case_error(bad):
    outcome = score_case({"actual": DOC, "checks": [{"type": "json_field", "path": "n", **bad}]})
    assert outcome.error is not None and "exists" in outcome.error


# Citations as whole ids.


@pytest.mark.parametrize(
    ("text", "cited"),
    [
        ("see [src1]", True),
        ("see (src1).", True),
        ("src1, src2", True),
        ("see [src10]", False),
        ("see xsrc1", False),
        ("src1_v2", False),
        ("src1-b", True),
        ("src1\u0301", False),  # a combining mark continues the word
    ],
)
def test_citation_ids_match_whole(text, cited):
    check = first({"actual": text, "sources": ["src1"], "checks": [{"type": "citation_coverage"}]})
    assert check.passed is cited


def test_ids_that_start_or_end_with_punctuation():
    case = {
        "actual": "per#3 and x[1]y",
        "sources": ["#3", "[1]"],
        "checks": [{"type": "citation_coverage"}],
    }
    assert first(case).score == 1.0


def test_citation_detail_names_what_is_missing():
    case = {"actual": "[a]", "sources": ["a", "b", "c"], "checks": [{"type": "citation_coverage"}]}
    check = first(case)
    assert check.score == 0.3333 and check.detail == "citation_coverage=0.3333 (not cited: b, c)"


# Thresholds without float artefacts.


def test_f1_of_three_quarters_passes_min_three_quarters():
    # 3 shared tokens of 3 and 5: F1 = 6/8 = 0.75, computed as 0.7499999999999999
    case = {
        "actual": "the cat sat",
        "expected": "the cat sat on mat",
        "checks": [{"type": "token_f1", "min": 0.75}],
    }
    check = first(case)
    assert (check.score, check.passed) == (0.75, True)


def test_a_score_that_prints_min_passes_min():
    case = {"actual": "a b", "expected": "a", "checks": [{"type": "token_f1", "min": 0.6667}]}
    assert first(case).passed  # 2/3, shown 0.6667
    case["checks"][0]["min"] = 0.6668
    assert not first(case).passed


def test_min_is_read_as_written():
    # contains 7 of 10 = 0.7 exactly; the float 0.7 is just below 7/10
    case = {
        "actual": "a b c d e f g",
        "checks": [{"type": "contains", "value": list("abcdefgxyz"), "min": 0.7}],
    }
    assert first(case).passed
    case["checks"][0]["min"] = "0.70001"
    assert not first(case).passed


# Per-case errors with file and line; the rest is scored.


def test_bad_lines_and_checks_are_per_case_errors():
    lines = [
        json.dumps({"id": "ok", "actual": "a", "expected": "a"}),
        "{not json",
        json.dumps({"id": "bad-check", "checks": [{"type": "regex", "pattern": "("}]}),
        json.dumps({"id": "nan", "actual": "a", "costUsd": 1}).replace("1}", "NaN}"),
        json.dumps({"id": "dup", "actual": "a"}).replace("}", ', "id": "again"}'),
        json.dumps({"id": "ok2", "actual": "b", "expected": "b"}),
        '{"id": "huge", "actual": "a", "costUsd": ' + "9" * 5000 + "}",
    ]
    out = io.StringIO()
    report = score_file(io.BytesIO("\n".join(lines).encode()), out, file="cases.jsonl")
    assert (report.summary.total, report.summary.passed, report.summary.errors) == (7, 2, 5)
    assert report.summary.average_score == 1.0  # over the scored cases only
    document = json.loads(out.getvalue())
    errors = {case["id"]: case["error"] for case in document["cases"] if "error" in case}
    assert set(errors) == {"case-1", "bad-check", "case-3", "case-4", "case-6"}
    assert "a number too long to read" in errors["case-6"]["message"]
    assert errors["case-1"]["line"] == 2 and errors["case-1"]["file"] == "cases.jsonl"
    assert "invalid JSON" in errors["case-1"]["message"]
    assert "not a valid regular expression" in errors["bad-check"]["message"]
    assert "NaN is not a JSON number" in errors["case-3"]["message"]
    assert "duplicate key 'id'" in errors["case-4"]["message"]
    assert report.errors[0] == "cases.jsonl:2: case case-1: invalid JSON at line 1 column 2: " + (
        "Expecting property name enclosed in double quotes"
    )
    assert all(case["score"] is None for case in document["cases"] if "error" in case)
