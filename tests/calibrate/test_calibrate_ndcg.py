"""ndcg(): against an independent straightforward computation, against
scikit-learn for binary grades, the None case and rejected inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import ndcg_score

from truereward.calibrate import JudgeError, ndcg


def straightforward_ndcg(order, grades, k=10):
    """NDCG written out the textbook way, independently of the library."""

    def dcg(relevances):
        return sum((2**rel - 1) / math.log2(rank + 1) for rank, rel in enumerate(relevances, 1))

    actual = dcg([grades.get(item, 0) for item in order[:k]])
    ideal = dcg(sorted(grades.values(), reverse=True)[:k])
    return None if ideal == 0 else actual / ideal


def test_a_small_hand_computed_case():
    # order a, b, c with grades 3, 0, 2; ideal a, c, b.
    dcg = 7 / math.log2(2) + 0 / math.log2(3) + 3 / math.log2(4)
    ideal = 7 / math.log2(2) + 3 / math.log2(3) + 0 / math.log2(4)
    assert ndcg(["a", "b", "c"], {"a": 3, "b": 0, "c": 2}) == pytest.approx(dcg / ideal)


def test_ids_missing_from_the_order_count_in_the_ideal():
    assert ndcg(["a"], {"a": 1, "b": 1}) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert ndcg(["x", "y"], {"a": 2}) == 0.0


def test_ideal_gain_zero_gives_none():
    assert ndcg(["a", "b"], {"a": 0, "b": 0}) is None
    assert ndcg(["a"], {}) is None
    assert ndcg([], {"a": 0}) is None


def test_default_cutoff_is_ten():
    order = [f"d{i}" for i in range(12)]
    grades = {"d10": 1, "d11": 1}  # relevant only beyond the tenth place
    assert ndcg(order, grades) == 0.0
    assert ndcg(order, grades, k=12) > 0.0


@pytest.mark.parametrize(
    ("order", "grades", "k", "message"),
    [
        (["a"], {"a": float("nan")}, 10, "finite grade"),
        (["a"], {"a": float("inf")}, 10, "finite grade"),
        (["a"], {"a": -1}, 10, "grade >= 0"),
        (["a"], {"a": True}, 10, "a number"),
        (["a"], {"a": 10**400}, 10, "finite grade"),
        (["a"], {"a": 1024}, 10, "gain 2\\*\\*1024 - 1 is not finite"),
        (["a", "b", "c"], {"a": 1023, "b": 1023, "c": 1023}, 10, "cumulative gain is not finite"),
        (["a", "a"], {"a": 1}, 10, r"order\[1\]: 'a' is listed twice"),
        (["a"], {"a": 1}, 0, "k: a positive integer"),
        (["a"], {"a": 1}, True, "k: a positive integer"),
    ],
)
def test_rejected_inputs(order, grades, k, message):
    with pytest.raises(JudgeError, match=message):
        ndcg(order, grades, k=k)


ids = [f"doc{i}" for i in range(15)]
grade_maps = st.dictionaries(
    st.sampled_from(ids),
    st.one_of(st.integers(0, 4), st.floats(0, 5, allow_nan=False)),
    max_size=15,
)


@given(grade_maps, st.permutations(ids), st.integers(0, 15), st.integers(1, 16))
def test_matches_the_straightforward_computation(grades, permutation, length, k):
    order = permutation[:length]
    expected = straightforward_ndcg(order, grades, k)
    result = ndcg(order, grades, k)
    if expected is None:
        assert result is None
    else:
        assert result == pytest.approx(expected, rel=1e-12, abs=1e-15)
        assert 0.0 <= result <= 1.0 + 1e-12


@given(grade_maps, st.integers(1, 16))
def test_the_ideal_order_scores_one(grades, k):
    ideal = sorted(grades, key=lambda item: grades[item], reverse=True)
    result = ndcg(ideal, grades, k)
    assert result is None or result == pytest.approx(1.0)


@given(
    st.lists(st.integers(0, 1), min_size=2, max_size=15),
    st.randoms(use_true_random=False),
    st.integers(1, 15),
)
def test_binary_grades_agree_with_scikit_learn(binary, rng, k):
    # With grades 0/1, 2**g - 1 == g: scikit-learn's linear gain agrees.
    items = [f"doc{i}" for i in range(len(binary))]
    grades = dict(zip(items, binary, strict=True))
    order = items[:]
    rng.shuffle(order)
    ours = ndcg(order, grades, k)
    if sum(binary) == 0:
        assert ours is None  # scikit-learn reports 0 here; we say "nothing to rank"
        return
    # Distinct scores in our order, so that scikit-learn ranks exactly as we do.
    scores = {item: len(order) - position for position, item in enumerate(order)}
    theirs = ndcg_score(
        np.array([[grades[item] for item in items]]),
        np.array([[scores[item] for item in items]]),
        k=k,
    )
    assert ours == pytest.approx(theirs, rel=1e-12)


def test_binary_grades_with_ids_left_out_agree_with_scikit_learn():
    # Leaving ids out of the order ranks them last; beyond the cutoff they weigh nothing.
    grades = {"a": 1, "b": 0, "c": 1, "d": 1, "e": 0}
    order = ["b", "a", "e"]  # c and d are missing
    theirs = ndcg_score(np.array([[1, 0, 1, 1, 0]]), np.array([[4, 5, 1, 0, 3]]), k=3)
    assert ndcg(order, grades, k=3) == pytest.approx(theirs)
