"""The evaluation model's values: Metric, Score, EvaluationVerdict, EvaluationReport,
Distribution."""

from __future__ import annotations

import json
import math
import sys

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import ValidationError

from truereward.evaluate import (
    Direction,
    Distribution,
    DistributionDelta,
    EvaluationReport,
    EvaluationVerdict,
    Metric,
    Score,
)
from truereward.evaluate.distribution import ValueCounts, mean_of_counts
from truereward.util.strictjson import StrictJSONError

LARGEST = sys.float_info.max

# --- Metric -------------------------------------------------------------------


def test_metric_str_is_namespace_slash_name_or_name():
    assert str(Metric(namespace="qa", name="exact")) == "qa/exact"
    assert str(Metric(name="exact")) == "exact"


def test_a_slash_in_the_namespace_is_refused():
    # Else a/b + c and a + b/c would both print "a/b/c".
    with pytest.raises(ValueError, match="must not contain '/'"):
        Metric(namespace="swe/bench", name="f1")
    with pytest.raises(ValueError, match="must not contain '/'"):
        Metric(namespace="swe", name="bench/f1")


@pytest.mark.parametrize(
    "changed",
    [
        {"namespace": "other"},
        {"name": "other"},
        {"unit": "s"},
        {"direction": "lower_is_better"},
        {"parameters": {"threshold": 0.7}},
    ],
)
def test_metric_identity_is_all_five_fields(changed):
    base = {
        "namespace": "perf",
        "name": "latency",
        "unit": "ms",
        "direction": "higher_is_better",
        "parameters": {"threshold": 0.5},
    }
    one, other = Metric(**base), Metric(**{**base, **changed})
    assert one != other
    assert len({one, other}) == 2
    assert Metric(**base) == one and hash(Metric(**base)) == hash(one)


def test_metric_parameters_compare_as_json():
    assert Metric(name="m", parameters={"a": 1, "b": [1, 2]}) == Metric(
        name="m", parameters={"b": [1, 2], "a": 1.0}
    )
    # A bool is never a number, even though True == 1 in Python.
    assert Metric(name="m", parameters={"a": True}) != Metric(name="m", parameters={"a": 1})
    assert Metric(name="m", parameters={"a": None}) != Metric(name="m", parameters={"a": 0})


def test_metric_copies_its_parameters():
    given_parameters = {"levels": [1, 2]}
    metric = Metric(name="m", parameters=given_parameters)
    given_parameters["levels"].append(3)
    assert metric.parameters == {"levels": [1, 2]}


@pytest.mark.parametrize(
    "fields",
    [
        {"name": ""},
        {"name": "a/b"},
        {"name": " a"},
        {"name": "a\n"},
        {"name": "x" * 257},
        {"name": "a", "namespace": "ns\x00"},
        {"name": "a", "direction": "sideways"},
        {"name": "a", "parameters": {"x": float("nan")}},
        {"name": "a", "extra": 1},
        {"name": 3},
    ],
)
def test_invalid_metrics_are_refused(fields):
    with pytest.raises(ValidationError):
        Metric(**fields)


def test_metric_json_leaves_out_what_was_not_given():
    assert Metric(name="m").model_dump(mode="json") == {"name": "m"}
    full = Metric(namespace="n", name="m", unit="ms", direction=Direction.LOWER_IS_BETTER)
    assert full.model_dump(mode="json") == {
        "namespace": "n",
        "name": "m",
        "unit": "ms",
        "direction": "lower_is_better",
    }


def test_metric_parameters_nest_at_most_64_deep():
    # The parameters mapping is the first level: it holds 63 more.
    deep: object = 1
    for _ in range(63):
        deep = [deep]
    assert Metric(name="m", parameters={"x": deep}).parameters["x"] == deep
    with pytest.raises(ValidationError, match="nests deeper than 64"):
        Metric(name="m", parameters={"x": [deep]})


# --- Score and EvaluationVerdict ----------------------------------------------------------


@pytest.mark.parametrize("value", [0, 0.0, 0.5, 1, 1.0])
def test_scores_in_range(value):
    score = Score(value)
    assert score == value and isinstance(score, float)


