"""The refusal rules every scheme shares, as small named functions.

:func:`tally` finds every reason a run has no reward and counts what was
measured, applying in order :func:`duplicate_ids` (``CASE_INVALID`` per
shared id), :func:`case_set_mismatches` (``CASES_MISSING`` per missing case,
``CASE_INVALID`` per stray or mis-kinded row), :func:`ungradable_rows`, the
given refusals and :func:`failed_run_checks`, then
:func:`coverage_refusals` (``NOTHING_GRADED``, ``NO_FAIL_TO_PASS``);
refusals sorted by (case, code, why). A scheme only says what a gradable
run's reward is. README.md, "The rules of the fold".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..codes import RUN_CHECKS
from ..record.cases import (
    FAIL,
    FAIL_TO_PASS,
    PASS,
    PASS_TO_PASS,
    UNGRADABLE,
    CaseResult,
    CheckAnswer,
)
from ..record.caseset import DeclaredCases
from ..record.refusal import Refusal, refusal, sort_key
from ..record.scoring import Scoring
from .model import CaseCounts, FailedIds, RunCheck

__all__ = [
    "Tally",
    "case_set_mismatches",
    "coverage_refusals",
    "duplicate_ids",
    "failed_run_checks",
    "tally",
    "ungradable_rows",
]


@dataclass(frozen=True)
class Tally:
    """Everything a scheme may read: the rows, the sorted refusals, the run
    checks, the figures over the graded rows, and the task's scoring
    (weights, required flags, threshold: what weighing schemes read;
    ``None`` when it declares none)."""

    rows: Sequence[CaseResult]
    refusals: list[Refusal]
    checks: list[RunCheck]
    cases: CaseCounts
    failed: FailedIds
    guards_hold: bool
    fix_rate: float | None
    case_fraction: float | None
    flaky: list[str]
    scoring: Scoring | None = None

    @property
    def gradable(self) -> bool:
        """No refusal at all."""
        return not self.refusals


def duplicate_ids(counts: Mapping[str, int]) -> list[Refusal]:
    """One ``CASE_INVALID`` per id carried by more than one row (``counts`` is
    rows per id)."""
    return [
        refusal("CASE_INVALID", f"{count} results share the case id {case_id}", case_id)
        for case_id, count in counts.items()
        if count > 1
    ]


def case_set_mismatches(
    kinds_seen: Mapping[str, set[str]], declared: DeclaredCases, already_invalid: set[str]
) -> list[Refusal]:
    """Rows (``kinds_seen``: the kinds the rows of each id carry) against the
    declared case set: ``CASES_MISSING`` per declared case without a row,
    ``CASE_INVALID`` per row id outside the set or of another kind than
    declared. An id already refused as ``CASE_INVALID`` (a duplicate
    row, an invalid declaration) is not refused twice."""
    found: list[Refusal] = []
    kinds = declared.kinds
    for case_id, row_kinds in kinds_seen.items():
        if case_id in already_invalid or case_id in declared.invalid:
            continue
        declared_kind = kinds.get(case_id)
        if declared_kind is None:
            found.append(
                refusal(
                    "CASE_INVALID",
                    f"a result names case {case_id}, which is outside the declared case set",
                    case_id,
                )
            )
        elif row_kinds != {declared_kind}:
            said = " and ".join(sorted(row_kinds))
            found.append(
                refusal(
                    "CASE_INVALID",
                    f"case {case_id} is declared {declared_kind} but its result says {said}",
                    case_id,
                )
            )
    found.extend(
        refusal("CASES_MISSING", f"declared case {case_id} has no result", case_id)
        for case_id in kinds
        if case_id not in kinds_seen
    )
    return found


def ungradable_rows(rows: Iterable[CaseResult]) -> list[Refusal]:
    """The refusal each ungradable row carries, with ``case`` = its id."""
    return [refusal(row.code, row.why, row.id) for row in rows if row.verdict == UNGRADABLE]


def failed_run_checks(
    rows: Iterable[CaseResult], extra: Iterable[CheckAnswer]
) -> tuple[list[RunCheck], list[Refusal]]:
    """Every run check answered by a row or given separately, and one refusal
    per check that did not hold. The reasons of failing answers are joined in
    a sorted order, so the result does not depend on row order."""
    answers: dict[str, list[tuple[str, CheckAnswer]]] = {}
    for row in rows:
        for answer in row.checks:
            answers.setdefault(answer.check, []).append((row.id, answer))
    for answer in extra:
        answers.setdefault(answer.check, []).append(("", answer))
    checks: list[RunCheck] = []
    refusals: list[Refusal] = []
    for name in sorted(answers):
        given = answers[name]
        failing = sorted(
            (f"{case_id}: {answer.why}" if case_id else answer.why)
            for case_id, answer in given
            if not answer.holds
        )
        code = RUN_CHECKS[name]
        why = "; ".join(failing)
        checks.append(
            RunCheck.model_validate(
                {
                    "check": name,
                    "code": code,
                    "holds": not failing,
                    "answered": len(given),
                    "why": why,
                }
            )
        )
        if failing:
            refusals.append(refusal(code, f"run check {name} did not hold: {why}"))
    return checks, refusals


def coverage_refusals(
    graded: int,
    has_fix_row: bool,
    declared: DeclaredCases | None,
    refused_already: bool,
) -> list[Refusal]:
    """``NOTHING_GRADED`` when no row is graded and no refusal explains why;
    ``NO_FAIL_TO_PASS`` when some row is graded but neither the rows (of any
    verdict; ``has_fix_row``) nor the declared case set hold a fail-to-pass
    case."""
    if graded == 0:
        if refused_already:
            return []
        return [refusal("NOTHING_GRADED", "no case was graded")]
    if has_fix_row or (declared is not None and declared.has_fail_to_pass):
        return []
    return [refusal("NO_FAIL_TO_PASS", "no case is fail-to-pass, so nothing tests the change")]


def _kind_counts(passed: int, failed: int, ungradable: int) -> dict[str, int]:
    """The fields of a :class:`KindCounts` (validated as part of the
    :class:`CaseCounts` holding it: one validation for the three)."""
    return {
        "total": passed + failed + ungradable,
        "graded": passed + failed,
        "passed": passed,
        "failed": failed,
        "ungradable": ungradable,
    }


def tally(
    rows: Sequence[CaseResult],
    declared: DeclaredCases | None,
    answers: Sequence[CheckAnswer],
    given: Sequence[Refusal],
) -> Tally:
    """Apply the shared rules to validated rows; see the module docstring."""
    # One pass over the rows counts verdicts per kind and notes what the
    # rules below need: the fold runs once per graded run, thousands of
    # times per sweep, and a pass per question cost more than the rest.
    counts: dict[str, dict[str, int]] = {
        FAIL_TO_PASS: {PASS: 0, FAIL: 0, UNGRADABLE: 0},
        PASS_TO_PASS: {PASS: 0, FAIL: 0, UNGRADABLE: 0},
    }
    failed_ids: dict[str, set[str]] = {FAIL_TO_PASS: set(), PASS_TO_PASS: set()}
    ids: set[str] = set()
    answered = rerun = False
    for row in rows:
        kind, verdict = row.kind, row.verdict
        counts[kind][verdict] += 1
        if verdict == FAIL:
            failed_ids[kind].add(row.id)
        ids.add(row.id)
        if row.checks:
            answered = True
        if row.reruns:
            rerun = True
    fix_counts, guard_counts = counts[FAIL_TO_PASS], counts[PASS_TO_PASS]
    fix = [fix_counts[PASS], fix_counts[FAIL], fix_counts[UNGRADABLE]]
    guard = [guard_counts[PASS], guard_counts[FAIL], guard_counts[UNGRADABLE]]

    refusals: list[Refusal] = []
    if len(ids) < len(rows):
        refusals += duplicate_ids(Counter(row.id for row in rows))
    if declared is not None:
        kinds_seen: dict[str, set[str]] = {}
        for row in rows:
            kinds_seen.setdefault(row.id, set()).add(row.kind)
        invalid = {item.case for item in refusals if item.case is not None}
        invalid.update(
            item.case for item in given if item.code == "CASE_INVALID" and item.case is not None
        )
        refusals += case_set_mismatches(kinds_seen, declared, invalid)
    if fix[2] or guard[2]:
        refusals += ungradable_rows(rows)
    refusals += given
    checks: list[RunCheck] = []
    if answers or answered:
        checks, check_refusals = failed_run_checks(rows, answers)
        refusals += check_refusals

    graded = fix[0] + fix[1] + guard[0] + guard[1]
    passed = fix[0] + guard[0]
    has_fix_row = bool(fix[0] or fix[1] or fix[2])
    refusals += coverage_refusals(graded, has_fix_row, declared, bool(refusals))
    refusals.sort(key=sort_key)

    cases = CaseCounts.model_validate(  # the two KindCounts validated with it
        {
            "total": len(rows),
            "graded": graded,
            "passed": passed,
            "failed": fix[1] + guard[1],
            "ungradable": fix[2] + guard[2],
            "fail_to_pass": _kind_counts(*fix),
            "pass_to_pass": _kind_counts(*guard),
            "declared": None if declared is None else len(declared.kinds),
        }
    )
    return Tally(
        rows=rows,
        refusals=refusals,
        checks=checks,
        cases=cases,
        failed=FailedIds.model_validate(
            {
                "fail_to_pass": sorted(failed_ids[FAIL_TO_PASS]),
                "pass_to_pass": sorted(failed_ids[PASS_TO_PASS]),
            }
        ),
        guards_hold=guard[1] == 0,
        fix_rate=fix[0] / (fix[0] + fix[1]) if fix[0] + fix[1] else None,
        case_fraction=passed / graded if graded else None,
        flaky=sorted({row.id for row in rows if row.flaky}) if rerun else [],
    )
