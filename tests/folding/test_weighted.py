"""Weighted schemes and named reward dimensions: their arithmetic (as
rewardkit's, where it is sound), the refusals every scheme keeps, the task
spec's ``scoring``, grade.json version 4, and the files published beside
it (``reward.json`` with the dimensions a task asks for,
``reward-details.json`` in rewardkit's shape), locally and on S3."""

from __future__ import annotations

import json
import math
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import truereward as tr
from tests.conftest import ROOT
from truereward.folding import fold, scheme_names
from truereward.grade.document import GradeDocument
from truereward.grade.files import render as render_files
from truereward.grade.readback import verify_document
from truereward.record.taskspec import TaskSpec, TaskSpecError
from truereward.verify import verify_published, verify_target

WEIGHING = (
    "weighted-mean/1",
    "weighted-sum/1",
    "all-pass/1",
    "any-pass/1",
    "required-pass/1",
    "threshold/1",
)
IDS = [f"c{index}" for index in range(6)]

unit = st.floats(0.0, 1.0, allow_nan=False)
weight = st.floats(0.01, 100.0, allow_nan=False)


@st.composite
def scored_cases(draw: Any, min_size: int = 1) -> list[dict[str, Any]]:
    """Graded cases, each with a verdict, maybe a score, a weight and a
    required flag."""
    count = draw(st.integers(min_size, len(IDS)))
    cases = []
    for case_id in IDS[:count]:
        verdict = draw(st.sampled_from(["pass", "fail"]))
        score = draw(st.one_of(st.none(), unit))
        cases.append(
            {
                "id": case_id,
                "verdict": verdict,
                "score": score,
                "weight": draw(weight),
                "required": draw(st.booleans()),
            }
        )
    return cases