def test_negative_zero_is_zero():
    assert math.copysign(1.0, Score(-0.0)) == 1.0
    assert json.dumps(float(Score(-0.0))) == "0.0"


@pytest.mark.parametrize("value", [-0.1, 1.0000001, float("nan"), float("inf"), -math.inf, 2])
def test_scores_out_of_range_or_nan_are_refused(value):
    with pytest.raises(ValueError, match=r"NaN|in \[0, 1\]"):
        Score(value)


@pytest.mark.parametrize("value", [True, "0.5", None, [0.5]])
def test_scores_are_numbers(value):
    with pytest.raises(TypeError):
        Score(value)


def test_score_verdict_passes_at_the_threshold():
    assert Score(0.7).verdict(0.7) is EvaluationVerdict.PASS
    assert Score(0.7).verdict(Score(0.5)) is EvaluationVerdict.PASS
    assert Score(0.69999).verdict(0.7) is EvaluationVerdict.FAIL
    assert Score(0.0).verdict(0.0) is EvaluationVerdict.PASS
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        Score(0.5).verdict(1.5)


def test_verdict_decided():
    assert EvaluationVerdict.PASS.decided and EvaluationVerdict.FAIL.decided
    assert not EvaluationVerdict.UNSPECIFIED.decided


# --- EvaluationReport --------------------------------------------------------------------

M = Metric(name="m")


@pytest.mark.parametrize(
    "outcome",
    [
        {"verdict": "pass"},
        {"verdict": EvaluationVerdict.FAIL},
        {"score": 0},
        {"measurement": -3.5},
        {"feedback": "looks right"},
        {"details": [EvaluationReport(metric=M, score=1.0)]},
    ],
)
def test_a_report_with_one_outcome_is_valid(outcome):
    assert EvaluationReport(metric=M, **outcome).has_outcome


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"metadata": {"model": "x"}},
        {"feedback": "   \n\t"},
        {"verdict": "unspecified", "metadata": {"a": 1}},
        {"details": []},
    ],
)
def test_a_report_without_an_outcome_is_refused(fields):
    with pytest.raises(ValidationError, match="at least one outcome"):
        EvaluationReport(metric=M, **fields)


@pytest.mark.parametrize(
    "fields",
    [
        {"measurement": float("nan")},
        {"measurement": float("inf")},
        {"score": 1.5},
        {"score": float("nan")},
        {"score": True},
        {"measurement": True},
        {"verdict": "maybe"},
        {"verdict": "pass", "metadata": {"x": float("inf")}},
        {"verdict": "pass", "unknown": 1},
    ],
)
def test_invalid_reports_are_refused(fields):
    with pytest.raises(ValidationError):
        EvaluationReport(metric=M, **fields)


def _chain(levels: int) -> EvaluationReport:
    report = EvaluationReport(metric=M, score=0.5)
    for _ in range(levels - 1):
        report = EvaluationReport(metric=M, details=[report])
    return report


def test_reports_nest_at_most_64_deep():
    assert _chain(64).depth == 64
    with pytest.raises(ValidationError, match="at most 64"):
        EvaluationReport(metric=M, details=[_chain(64)])


def test_a_deep_report_from_json_is_refused_not_a_crash():
    text = '{"metric":{"name":"m"},"score":0.5}'
    for _ in range(200):
        text = '{"metric":{"name":"m"},"details":[' + text + "]}"
    with pytest.raises((ValidationError, StrictJSONError)):
        EvaluationReport.from_json(text)


def test_report_json_round_trip_is_strict_and_exact():
    report = EvaluationReport(
        metric=Metric(namespace="n", name="m", unit="ms", direction="lower_is_better"),
        verdict="fail",
        score=0.25,
        measurement=12,
        feedback="slow",
        metadata={"model": "x", "tries": [1, 2, {"ok": None}]},
        details=[
            EvaluationReport(metric=M, verdict="pass"),
            EvaluationReport(metric=M, feedback="n/a"),
        ],
    )
    data = report.to_json()
    assert json.loads(data)["measurement"] == 12.0
    again = EvaluationReport.from_json(data)
    assert again == report and again.to_json() == data
    assert isinstance(again.score, Score)


