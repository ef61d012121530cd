"""Hypothesis strategies for rows, case sets and refusals, and `floats_in`,
the floats of a JSON value."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

KINDS = ("fail_to_pass", "pass_to_pass")
VERDICTS = ("pass", "fail", "ungradable")
UNGRADABLE_CODES = (
    "CASE_NOT_GRADED",
    "CASE_NOT_PREPARED",
    "EVIDENCE_MALFORMED",
    "EVIDENCE_UNREADABLE",
    "GRADER_TIMEOUT",
)

case_ids = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zs", "Zl", "Zp")),
    min_size=1,
    max_size=12,
)
small_ids = st.sampled_from([f"c{i}" for i in range(8)])
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@st.composite
def rows(draw: Any, ids: Any = small_ids, verdicts: Any = None) -> dict[str, Any]:
    """One valid row dict."""
    verdict = draw(verdicts if verdicts is not None else st.sampled_from(VERDICTS))
    row: dict[str, Any] = {
        "id": draw(ids),
        "kind": draw(st.sampled_from(KINDS)),
        "verdict": verdict,
        "code": draw(st.sampled_from(UNGRADABLE_CODES)) if verdict == "ungradable" else "",
        "why": draw(st.sampled_from(["", "because", "assertion failed"])),
        "observations": [],
        "measures": draw(st.dictionaries(st.sampled_from(["ms", "bytes"]), finite, max_size=2)),
        "checks": draw(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "check": st.just("determinism"),
                        "holds": st.booleans(),
                        "why": st.sampled_from(["", "differs"]),
                    }
                ),
                max_size=1,
            )
        )
        if draw(st.integers(0, 9)) == 0
        else [],
        "containment": None,
        "duration_s": draw(st.floats(0, 1000, allow_nan=False)),
    }
    return row


def graded_rows(ids: Any = small_ids) -> Any:
    """A valid row that passed or failed, with no run-check answers."""
    return rows(ids=ids, verdicts=st.sampled_from(("pass", "fail"))).map(
        lambda row: {**row, "checks": []}
    )


row_lists = st.lists(rows(), max_size=12)
unique_row_lists = st.lists(rows(), max_size=12, unique_by=lambda row: row["id"])
case_sets = st.dictionaries(small_ids, st.sampled_from(KINDS), max_size=8)


def floats_in(value: Any) -> list[float]:
    """Every float in a JSON value, depth first."""
    if isinstance(value, dict):
        return [item for child in value.values() for item in floats_in(child)]
    if isinstance(value, list):
        return [item for child in value for item in floats_in(child)]
    return [value] if type(value) is float else []
