"""What a row carries into a grade is bounded (``truereward.grade.bounded``), never
a verdict changed; a grade larger than ``truereward verify`` reads is never
published (``document.publishable``, ``publish``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truereward import CaseResult, PublishError, fold, grade_document, publish
from truereward.grade.bounded import MAX_ITEMS, MAX_TEXT, bounded_row, cut
from truereward.grade.document import MAX_DOCUMENT_BYTES, publishable
from truereward.grade.readback import verify_document

texts = st.one_of(
    st.text(max_size=50),
    st.builds(
        lambda n, c: c * n,
        st.integers(MAX_TEXT - 5, 3 * MAX_TEXT),
        st.sampled_from("x\U0001f600\n"),
    ),
)


@st.composite
def long_rows(draw: Any) -> CaseResult:
    verdict = draw(st.sampled_from(["pass", "fail", "ungradable"]))
    return CaseResult.model_validate(
        {
            "id": draw(st.sampled_from(["a", "b", "tests/t.py::test_x"])),
            "kind": draw(st.sampled_from(["fail_to_pass", "pass_to_pass"])),
            "verdict": verdict,
            "code": "EVIDENCE_MALFORMED" if verdict == "ungradable" else "",
            "why": draw(texts),
            "observations": draw(
                st.lists(
                    st.fixed_dictionaries({"name": texts, "verdict": texts, "why": texts}),
                    max_size=3 * MAX_ITEMS,
                )
            ),
            "reruns": draw(
                st.lists(
                    st.fixed_dictionaries(
                        {"verdict": st.sampled_from(["pass", "fail"]), "why": texts}
                    ),
                    max_size=3 * MAX_ITEMS,
                )
            ),
            "checks": draw(
                st.lists(
                    st.fixed_dictionaries(
                        {"check": st.just("determinism"), "holds": st.booleans(), "why": texts}
                    ),
                    max_size=3,
                )
            ),
        }
    )


@pytest.mark.slow
@given(long_rows())
def test_a_bounded_row_is_within_the_bounds_and_means_the_same(row: CaseResult) -> None:
    bounded = bounded_row(row)
    assert (bounded.id, bounded.kind, bounded.verdict, bounded.code) == (
        row.id,
        row.kind,
        row.verdict,
        row.code,
    )
    assert bounded.flaky == row.flaky
    assert [(item.check, item.holds) for item in bounded.checks] == [
        (item.check, item.holds) for item in row.checks
    ]
    assert len(bounded.why) <= MAX_TEXT
    assert len(bounded.observations) <= MAX_ITEMS and len(bounded.reruns) <= MAX_ITEMS
    texts_of = [bounded.why, *(item.why for item in bounded.reruns)]
    texts_of += [text for item in bounded.observations for text in (item.name, item.why)]
    texts_of += [item.why for item in bounded.checks]
    assert all(len(text) <= MAX_TEXT for text in texts_of)
    assert bounded_row(bounded) == bounded  # bounding twice changes nothing
    if bounded is not row:
        assert len(row.why) > MAX_TEXT or bounded.why == row.why
    # The fold is the same, but for the cut text of the refusals it carries.
    before, after = fold([row]), fold([bounded])
    assert (before.gradable, before.reward, [r.code for r in before.refusals]) == (
        after.gradable,
        after.reward,
        [r.code for r in after.refusals],
    )


def test_cut_keeps_the_start_and_says_how_much_went() -> None:
    assert cut("short") == "short"
    text = "a" * 10 + "b" * 5000
    kept = cut(text)
    assert len(kept) <= MAX_TEXT and kept.startswith("a" * 10)
    count = int(kept.rsplit("[", 1)[1].split()[0])
    assert len(kept) - len(f" ... [{count} characters cut]") + count == len(text)
    assert cut(kept) == kept


def test_a_grade_of_cut_rows_verifies(tmp_path: Path) -> None:
    rows = [
        {
            "id": "a",
            "kind": "fail_to_pass",
            "verdict": "ungradable",
            "code": "EVIDENCE_MALFORMED",
            "why": "w" * 10_000,
        },
        {
            "id": "b",
            "kind": "pass_to_pass",
            "verdict": "pass",
            "reruns": [{"verdict": "fail"}] * 50,
        },
    ]
    document = grade_document(rows)
    (row_a, row_b) = document.detail
    assert len(row_a.why) <= MAX_TEXT and row_b.flaky
    assert document.refusals[0].why == row_a.why  # folded from the cut row
    assert verify_document(document) == []
    publish(document, tmp_path / "logs")
    assert (tmp_path / "logs" / "grade.json").read_bytes() == document.to_bytes()


def test_a_grade_too_large_to_verify_is_never_published(tmp_path: Path) -> None:
    containment = {"x": "y" * (MAX_DOCUMENT_BYTES // 4)}  # not text a row's bounds cut
    rows = [
        {"id": f"c{index}", "kind": "fail_to_pass", "verdict": "pass", "containment": containment}
        for index in range(5)
    ]
    document = grade_document(rows, run={"id": "run-1"}, evidence=[])
    assert len(document.to_bytes()) > MAX_DOCUMENT_BYTES
    with pytest.raises(PublishError, match="more than the 67108864 bytes"):
        publish(document, tmp_path / "logs")
    assert not (tmp_path / "logs" / "grade.json").exists()
    replaced = publishable(document)
    assert not replaced.gradable and replaced.detail == ()
    (refusal,) = replaced.refusals
    assert refusal.code == "CASE_INVALID" and "would be" in refusal.why
    assert replaced.run is not None and replaced.run.id == "run-1"
    publish(replaced, tmp_path / "logs")
    assert not (tmp_path / "logs" / "reward.txt").exists()
    assert publishable(replaced) is replaced
