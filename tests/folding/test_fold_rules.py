"""Every rule of the fold (README "The rules of the fold", gated-binary/1 and fix-rate/1),
one test each."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from truereward import fold
from truereward.folding import Scheme, register, scheme_names
from truereward.util.exceptions import UnknownName


def codes_of(result):
    return [(item.code, item.case) for item in result.refusals]


# --- rule 1: rows are validated; duplicate ids ------------------------------------------


def test_invalid_row_raises_naming_index_and_field(row):
    with pytest.raises(ValidationError) as caught:
        fold([row("a"), {"id": "b", "kind": "fail_to_pass", "verdict": "passed"}])
    assert caught.value.errors()[0]["loc"][:2] == (1, "verdict")


def test_duplicate_ids_give_one_case_invalid_and_all_rows_stay(row):
    result = fold([row("a"), row("a", verdict="fail"), row("a"), row("b")])
    assert codes_of(result) == [("CASE_INVALID", "a")]
    assert result.cases.total == 4
    assert result.cases.fail_to_pass.failed == 1
    assert result.reward is None


def test_duplicate_ids_do_not_depend_on_arrival_order(row):
    first = fold([row("a"), row("a", verdict="fail")])
    second = fold([row("a", verdict="fail"), row("a")])
    assert first == second


# --- rule 2: the case set ----------------------------------------------------------------


def test_declared_case_without_row_is_cases_missing_per_case(row):
    declared = {"a": "fail_to_pass", "b": "pass_to_pass", "c": "pass_to_pass"}
    result = fold([row("a")], case_set=declared)
    assert codes_of(result) == [("CASES_MISSING", "b"), ("CASES_MISSING", "c")]
    assert not result.gradable and result.reward is None
    assert result.cases.declared == 3


def test_row_outside_case_set_is_case_invalid(row):
    result = fold([row("a"), row("zzz")], case_set={"a": "fail_to_pass"})
    assert codes_of(result) == [("CASE_INVALID", "zzz")]


def test_row_with_another_kind_than_declared_is_case_invalid(row):
    result = fold(
        [row("a", "pass_to_pass"), row("b")], case_set={"a": "fail_to_pass", "b": "fail_to_pass"}
    )
    assert codes_of(result) == [("CASE_INVALID", "a")]
    assert "declared fail_to_pass" in result.refusals[0].why


def test_case_set_as_list_of_entries(row):
    declared = [{"id": "a", "kind": "fail_to_pass"}, {"id": "b", "kind": "pass_to_pass"}]
    result = fold([row("a"), row("b", "pass_to_pass")], case_set=declared)
    assert result.gradable and result.reward == 1.0


def test_case_set_declaring_an_id_twice_is_case_invalid(row):
    declared = [{"id": "a", "kind": "fail_to_pass"}, {"id": "a", "kind": "fail_to_pass"}]
    result = fold([row("a")], case_set=declared)
    assert codes_of(result) == [("CASE_INVALID", "a")]


def test_case_set_with_unknown_kind_is_case_invalid(row):
    result = fold([row("a"), row("b")], case_set={"a": "fail_to_pass", "b": "guard"})
    assert codes_of(result) == [("CASE_INVALID", "b")]


def test_case_set_that_is_not_a_case_set_raises():
    with pytest.raises(TypeError):
        fold([], case_set="a,b")


def test_complete_case_set_is_gradable(row):
    result = fold(
        [row("a"), row("b", "pass_to_pass")], case_set={"a": "fail_to_pass", "b": "pass_to_pass"}
    )
    assert result.gradable and result.reward == 1.0


# --- rule 3: ungradable rows, given refusals, run checks ----------------------------------


def test_each_ungradable_row_gives_its_refusal(row):
    result = fold(
        [
            row("a"),
            row("b", verdict="ungradable", code="CASE_NOT_PREPARED", why="x"),
            row("c", verdict="ungradable", code="EVIDENCE_MALFORMED"),
        ]
    )
    assert codes_of(result) == [("CASE_NOT_PREPARED", "b"), ("EVIDENCE_MALFORMED", "c")]
    assert result.refusals[1].blame.value == "run"
    assert result.refusals[0].why == "x"


def test_given_refusals_are_added(row):
    result = fold([row("a")], refusals=[{"code": "GRADER_TIMEOUT", "why": "slow"}])
    assert codes_of(result) == [("GRADER_TIMEOUT", None)]
    assert result.refusals[0].blame.value == "grader"


def test_given_refusal_with_unknown_code_raises(row):
    with pytest.raises(UnknownName, match="known codes"):
        fold([row("a")], refusals=[{"code": "NOT_A_CODE", "why": ""}])


def test_failed_determinism_check_is_run_not_deterministic(row):
    answers = [{"check": "determinism", "holds": False, "why": "second run differs"}]
    result = fold(
        [
            row("a", checks=answers),
            row("b", checks=[{"check": "determinism", "holds": True, "why": ""}]),
        ]
    )
    assert codes_of(result) == [("RUN_NOT_DETERMINISTIC", None)]
    assert result.refusals[0].blame.value == "run"
    (check,) = result.checks
    assert (check.check, check.holds, check.answered) == ("determinism", False, 2)
    assert "a: second run differs" in check.why


def test_holding_checks_do_not_refuse(row):
    result = fold([row("a", checks=[{"check": "determinism", "holds": True}])])
    assert result.gradable
    assert result.checks[0].holds


def test_checks_given_beside_rows(row):
    result = fold([row("a")], checks=[{"check": "determinism", "holds": False, "why": "x"}])
    assert codes_of(result) == [("RUN_NOT_DETERMINISTIC", None)]


def test_unknown_run_check_is_a_validation_error(row):
    with pytest.raises(ValidationError, match="unknown run check"):
        fold([row("a", checks=[{"check": "flakiness", "holds": True}])])


# --- rule 4: nothing graded / no fail-to-pass ---------------------------------------------


def test_no_rows_is_nothing_graded():
    result = fold([])
    assert codes_of(result) == [("NOTHING_GRADED", None)]
    assert result.reward is None and result.case_fraction is None


def test_nothing_graded_is_not_added_when_a_refusal_explains(row):
    result = fold([row("a", verdict="ungradable", code="EVIDENCE_MISSING")])
    assert codes_of(result) == [("EVIDENCE_MISSING", "a")]


def test_nothing_graded_with_given_refusal_only():
    result = fold([], refusals=[{"code": "EVIDENCE_MISSING", "why": "no report"}])
    assert codes_of(result) == [("EVIDENCE_MISSING", None)]


def test_no_fail_to_pass_row_is_refused(row):
    result = fold([row("a", "pass_to_pass"), row("b", "pass_to_pass")])
    assert codes_of(result) == [("NO_FAIL_TO_PASS", None)]


def test_no_fail_to_pass_even_beside_other_refusals(row):
    result = fold(
        [
            row("a", "pass_to_pass"),
            row("b", "pass_to_pass", verdict="ungradable", code="CASE_NOT_GRADED"),
        ]
    )
    assert codes_of(result) == [("NO_FAIL_TO_PASS", None), ("CASE_NOT_GRADED", "b")]


def test_an_ungradable_fail_to_pass_row_counts_as_having_one(row):
    result = fold([row("a", "pass_to_pass"), row("b", verdict="ungradable")])
    assert codes_of(result) == [("CASE_NOT_GRADED", "b")]


def test_declared_fail_to_pass_counts_as_having_one(row):
    result = fold([row("a", "pass_to_pass")], case_set={"a": "pass_to_pass", "f": "fail_to_pass"})
    assert codes_of(result) == [("CASES_MISSING", "f")]


# --- rule 5: gradable, reward --------------------------------------------------------------


def test_all_pass_rewards_one(row):
    result = fold([row("a"), row("b", "pass_to_pass")])
    assert result.gradable and result.reward == 1.0
    assert type(result.reward) is float


def test_a_failing_fix_rewards_zero(row):
    result = fold([row("a"), row("b", verdict="fail"), row("g", "pass_to_pass")])
    assert result.gradable and result.reward == 0.0
    assert type(result.reward) is float


def test_a_failing_guard_rewards_zero(row):
    result = fold([row("a"), row("g", "pass_to_pass", verdict="fail")])
    assert result.reward == 0.0 and result.guards_hold is False


def test_gradable_exactly_when_no_refusal(row):
    assert fold([row("a")]).gradable
    assert not fold([row("a"), row("b", verdict="ungradable")]).gradable


def test_one_ungradable_case_removes_the_reward_and_rates_stay(row):
    result = fold(
        [row("a"), row("b", verdict="fail"), row("c", verdict="ungradable", code="CASE_NOT_GRADED")]
    )
    assert result.reward is None
    assert result.fix_rate == 0.5 and result.case_fraction == 0.5
    assert result.cases.ungradable == 1 and result.cases.graded == 2


# --- rule 6: the figures beside the reward --------------------------------------------------


def test_guards_hold_is_true_without_guards(row):
    assert fold([row("a")]).guards_hold is True


def test_fix_rate_is_not_gated_by_guards(row):
    result = fold(
        [row("a"), row("b"), row("c", verdict="fail"), row("g", "pass_to_pass", verdict="fail")]
    )
    assert result.fix_rate == pytest.approx(2 / 3)
    assert result.reward == 0.0


def test_fix_rate_is_none_without_graded_fix(row):
    result = fold([row("g", "pass_to_pass"), row("a", verdict="ungradable")])
    assert result.fix_rate is None


def test_case_fraction_and_counts(row):
    result = fold(
        [
            row("a"),
            row("b", verdict="fail"),
            row("g", "pass_to_pass"),
            row("h", "pass_to_pass", verdict="fail"),
        ]
    )
    assert result.case_fraction == 0.5
    counts = result.cases
    assert (counts.total, counts.graded, counts.passed, counts.failed) == (4, 4, 2, 2)
    assert counts.fail_to_pass.passed == 1 and counts.pass_to_pass.failed == 1


def test_failed_ids_per_kind_sorted(row):
    result = fold(
        [
            row("z", verdict="fail"),
            row("b", verdict="fail"),
            row("h", "pass_to_pass", verdict="fail"),
            row("a"),
        ]
    )
    assert result.failed.fail_to_pass == ("b", "z")
    assert result.failed.pass_to_pass == ("h",)


# --- rule 7: sorted refusals -------------------------------------------------------------


def test_refusals_sorted_by_case_code_why(row):
    result = fold(
        [
            row("b", verdict="ungradable", code="GRADER_TIMEOUT"),
            row("a", verdict="ungradable", code="CASE_NOT_GRADED", why="z"),
            row("c"),
        ],
        refusals=[{"code": "EVIDENCE_MISSING", "why": "run-level"}],
    )
    assert codes_of(result) == [
        ("EVIDENCE_MISSING", None),
        ("CASE_NOT_GRADED", "a"),
        ("GRADER_TIMEOUT", "b"),
    ]


# --- schemes ---------------------------------------------------------------------------------


def test_fix_rate_scheme_is_dense_when_guards_hold(row):
    result = fold(
        [row("a"), row("b", verdict="fail"), row("c"), row("g", "pass_to_pass")],
        scheme="fix-rate/1",
    )
    assert result.reward == pytest.approx(2 / 3)
    assert result.scheme == "fix-rate/1"


def test_fix_rate_scheme_is_zero_when_a_guard_fails(row):
    result = fold([row("a"), row("g", "pass_to_pass", verdict="fail")], scheme="fix-rate/1")
    assert result.reward == 0.0


def test_fix_rate_scheme_has_the_same_refusals(row):
    result = fold([row("g", "pass_to_pass")], scheme="fix-rate/1")
    assert codes_of(result) == [("NO_FAIL_TO_PASS", None)] and result.reward is None


def test_unknown_scheme_lists_known_ones(row):
    with pytest.raises(UnknownName, match="gated-binary/1"):
        fold([row("a")], scheme="gated-binary/9")


def test_schemes_are_registered_by_name():
    assert {"gated-binary/1", "fix-rate/1"} <= set(scheme_names())


def test_a_taken_scheme_name_cannot_be_reregistered():
    with pytest.raises(ValueError, match="already registered"):
        register(Scheme("gated-binary/1", "different", lambda tally: 0.5))


def test_scheme_names_carry_a_version():
    with pytest.raises(ValueError, match="name/version"):
        register(Scheme("unversioned", "x", lambda tally: 0.5))


def test_mean_score_averages_measured_scores_and_verdicts(row):
    result = fold(
        [
            row("a", measures={"score": 0.5}),
            row("b", verdict="fail"),
            row("c"),
            row("g", "pass_to_pass", measures={"score": 0.25}),
        ],
        scheme="mean-score/1",
    )
    assert result.reward == pytest.approx((0.5 + 0.0 + 1.0 + 0.25) / 4)


def test_mean_score_has_the_same_refusals(row):
    result = fold(
        [row("a", measures={"score": 0.9}), row("b", verdict="ungradable")], scheme="mean-score/1"
    )
    assert result.reward is None
    assert [item.code for item in result.refusals] == ["CASE_NOT_GRADED"]
