"""The rule that folds a case's repetitions (pytest-repeat) into one row."""

from __future__ import annotations

from random import Random

from hypothesis import given
from hypothesis import strategies as st

from truereward import CaseResult
from truereward.grade.ledger import fold_repetitions

VERDICTS = st.lists(st.sampled_from(["pass", "fail", "ungradable"]), min_size=1, max_size=12)


def row(verdict: str, step: int) -> CaseResult:
    code = "EVIDENCE_MISSING" if verdict == "ungradable" else ""
    return CaseResult(
        id="case", kind="fail_to_pass", verdict=verdict, code=code, why=f"run {step}", duration_s=1
    )


@given(VERDICTS)
def test_a_case_passes_only_when_every_repetition_passed(verdicts: list[str]) -> None:
    rows = [row(verdict, step) for step, verdict in enumerate(verdicts, 1)]
    folded = fold_repetitions(rows)
    if "ungradable" in verdicts:
        assert folded.verdict == "ungradable" and folded.code == "EVIDENCE_MISSING"
        first = verdicts.index("ungradable") + 1
        if len(rows) > 1:
            assert folded.why.startswith(f"repetition {first} of {len(rows)} could not be graded")
    elif "fail" in verdicts:
        assert folded.verdict == "fail"
        if len(rows) > 1:
            failed, first = verdicts.count("fail"), verdicts.index("fail") + 1
            assert folded.why == (
                f"failed {failed} of {len(rows)} repetitions; repetition {first}: run {first}"
            )
    else:
        assert folded.verdict == "pass"
    if len(rows) > 1:
        assert folded.measures["repetitions"] == len(rows)
        assert folded.measures["repetitions_passed"] == verdicts.count("pass")
        assert [item.verdict for item in folded.observations] == verdicts
        assert folded.duration_s == len(rows)


@given(VERDICTS, st.randoms(use_true_random=False))
def test_the_verdict_does_not_depend_on_the_order(verdicts: list[str], random: Random) -> None:
    rows = [row(verdict, step) for step, verdict in enumerate(verdicts, 1)]
    shuffled = list(rows)
    random.shuffle(shuffled)
    one, other = fold_repetitions(rows), fold_repetitions(shuffled)
    assert (one.verdict, one.code) == (other.verdict, other.code)
    assert one.measures == other.measures


def test_one_row_is_returned_as_it_is() -> None:
    single = row("fail", 1)
    assert fold_repetitions([single]) is single
