"""Invariants of the fold and the document, checked with hypothesis."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support import strategies as gen
from truereward import fold, grade_document

SCHEMES = st.sampled_from(["gated-binary/1", "fix-rate/1", "mean-score/1"])
maybe_case_set = st.none() | gen.case_sets


@pytest.mark.slow
@given(gen.row_lists, maybe_case_set)
def test_gated_binary_reward_is_one_zero_or_none(rows, case_set):
    result = fold(rows, case_set=case_set)
    assert result.reward in (1.0, 0.0, None)
    assert result.reward is None or type(result.reward) is float


@pytest.mark.slow
@given(gen.row_lists, maybe_case_set, SCHEMES)
def test_gradable_iff_no_refusal_and_reward_iff_gradable(rows, case_set, scheme):
    result = fold(rows, case_set=case_set, scheme=scheme)
    assert result.gradable == (not result.refusals)
    assert (result.reward is None) == (not result.gradable)
    if result.reward is not None:
        assert 0.0 <= result.reward <= 1.0 and math.isfinite(result.reward)


@pytest.mark.slow
@given(gen.row_lists, maybe_case_set, st.randoms(use_true_random=False))
def test_permuting_rows_never_changes_document_bytes(rows, case_set, random):
    shuffled = list(rows)
    random.shuffle(shuffled)
    first = grade_document(rows, case_set=case_set)
    second = grade_document(shuffled, case_set=case_set)
    assert first.to_bytes() == second.to_bytes()


@pytest.mark.slow
@given(gen.row_lists, maybe_case_set, st.randoms(use_true_random=False))
def test_permuting_case_set_and_refusals_never_changes_bytes(rows, case_set, random):
    refusals = [{"code": "GRADER_TIMEOUT", "why": "a"}, {"code": "EVIDENCE_MISSING", "why": "b"}]
    entries = [{"id": key, "kind": kind} for key, kind in (case_set or {}).items()]
    shuffled_entries, shuffled_refusals = list(entries), list(refusals)
    random.shuffle(shuffled_entries)
    random.shuffle(shuffled_refusals)
    first = grade_document(rows, case_set=entries if case_set else None, refusals=refusals)
    second = grade_document(
        rows, case_set=shuffled_entries if case_set else None, refusals=shuffled_refusals
    )
    assert first.to_bytes() == second.to_bytes()


@pytest.mark.slow
@given(gen.row_lists, maybe_case_set, gen.graded_rows(), SCHEMES)
def test_adding_a_failing_graded_row_never_raises_the_reward(rows, case_set, extra, scheme):
    failing = {**extra, "verdict": "fail"}
    before = fold(rows, case_set=case_set, scheme=scheme).reward
    after = fold([*rows, failing], case_set=case_set, scheme=scheme).reward
    if after is not None and before is not None:
        assert after <= before


@pytest.mark.slow
@given(gen.row_lists, maybe_case_set, gen.rows(verdicts=st.just("ungradable")), SCHEMES)
def test_one_ungradable_row_always_removes_the_reward(rows, case_set, extra, scheme):
    result = fold([*rows, extra], case_set=case_set, scheme=scheme)
    assert result.reward is None and not result.gradable
    assert any(item.code == extra["code"] and item.case == extra["id"] for item in result.refusals)


@pytest.mark.slow
@given(gen.row_lists, maybe_case_set)
def test_counts_add_up_and_rates_lie_in_range(rows, case_set):
    result = fold(rows, case_set=case_set)
    counts = result.cases
    assert counts.total == len(rows)
    assert counts.total == counts.graded + counts.ungradable
    assert counts.graded == counts.passed + counts.failed
    for kind in (counts.fail_to_pass, counts.pass_to_pass):
        assert kind.total == kind.graded + kind.ungradable
    for rate in (result.fix_rate, result.case_fraction):
        assert rate is None or 0.0 <= rate <= 1.0
    assert (result.case_fraction is None) == (counts.graded == 0)
    assert (result.fix_rate is None) == (counts.fail_to_pass.graded == 0)


@pytest.mark.slow
@given(gen.unique_row_lists)
def test_without_refusal_sources_gated_binary_matches_its_definition(rows):
    result = fold(rows)
    if result.gradable:
        expected = 1.0 if all(row["verdict"] == "pass" for row in rows) else 0.0
        assert result.reward == expected


@pytest.mark.slow
@given(gen.row_lists, maybe_case_set)
def test_refusals_are_sorted(rows, case_set):
    result = fold(rows, case_set=case_set)
    keys = [(item.case or "", item.code, item.why) for item in result.refusals]
    assert keys == sorted(keys)