def test_report_json_leaves_out_unset_fields():
    assert json.loads(EvaluationReport(metric=M, measurement=1.0).to_json()) == {
        "metric": {"name": "m"},
        "measurement": 1.0,
    }


@pytest.mark.parametrize(
    "text",
    [
        '{"metric":{"name":"m"},"measurement":NaN}',
        '{"metric":{"name":"m"},"measurement":1e999}',
        '{"metric":{"name":"m"},"score":0.5,"score":0.6}',
        '{"metric":{"name":"m"}}',
        '{"metric":{"name":"m"},"verdict":"pass",}',
        "[]",
    ],
)
def test_bad_report_json_is_refused(text):
    with pytest.raises((ValidationError, StrictJSONError)):
        EvaluationReport.from_json(text)


def test_walk_visits_every_report_depth_first_in_order():
    a, b, c = Metric(name="a"), Metric(name="b"), Metric(name="c")
    tree = EvaluationReport(
        metric=a,
        details=[
            EvaluationReport(metric=b, details=[EvaluationReport(metric=c, score=1.0)]),
            EvaluationReport(metric=c, score=0),
        ],
    )
    assert [str(item.metric) for item in tree.walk()] == ["a", "b", "c", "c"]


json_scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=5)
json_values = st.recursive(
    json_scalars | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
metrics = st.builds(
    Metric,
    namespace=st.sampled_from(["", "ns", "a.b"]),
    name=st.sampled_from(["m", "score", "lat"]),
    unit=st.sampled_from(["", "ms"]),
    direction=st.sampled_from(list(Direction)),
    parameters=st.dictionaries(st.sampled_from(["k", "t"]), json_values, max_size=2),
)
reports = st.recursive(
    st.builds(
        EvaluationReport,
        metric=metrics,
        verdict=st.sampled_from(["pass", "fail"]),
        score=st.none() | st.floats(0, 1),
        measurement=st.none() | st.floats(allow_nan=False, allow_infinity=False),
        feedback=st.sampled_from(["", "ok", " "]),
        metadata=st.dictionaries(st.text(max_size=3), json_values, max_size=2),
    ),
    lambda inner: st.builds(
        EvaluationReport,
        metric=metrics,
        details=st.lists(inner, min_size=1, max_size=3),
        verdict=st.sampled_from(list(EvaluationVerdict)),
    ),
    max_leaves=6,
)


@pytest.mark.slow
@given(reports)
def test_every_valid_report_round_trips_through_strict_json(report):
    again = EvaluationReport.from_json(report.to_json())
    assert again == report
    assert again.to_json() == report.to_json()


@given(
    st.dictionaries(st.sampled_from(["metric", "verdict", "score", "details", "x"]), json_values)
)
def test_garbage_never_crashes_report_validation(value):
    # Valid or a ValidationError: never another exception.
    try:
        report = EvaluationReport.model_validate(value)
    except ValidationError:
        return
    assert report.has_outcome


# --- Distribution ---------------------------------------------------------------


def test_distribution_worked_numbers_one_to_ten():
    d = Distribution.of(range(1, 11))
    assert (d.count, d.p10, d.p50, d.p90, d.mean) == (10, 1.0, 5.0, 9.0, 5.5)
    assert (d.minimum, d.maximum) == (1.0, 10.0)


def test_distribution_p50_of_zero_and_one_is_zero():
    assert Distribution.of([0, 1]).p50 == 0.0
    assert Distribution.of([1, 0]).p50 == 0.0


def test_the_mean_of_two_copies_of_the_largest_float_is_that_float():
    assert Distribution.of([LARGEST, LARGEST]).mean == LARGEST
    assert Distribution.of([-LARGEST, -LARGEST, -LARGEST]).mean == -LARGEST
    assert Distribution.of([LARGEST, -LARGEST]).mean == 0.0


def test_nearest_rank_uses_exact_arithmetic():
    # 0.1 * 30 is 3.0000000000000004 in floating point: ceil would give 4.
    values = list(range(1, 31))
    assert Distribution.of(values).p10 == 3.0
    assert Distribution.of(range(1, 21)).p90 == 18.0


def test_an_empty_distribution_is_absent_not_zero():
    d = Distribution.of([])
    assert d.count == 0 and not d.present
    assert (d.mean, d.minimum, d.p10, d.p50, d.p90, d.maximum) == (None,) * 6
    zeros = Distribution.of([0.0, 0.0])
    assert zeros.present and zeros.mean == 0.0


@pytest.mark.parametrize("bad", [[float("nan")], [1.0, float("inf")], [True], ["1"]])
def test_distribution_refuses_non_finite_and_non_numbers(bad):
    with pytest.raises((ValueError, TypeError)):
        Distribution.of(bad)


def _nearest_rank(ordered: list[float], numerator: int, denominator: int) -> float:
    n = len(ordered)
    index = -(-numerator * n // denominator) - 1
    return ordered[max(index, 0)]


finite = st.floats(allow_nan=False, allow_infinity=False)


@given(st.lists(finite, min_size=1, max_size=60))
# Summed in this order the exact sum overflows on the way, in the other not.
@example([0.0, 0.0, 1.7976931348623155e308, -7.082991828480494e302, -1.7976931348621702e308])
# Each value times its count overflows, one to +inf and one to -inf (fsum
# then raised ValueError: the mean is now a rescaled weighted mean).
@example([-1.7976931348623157e308, -1.7976931348623157e308, 1e308, 1e308])
def test_distribution_invariants(values):
    d = Distribution.of(values)
    ordered = sorted(values)
    assert d.count == len(values)
    assert d.minimum == ordered[0] and d.maximum == ordered[-1]
    assert d.p10 == _nearest_rank(ordered, 1, 10)
    assert d.p50 == _nearest_rank(ordered, 1, 2)
    assert d.p90 == _nearest_rank(ordered, 9, 10)
    assert d.minimum <= d.p10 <= d.p50 <= d.p90 <= d.maximum
    assert d.mean is not None and math.isfinite(d.mean)
    assert d.minimum <= d.mean <= d.maximum
    assert Distribution.of(reversed(values)) == d


@given(st.lists(st.sampled_from([0.0, 0.25, 1.0]), min_size=1, max_size=40))
def test_counts_and_values_give_one_distribution(values):
    counts = ValueCounts()
    for value in values:
        counts.add(value)
    assert counts.distribution() == Distribution.of(values)
    tally: dict[float, int] = {}
    for value in values:
        tally[value] = tally.get(value, 0) + 1
    assert Distribution.from_counts(tally) == Distribution.of(values)
    assert mean_of_counts(tally) == pytest.approx(sum(values) / len(values))


@pytest.mark.parametrize(
    "fields",
    [
        {"count": 0, "mean": 0.0},
        {"count": 2, "mean": 1.0},
        {"count": 1, "mean": 5.0, "minimum": 1, "p10": 1, "p50": 1, "p90": 1, "maximum": 1},
        {"count": 3, "mean": 2.0, "minimum": 1, "p10": 3, "p50": 2, "p90": 3, "maximum": 3},
    ],
)
def test_an_inconsistent_distribution_cannot_be_built(fields):
    with pytest.raises(ValidationError):
        Distribution(**{key: float(v) if key != "count" else v for key, v in fields.items()})
    with pytest.raises(ValidationError):
        DistributionDelta(present=True)
    with pytest.raises(ValidationError):
        DistributionDelta(present=False, mean=0.0)


def test_distribution_delta_is_present_only_when_both_sides_have_values():
    some, none = Distribution.of([0.5, 1.0]), Distribution.of([])
    assert DistributionDelta.between(some, Distribution.of([1.0])) == DistributionDelta(
        present=True, mean=0.25
    )
    for baseline, candidate in ((some, none), (none, some), (none, none)):
        delta = DistributionDelta.between(baseline, candidate)
        assert not delta.present and delta.mean is None
    with pytest.raises(ArithmeticError):
        DistributionDelta.between(Distribution.of([-LARGEST]), Distribution.of([LARGEST]))