def rows_of(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for case in cases:
        row: dict[str, Any] = {"id": case["id"], "kind": "fail_to_pass", "verdict": case["verdict"]}
        if case.get("code"):
            row["code"] = case["code"]
        if case.get("score") is not None:
            row["measures"] = {"score": case["score"]}
        out.append(row)
    return out


def spec_of(cases: list[dict[str, Any]], **scoring: Any) -> TaskSpec:
    return TaskSpec.of(
        {
            "cases": [
                {
                    "id": case["id"],
                    "kind": "fail_to_pass",
                    "weight": case["weight"],
                    "required": case["required"],
                }
                for case in cases
            ],
            **({"scoring": scoring} if scoring else {}),
        }
    )


def value(case: dict[str, Any]) -> float:
    if case["score"] is not None:
        return float(case["score"])
    return 1.0 if case["verdict"] == "pass" else 0.0


def within_ulps(found: float | None, exact: float, ulps: int = 4) -> bool:
    """``found`` lies within a few units in the last place of ``exact``."""
    return found is not None and abs(found - exact) <= ulps * math.ulp(
        max(abs(exact), sys.float_info.min)
    )


def exact_mean(cases: list[dict[str, Any]]) -> float:
    """The weighted mean in exact arithmetic, rounded once."""
    weights = sum((Fraction(case["weight"]) for case in cases), Fraction(0))
    products = sum(
        (Fraction(value(case)) * Fraction(case["weight"]) for case in cases), Fraction(0)
    )
    return float(products / weights)


# --- properties ------------------------------------------------------------------------------


@pytest.mark.slow
@given(scored_cases(), st.integers(-1080, 1010))
@example(  # float products would underflow: 0.5 and 1.0, not 0.75
    [
        {"id": "c0", "verdict": "pass", "score": 0.5, "weight": 1.0, "required": True},
        {"id": "c1", "verdict": "pass", "score": None, "weight": 1.0, "required": True},
    ],
    -1074,
)
def test_scaling_every_weight_by_a_power_of_two_changes_no_weighted_mean(
    cases: list[dict[str, Any]], exponent: int
):
    # Tiny and huge weights alike (down to the smallest subnormal, up to
    # 2**1017): the reward is the float mean where floats hold it (the bits
    # published grades hold), else the exact mean, never a mean whose
    # products underflowed or whose sums overflowed.
    scaled = [{**case, "weight": math.ldexp(case["weight"], exponent)} for case in cases]
    assume(any(case["weight"] > 0 for case in scaled))
    first = fold(rows_of(cases), case_set=spec_of(cases), scheme="weighted-mean/1")
    second = fold(rows_of(scaled), case_set=spec_of(scaled), scheme="weighted-mean/1")
    assert first.gradable and second.gradable
    assert within_ulps(first.reward, exact_mean(cases))
    assert within_ulps(second.reward, exact_mean(scaled))
    if all(case["weight"] >= sys.float_info.min for case in scaled):  # scaled without loss
        assert second.reward in (first.reward, exact_mean(cases))


@given(scored_cases())
def test_the_pass_schemes_count_verdicts(cases: list[dict[str, Any]]) -> None:
    spec = spec_of(cases)
    rows = rows_of(cases)
    passed = [case["verdict"] == "pass" for case in cases]
    required = [case["verdict"] == "pass" for case in cases if case["required"]]
    assert fold(rows, case_set=spec, scheme="all-pass/1").reward == (1.0 if all(passed) else 0.0)
    assert fold(rows, case_set=spec, scheme="any-pass/1").reward == (1.0 if any(passed) else 0.0)
    pass_required = fold(rows, case_set=spec, scheme="required-pass/1")
    if required:
        assert pass_required.reward == (1.0 if all(required) else 0.0)
    else:  # nothing required: rewardkit scores 0.0, we refuse
        assert pass_required.codes == ["CASE_INVALID"] and pass_required.reward is None


@given(scored_cases(), unit)
def test_threshold_is_the_weighted_mean_reaching_it(cases: list[dict[str, Any]], bar: float):
    folded = fold(rows_of(cases), case_set=spec_of(cases, threshold=bar), scheme="threshold/1")
    mean = exact_mean(cases)
    assert folded.reward == (1.0 if mean >= bar else 0.0) or within_ulps(bar, mean)


@pytest.mark.slow
@given(scored_cases(), st.data())
def test_weighted_sum_takes_negative_weights(cases: list[dict[str, Any]], data: Any) -> None:
    signs = data.draw(st.lists(st.sampled_from([1, -1]), min_size=len(cases), max_size=len(cases)))
    signed = [
        {**case, "weight": case["weight"] * sign} for case, sign in zip(cases, signs, strict=True)
    ]
    total = fold(rows_of(signed), case_set=spec_of(signed), scheme="weighted-sum/1")
    exact = sum((Fraction(value(c)) * Fraction(c["weight"]) for c in signed), Fraction(0))
    scale = math.fsum(abs(value(c) * c["weight"]) for c in signed)  # cancellation's error
    assert total.reward is not None
    assert abs(total.reward - float(exact)) <= 4 * math.ulp(max(scale, sys.float_info.min))
    if any(sign < 0 for sign in signs):
        mean = fold(rows_of(signed), case_set=spec_of(signed), scheme="weighted-mean/1")
        assert mean.codes == ["CASE_INVALID"] and "negative weight" in mean.refusals[0].why


@given(scored_cases(min_size=2), st.data())
@settings(max_examples=60)
def test_any_ungradable_case_means_no_reward_under_every_scheme(
    cases: list[dict[str, Any]], data: Any
):
    broken = data.draw(st.integers(0, len(cases) - 1))
    cases = [
        {**case, "verdict": "ungradable", "code": "GRADER_TIMEOUT", "score": None}
        if index == broken
        else case
        for index, case in enumerate(cases)
    ]
    spec = spec_of(cases)
    for scheme in scheme_names():
        folded = fold(rows_of(cases), case_set=spec, scheme=scheme)
        assert not folded.gradable and folded.reward is None, scheme
        assert "GRADER_TIMEOUT" in folded.codes
    dimensions = TaskSpec.of(
        {
            "cases": [{"id": case["id"], "kind": "fail_to_pass"} for case in cases],
            "scoring": {
                "dimensions": [
                    {"name": "left", "scheme": "all-pass/1", "cases": [cases[0]["id"]]},
                    {
                        "name": "reward",
                        "scheme": "weighted-mean/1",
                        "cases": [case["id"] for case in cases[1:]],
                        "dimensions": ["left"],
                    },
                ]
            },
        }
    )
    folded = fold(rows_of(cases), case_set=dimensions)
    assert not folded.gradable and folded.reward is None
    assert folded.dimensions["reward"] is None  # it holds the ungradable case
    if broken != 0:  # the other dimension is still said, as a figure
        assert folded.dimensions["left"] == (1.0 if cases[0]["verdict"] == "pass" else 0.0)


@given(scored_cases(), st.sampled_from(WEIGHING), st.sampled_from([1.5, -3.0, 1.0000001, -1e-9]))
@settings(max_examples=60)
def test_a_score_outside_0_1_is_refused_never_clipped(
    cases: list[dict[str, Any]], scheme: str, bad: float
) -> None:
    cases = [{**cases[0], "score": bad}, *cases[1:]]
    folded = fold(rows_of(cases), case_set=spec_of(cases), scheme=scheme)
    if scheme == "required-pass/1" and not any(case["required"] for case in cases):
        assert "CASE_INVALID" in folded.codes
    assert not folded.gradable and "SCORE_OUT_OF_RANGE" in folded.codes
    refusal = next(item for item in folded.refusals if item.code == "SCORE_OUT_OF_RANGE")
    assert refusal.case == cases[0]["id"] and refusal.blame.value == "grader"


@given(scored_cases(), st.sampled_from(WEIGHING), st.randoms(use_true_random=False))
@settings(max_examples=40)
def test_a_weighted_grade_folds_again_the_same_from_its_document(
    cases: list[dict[str, Any]], scheme: str, rng: Any
) -> None:
    rows = rows_of(cases)
    document = tr.grade_document(rows, case_set=spec_of(cases, scheme=scheme))
    shuffled = list(rows)
    rng.shuffle(shuffled)
    again = tr.grade_document(shuffled, case_set=spec_of(cases, scheme=scheme))
    assert again.to_bytes() == document.to_bytes()
    stored = GradeDocument.from_bytes(document.to_bytes())
    assert verify_document(stored) == []
    assert stored.schema_version == 4 and stored.scheme == scheme


# --- examples --------------------------------------------------------------------------------


def test_rewardkits_own_example_weights() -> None:
    """rewardkit's README: components weighted 2 and 1 under weighted-mean."""
    spec = TaskSpec.of(
        {
            "cases": [
                {"id": "checks", "kind": "fail_to_pass", "weight": 2.0},
                {"id": "quality", "kind": "fail_to_pass"},
            ],
            "scoring": {"scheme": "weighted-mean/1"},
        }
    )
    rows = [
        {"id": "checks", "kind": "fail_to_pass", "verdict": "pass"},
        {"id": "quality", "kind": "fail_to_pass", "verdict": "fail", "measures": {"score": 0.25}},
    ]
    folded = fold(rows, case_set=spec)
    assert folded.scheme == "weighted-mean/1" and folded.reward == pytest.approx(0.75)
    assert fold(rows, case_set=spec, scheme="gated-binary/1").reward == 0.0  # the caller's


def test_weights_summing_to_zero_are_refused() -> None:
    spec = TaskSpec.of({"cases": [{"id": "a", "kind": "fail_to_pass", "weight": 0}]})
    rows = [{"id": "a", "kind": "fail_to_pass", "verdict": "pass"}]
    for scheme in ("weighted-mean/1", "threshold/1"):
        folded = fold(rows, case_set=spec, scheme=scheme)
        assert folded.codes == ["CASE_INVALID"] and "sum to zero" in folded.refusals[0].why
    assert fold(rows, case_set=spec, scheme="all-pass/1").reward == 1.0


def test_ordinary_weights_keep_the_bits_earlier_grades_hold() -> None:
    # fsum(value * weight) / fsum(weight) in floats, as truereward published
    # it before exact sums (and verify folds it again): 0.36999999999999994,
    # where the exact mean is 0.37. Grades already published must still verify.
    spec = {
        "cases": [
            {"id": "a", "kind": "fail_to_pass", "weight": 3.0},
            {"id": "b", "kind": "fail_to_pass", "weight": 0.1},
        ],
        "scoring": {"scheme": "weighted-mean/1"},
    }
    rows = [
        {"id": case, "kind": "fail_to_pass", "verdict": "fail", "measures": {"score": 0.37}}
        for case in "ab"
    ]
    assert fold(rows, case_set=TaskSpec.of(spec)).reward == 0.36999999999999994


def test_weighted_grades_published_before_exact_sums_still_verify() -> None:
    # 24 grade documents published by truereward at 04ea61c (weighted-mean/1,
    # threshold/1, weighted-sum/1, fractional scores; tests/data/README.md).
    # Folded exact everywhere, 20 of them disagreed in a reward's last bit.
    lines = (ROOT / "tests/data/published-weighted-04ea61c.jsonl").read_text().splitlines()
    documents = [GradeDocument.from_bytes(json.loads(line).encode()) for line in lines]
    assert len(documents) == 24
    assert {document.scheme for document in documents} >= {"weighted-mean/1", "weighted-sum/1"}
    for document in documents:
        assert verify_document(document) == [], document.run


@pytest.mark.parametrize("weight", [5e-324, 1e-200, 1e308, sys.float_info.max])
def test_tiny_or_huge_weights_keep_the_mean(weight: float) -> None:
    # As plain float sums: 0.5 for 5e-324 (0.5 * 5e-324 underflows to 0),
    # nan for 1e308 (inf / inf). Found by reading the scheme beside
    # truereward.util.means; a hostile task spec chooses its weights.
    spec = {
        "cases": [
            {"id": "a", "kind": "fail_to_pass", "weight": weight},
            {"id": "b", "kind": "fail_to_pass", "weight": weight},
        ]
    }
    rows = [
        {"id": "a", "kind": "fail_to_pass", "verdict": "fail", "measures": {"score": 0.5}},
        {"id": "b", "kind": "fail_to_pass", "verdict": "pass"},
    ]
    mean = fold(rows, case_set=TaskSpec.of(spec), scheme="weighted-mean/1")
    assert mean.gradable and mean.reward == 0.75
    bar = TaskSpec.of({**spec, "scoring": {"threshold": 0.7}})
    assert fold(rows, case_set=bar, scheme="threshold/1").reward == 1.0
    document = tr.grade_document(
        rows, case_set=TaskSpec.of({**spec, "scoring": {"scheme": "weighted-mean/1"}})
    )
    assert document.reward == 0.75 and verify_document(document) == []


def test_a_weighted_sum_past_the_float_range_is_refused_not_raised() -> None:
    rows = [{"id": case, "kind": "fail_to_pass", "verdict": "pass"} for case in "abc"]

    def flat(*weights: float) -> TaskSpec:
        cases = [
            {"id": case, "kind": "fail_to_pass", "weight": weight}
            for case, weight in zip("abc", weights, strict=True)
        ]
        return TaskSpec.of({"cases": cases, "scoring": {"scheme": "weighted-sum/1"}})

    past = fold(rows, case_set=flat(1e308, 1e308, 1.0))
    assert not past.gradable and past.reward is None and past.codes == ["CASE_INVALID"]
    assert past.refusals[0].why == "weighted-sum/1 gave inf, not a finite number"
    assert fold(rows, case_set=flat(-1e308, -1e308, 1.0)).codes == ["CASE_INVALID"]
    # A partial sum past the range, the sum within it: the sum.
    assert fold(rows, case_set=flat(1e308, 1e308, -1e308)).reward == 1e308
    within = TaskSpec.of(
        {
            "cases": [{"id": case, "kind": "fail_to_pass"} for case in "abc"],
            "scoring": {
                "dimensions": [
                    {
                        "name": "reward",
                        "scheme": "weighted-sum/1",
                        "cases": list("abc"),
                        "weights": {"a": 1e308, "b": 1e308},
                    }
                ]
            },
        }
    )
    nested = fold(rows, case_set=within)
    assert nested.codes == ["CASE_INVALID"] and "not a finite number" in nested.refusals[0].why


DIMENSIONS = {
    "cases": [
        {"id": "build", "kind": "fail_to_pass"},
        {"id": "tests", "kind": "fail_to_pass", "weight": 3},
        {"id": "style", "kind": "fail_to_pass"},
        {"id": "docs", "kind": "fail_to_pass", "required": False},
    ],
    "scoring": {
        "dimensions": [
            {"name": "correctness", "scheme": "weighted-mean/1", "cases": ["build", "tests"]},
            {"name": "quality", "scheme": "required-pass/1", "cases": ["style", "docs"]},
            {
                "name": "reward",
                "scheme": "threshold/1",
                "threshold": 0.6,
                "dimensions": ["correctness", "quality"],
                "weights": {"correctness": 2.0},
            },
        ],
        "publish": ["correctness", "quality"],
    },
}


def dimension_rows(**verdicts: str) -> list[dict[str, Any]]:
    return [
        {"id": case["id"], "kind": "fail_to_pass", "verdict": verdicts.get(case["id"], "pass")}
        for case in DIMENSIONS["cases"]
    ]


def test_dimensions_fold_and_publish() -> None:
    spec = TaskSpec.of(DIMENSIONS)
    document = tr.grade_document(dimension_rows(build="fail", docs="fail"), case_set=spec)
    assert document.gradable and document.scheme == "threshold/1"
    assert dict(document.dimensions) == {"correctness": 0.75, "quality": 1.0, "reward": 1.0}
    files = render_files(document)
    assert json.loads(files["reward.json"]) == {"reward": 1.0, "correctness": 0.75, "quality": 1.0}
    details = json.loads(files["reward-details.json"])
    assert set(details) == {"reward", "correctness", "quality"}
    assert details["reward"]["kind"] == "group" and details["reward"]["threshold"] == 0.6
    assert [part["name"] for part in details["reward"]["components"]] == ["correctness", "quality"]
    assert details["quality"]["criteria"][1] == {
        "name": "docs",
        "value": 0.0,
        "raw": 0.0,
        "weight": 1.0,
        "optional": True,
    }
    ctrf = json.loads(files["ctrf.json"])
    assert ctrf["extra"]["truereward"]["dimensions"] == dict(document.dimensions)


def test_an_ungradable_dimension_leaves_the_run_without_reward_files() -> None:
    rows = dimension_rows()
    rows[2] = {
        "id": "style",
        "kind": "fail_to_pass",
        "verdict": "ungradable",
        "code": "PROVIDER_FAILED",
    }
    document = tr.grade_document(rows, case_set=TaskSpec.of(DIMENSIONS))
    assert not document.gradable and document.codes == ["PROVIDER_FAILED"]
    assert dict(document.dimensions) == {"correctness": 1.0, "quality": None, "reward": None}
    assert set(render_files(document)) == {"grade.json", "ctrf.json"}


def test_a_task_with_dimensions_is_folded_only_by_its_primary_scheme() -> None:
    spec = TaskSpec.of(DIMENSIONS)
    folded = fold(dimension_rows(), case_set=spec, scheme="weighted-mean/1")
    assert folded.codes == ["CASE_INVALID"] and "dimension reward" in folded.refusals[0].why
    assert fold(dimension_rows(), case_set=spec, scheme="threshold/1").reward == 1.0


def test_a_scheme_that_does_not_weigh_folds_cases_only() -> None:
    spec = TaskSpec.of(
        {
            **DIMENSIONS,
            "scoring": {
                "dimensions": [
                    {
                        "name": "correctness",
                        "scheme": "gated-binary/1",
                        "cases": ["build", "tests"],
                    },
                    {
                        "name": "reward",
                        "scheme": "fix-rate/1",
                        "cases": ["style", "docs"],
                        "dimensions": ["correctness"],
                    },
                ]
            },
        }
    )
    folded = fold(dimension_rows(), case_set=spec)
    assert not folded.gradable
    whys = [item.why for item in folded.refusals]
    assert any("cannot fold other dimensions" in why for why in whys)
    assert any("does not weigh" in why for why in whys)  # tests has weight 3


@pytest.mark.parametrize(
    ("scoring", "said"),
    [
        (
            {"dimensions": [{"name": "reward", "scheme": "all-pass/1", "cases": ["x"]}]},
            "not a declared case",
        ),
        (
            {
                "dimensions": [
                    {"name": "reward", "scheme": "all-pass/1", "cases": ["a"], "dimensions": ["b"]},
                    {"name": "b", "scheme": "all-pass/1", "dimensions": ["reward"]},
                ]
            },
            "contain themselves: b -> reward -> b",
        ),
        ({"dimensions": [{"name": "x", "scheme": "all-pass/1", "cases": ["a"]}]}, "primary"),
        (
            {
                "dimensions": [{"name": "reward", "scheme": "all-pass/1", "cases": ["a"]}],
                "publish": ["reward"],
            },
            "published as reward",
        ),
        (
            {
                "dimensions": [
                    {
                        "name": "reward",
                        "scheme": "all-pass/1",
                        "cases": ["a"],
                        "dimensions": ["fix_rate"],
                    },
                    {"name": "fix_rate", "scheme": "all-pass/1", "cases": ["a"]},
                ],
                "publish": ["fix_rate"],
            },
            "a key reward.json already has",
        ),
        (
            {
                "dimensions": [
                    {"name": "reward", "scheme": "all-pass/1", "cases": ["a"], "weights": {"z": 2}}
                ]
            },
            "'z' is weighed or optional but not a member",
        ),
        ({"scheme": "all-pass/1", "primary": "reward"}, "none is declared"),
        (
            {
                "dimensions": [{"name": "reward", "scheme": "all-pass/1", "cases": ["a"]}],
                "threshold": 0.5,
            },
            "each dimension names",
        ),
    ],
)
def test_a_scoring_that_names_what_is_not_there_is_refused_naming_it(
    scoring: dict[str, Any], said: str
) -> None:
    with pytest.raises(TaskSpecError, match=said.replace("(", r"\(")):
        TaskSpec.parse(
            json.dumps(
                {"cases": [{"id": "a", "kind": "fail_to_pass"}], "scoring": scoring}
            ).encode(),
            name="task.json",
        )


def test_a_case_in_no_dimension_is_refused() -> None:
    with pytest.raises(TaskSpecError, match="case 'b' is in no dimension"):
        TaskSpec.of(
            {
                "cases": [{"id": "a", "kind": "fail_to_pass"}, {"id": "b", "kind": "fail_to_pass"}],
                "scoring": {
                    "dimensions": [{"name": "reward", "scheme": "all-pass/1", "cases": ["a"]}]
                },
            }
        )


def test_a_weight_must_be_a_finite_number() -> None:
    for bad in (True, "2", float("inf")):
        with pytest.raises(TaskSpecError, match=r"cases\.0\.weight"):
            TaskSpec.of({"cases": [{"id": "a", "kind": "fail_to_pass", "weight": bad}]})


def test_toml_task_spec_with_scoring(tmp_path: Path) -> None:
    path = tmp_path / "task.toml"
    path.write_text(
        'reader = "rows"\n'
        '[[cases]]\nid = "a"\nkind = "fail_to_pass"\nweight = 2\n'
        '[[cases]]\nid = "b"\nkind = "fail_to_pass"\nrequired = false\n'
        '[scoring]\nscheme = "threshold/1"\nthreshold = 0.6\n'
    )
    spec = TaskSpec.load(path)
    scoring = spec.resolved_scoring
    assert scoring is not None and dict(scoring.weights) == {"a": 2.0}
    assert scoring.optional == ("b",) and scoring.threshold == 0.6
    rows = [
        {"id": "a", "kind": "fail_to_pass", "verdict": "pass"},
        {"id": "b", "kind": "fail_to_pass", "verdict": "fail"},
    ]
    assert fold(rows, case_set=spec).reward == 1.0  # 2/3 reaches 0.6


# --- documents and files ---------------------------------------------------------------------


def test_a_grade_without_scoring_keeps_version_3_and_its_files() -> None:
    rows = [{"id": "a", "kind": "fail_to_pass", "verdict": "pass"}]
    document = tr.grade_document(rows, case_set={"a": "fail_to_pass"})
    assert document.schema_version == 3 and b"scoring" not in document.to_bytes()
    assert set(render_files(document)) == {
        "grade.json",
        "ctrf.json",
        "reward.json",
        "reward.txt",
    }


def test_a_version_that_disagrees_with_the_content_is_refused() -> None:
    document = tr.grade_document(dimension_rows(), case_set=TaskSpec.of(DIMENSIONS))
    data = json.loads(document.to_bytes())
    with pytest.raises(ValueError, match="is version 4"):
        GradeDocument.model_validate({**data, "schema_version": 3})
    plain = json.loads(tr.grade_document(dimension_rows()).to_bytes())
    with pytest.raises(ValueError, match=r"inputs\.scoring is absent"):
        GradeDocument.model_validate({**plain, "schema_version": 4})


def test_details_and_dimensions_are_checked_by_verify(tmp_path: Path) -> None:
    spec = TaskSpec.of(DIMENSIONS)
    document = tr.grade_document(dimension_rows(), case_set=spec)
    tr.publish(document, tmp_path)
    assert verify_published(tmp_path)[1] == []
    (tmp_path / "reward-details.json").write_text('{"reward": {"score": 1.0}}')
    assert [item.where for item in verify_published(tmp_path)[1]] == ["reward-details.json"]
    # Replaced by a grade without a scoring: the details file goes with the old grade.
    plain = tr.grade_document(
        dimension_rows(), case_set={c["id"]: "fail_to_pass" for c in DIMENSIONS["cases"]}
    )
    result = tr.publish(plain, tmp_path, replaces=document.digest)
    assert "reward-details.json" in result.removed
    assert not (tmp_path / "reward-details.json").exists() and verify_published(tmp_path)[1] == []
    # A details file planted beside it is found, and a republish removes it.
    (tmp_path / "reward-details.json").write_text("{}")
    assert [item.where for item in verify_published(tmp_path)[1]] == ["reward-details.json"]
    assert "reward-details.json" in tr.publish(plain, tmp_path).removed
    assert verify_published(tmp_path)[1] == []


def test_details_on_s3_are_part_of_the_set(s3_endpoint: str, s3_client: Any, bucket: str) -> None:
    from tests.conftest import s3_options
    from truereward.publishing import Target

    document = tr.grade_document(dimension_rows(), case_set=TaskSpec.of(DIMENSIONS))
    target = Target(url=f"s3://{bucket}/run-1", storage_options=s3_options(s3_endpoint))
    tr.publish(document, target)
    listed = {item["Key"] for item in s3_client.list_objects_v2(Bucket=bucket)["Contents"]}
    assert listed == {
        f"run-1/{name}"
        for name in ("grade.json", "ctrf.json", "reward-details.json", "reward.json", "reward.txt")
    }
    assert verify_target(target)[1] == []
    rows = dimension_rows()
    rows[0] = {
        "id": "build",
        "kind": "fail_to_pass",
        "verdict": "ungradable",
        "code": "GRADER_TIMEOUT",
    }
    refusal = tr.grade_document(rows, case_set=TaskSpec.of(DIMENSIONS))
    tr.publish(refusal, target, replaces=document.digest)
    listed = {item["Key"] for item in s3_client.list_objects_v2(Bucket=bucket)["Contents"]}
    assert listed == {"run-1/grade.json", "run-1/ctrf.json"}
    assert verify_target(target)[1] == []


def test_a_spec_given_as_a_mapping_brings_its_scoring() -> None:
    folded = fold(dimension_rows(), case_set=DIMENSIONS)
    assert (
        folded.gradable and folded.scheme == "threshold/1" and folded.dimensions["quality"] == 1.0
    )
    broken = fold(dimension_rows(), case_set={**DIMENSIONS, "scoring": {"primary": "x"}})
    assert not broken.gradable and "the task spec is not valid" in broken.refusals[0].why


def test_the_command_line_folds_a_spec_with_its_scoring(tmp_path: Path) -> None:
    from truereward.cli import main

    spec = tmp_path / "task.toml"
    spec.write_text(
        '[[cases]]\nid = "a"\nkind = "fail_to_pass"\nweight = 3\n'
        '[[cases]]\nid = "b"\nkind = "fail_to_pass"\n'
        '[scoring]\nscheme = "weighted-mean/1"\n'
    )
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        '{"id": "a", "kind": "fail_to_pass", "verdict": "pass"}\n'
        '{"id": "b", "kind": "fail_to_pass", "verdict": "fail"}\n'
    )
    logs = tmp_path / "logs"
    assert main(["fold", str(rows), "--case-set", str(spec), "--logs", str(logs)]) == 0
    assert json.loads((logs / "reward.json").read_text()) == {"reward": 0.75}
    assert (logs / "reward-details.json").exists()
    assert main(["verify", str(logs)]) == 0
    spec.write_text(
        spec.read_text() + '[[scoring.dimensions]]\nname = "x"\nscheme = "all-pass/1"\n'
    )
    assert main(["fold", str(rows), "--case-set", str(spec), "--logs", str(tmp_path / "l2")]) == 2


