"""Invariants under hypothesis: no input line crashes the scorer, every score
lies in [0, 1], sums equal ``sum()``, every format renders any outcome."""

from __future__ import annotations

import io
import json
import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truereward.checks import ScoringOptions, score_case
from truereward.checks.casefile import RawCase
from truereward.checks.formats import FORMATS, Run, get_format
from truereward.checks.numbers import RunningSum, decimal_ratio, reaches_min, round4
from truereward.checks.suite import score_raw

OPTIONS = ScoringOptions(regex_timeout=0.05)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
TYPES = ["exact", "contains", "regex", "token_f1", "json_valid", "json_field", "citation_coverage"]
KEYS = [
    "type",
    "value",
    "min",
    "required",
    "pattern",
    "flags",
    "path",
    "sources",
    "caseSensitive",
    "exists",
]
check_like = st.dictionaries(
    st.sampled_from(KEYS),
    st.one_of(
        st.sampled_from(TYPES), json_values, st.sampled_from(["[a-z]+", "(", "a.b[0]", "im"])
    ),
    max_size=5,
)
CASE_KEYS = [
    "id",
    "actual",
    "output",
    "expected",
    "reference",
    "sources",
    "input",
    "tags",
    "costUsd",
    "latencyMs",
    "meta",
]
case_like = st.builds(
    lambda fields, checks: {**fields, "checks": checks} if checks is not None else fields,
    st.dictionaries(st.sampled_from(CASE_KEYS), json_values, max_size=6),
    st.none() | st.lists(check_like | json_values, max_size=4) | json_values,
)


def assert_sound(outcome) -> None:
    assert isinstance(outcome.id, str) and outcome.id
    assert isinstance(outcome.passed, bool)
    if outcome.error is not None:
        assert outcome.score is None and outcome.checks == () and not outcome.passed
        return
    assert 0.0 <= outcome.score <= 1.0
    assert outcome.checks
    for check in outcome.checks:
        assert 0.0 <= check.score <= 1.0 and math.isfinite(check.min)
        assert isinstance(check.passed, bool) and isinstance(check.detail, str)
    json.dumps(outcome.to_json(file="f", line=1), allow_nan=False)


@pytest.mark.slow
@given(case_like)
def test_no_case_crashes_the_scorer(case):
    assert_sound(score_case(case, 0, OPTIONS))


@given(json_values)
def test_no_json_value_crashes_the_scorer(value):
    assert_sound(score_case(value, 0, OPTIONS))


@given(st.text(max_size=80) | case_like.map(json.dumps))
def test_no_line_crashes_the_scorer(line):
    scored = score_raw(RawCase(1, 0, line), OPTIONS)
    assert not scored.internal, scored.outcome.error
    assert_sound(scored.outcome)


@pytest.mark.slow
@given(case_like)
def test_every_format_renders_any_outcome(case):
    scored = score_raw(RawCase(3, 0, json.dumps(case)), OPTIONS)
    for name in FORMATS:
        text = get_format(name).case(scored, Run("f.jsonl"))
        assert isinstance(text, str) and text
        if name in ("json", "ctrf"):
            json.loads(text)
        text.encode("utf-8")  # no lone surrogate reaches a UTF-8 output


@given(st.lists(st.floats(0, 1e6) | st.floats(0, 1).map(round4), max_size=60), st.integers(1, 7))
def test_running_sum_is_sum(values, step):
    total = RunningSum()
    for start in range(0, len(values), step):
        total.extend(values[start : start + step])
    assert total.value == sum(values)


@given(st.integers(0, 100), st.integers(1, 100), st.integers(0, 10_000).map(lambda u: u / 10_000))
def test_judge_is_exact_or_reported(num, den, minimum):
    num = min(num, den)
    value = num / den
    expected = Fraction(num, den) >= Fraction(repr(minimum)) or Fraction(
        repr(round4(value))
    ) >= Fraction(repr(minimum))
    assert reaches_min(value, (num, den), decimal_ratio(minimum)) == (expected, round4(value))


def test_report_of_a_garbage_file_is_still_json():
    from truereward.checks import score_file

    garbage = b"\x00\xff{\n[\n]\n" + "é\u2028\n".encode() + b'{"id": 1e999}\n'
    out = io.StringIO()
    report = score_file(io.BytesIO(garbage), out, file="g")
    document = json.loads(out.getvalue())
    assert document["summary"]["total"] == report.summary.total == report.summary.errors == 5