def test_workspace_criteria_fold_under_weights_and_dimensions(tmp_path: Path) -> None:
    """The workspace reader's rows (one criterion a case, its score in
    measures) weighed as the task says, a degree criterion by its score."""
    app = tmp_path / "app"
    app.mkdir()
    (app / "out.txt").write_text("hello world\n")
    (app / "data.json").write_text('{"status": "ok"}')
    spec = {
        "reader": "workspace",
        "cases": [
            {
                "id": "out",
                "kind": "fail_to_pass",
                "weight": 2,
                "options": {"criterion": "file_exists", "path": "out.txt"},
            },
            {
                "id": "close",
                "kind": "fail_to_pass",
                "options": {"criterion": "diff_ratio", "path": "out.txt", "expected": "hello"},
            },
            {
                "id": "status",
                "kind": "fail_to_pass",
                "required": False,
                "options": {
                    "criterion": "json_key_equals",
                    "path": "data.json",
                    "key": "status",
                    "expected": "no",
                },
            },
        ],
        "scoring": {
            "dimensions": [
                {"name": "gate", "scheme": "required-pass/1", "cases": ["out", "status"]},
                {
                    "name": "reward",
                    "scheme": "weighted-mean/1",
                    "cases": ["close"],
                    "dimensions": ["gate"],
                },
            ],
            "publish": ["gate"],
        },
    }
    document = tr.grade_evidence("workspace", str(app), spec)
    close = next(row for row in document.detail if row.id == "close").measures["score"]
    assert 0 < close < 1 and document.dimensions["gate"] == 1.0  # status is optional
    assert document.reward == pytest.approx((close + 1.0) / 2)
    assert json.loads(render_files(document)["reward.json"]) == {
        "reward": document.reward,
        "gate": 1.0,
    }
