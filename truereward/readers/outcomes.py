"""From test outcomes to case rows, with SWE-bench 5 semantics.

The test-report readers parse their format into :class:`TestOutcome`
entries; :func:`rows_for` maps the declared cases onto them, one row per
declared case: a test listed several times is one result (its reruns), a
case is never guessed (``CASE_INVALID``), and one bad entry is not a bad
report. docs/readers.md, "From outcomes to rows", gives the rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from ..record.cases import CaseResult, Kind, Observation, Rerun, RerunVerdict, Verdict
from ..record.taskspec import CaseSpec, TaskSpec

__all__ = ["MAX_NAME", "ReportedOutcome", "TestOutcome", "rows_for", "strip_parameters"]

#: The longest test name, classname or file path a reader keeps an entry
#: with: twice the longest case id (512 characters). A test named longer is
#: left out as a test without a name is: no declared case is named so (the
#: matching rules look up keys no longer than an id, or relate an id to a
#: path or classname written from another root), and what a reader keeps
#: must not grow with what a run writes there.
MAX_NAME = 1024


class ReportedOutcome(Enum):
    """What a report says happened to one test."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    XFAIL = "xfail"


@dataclass(slots=True)  # built per test case by the thousand: plain slots, not frozen
class TestOutcome:
    """One test entry of a report. ``keys`` are the identities a declared
    case id is matched against (the reader decides them); ``merged`` marks a
    legacy entry that may stand for several parametrised cases (a declared
    ``test_x[2]`` absent from the report whose ``test_x`` matches it is
    refused); ``label`` is how the report names it, for messages and for
    telling tests apart."""

    label: str
    outcome: ReportedOutcome
    keys: tuple[str, ...] = ()
    message: str = ""
    duration_s: float | None = None
    merged: bool = False
    #: The report's own word for the outcome (its status, or its result element).
    reported: str = ""
    #: Anything else the report said (a raw status), for the row's observations.
    raw: str = ""
    #: Earlier executions the entry itself records (verdict, why), oldest first.
    reruns: tuple[tuple[RerunVerdict, str], ...] = ()
    #: The keys again with the names trimmed of surrounding whitespace, the
    #: first being the trimmed label; empty when trimming changes nothing
    #: (see :func:`truereward.readers.matching.trimmed_fallback`).
    trimmed: tuple[str, ...] = ()
    #: Why the entry is malformed; a case it matches is EVIDENCE_MALFORMED.
    invalid: str = ""

    __test__ = False  # not a pytest test class, whatever its name says


def strip_parameters(test_id: str) -> str:
    """``test_y[2-a]`` -> ``test_y``: the id of the function a parametrised
    case belongs to (unchanged when there are no parameters)."""
    if test_id.endswith("]") and "[" in test_id:
        return test_id[: test_id.index("[")]
    return test_id


_VERDICT: dict[tuple[str, ReportedOutcome], Verdict] = {
    ("fail_to_pass", ReportedOutcome.PASSED): "pass",
    ("fail_to_pass", ReportedOutcome.XFAIL): "pass",
    ("fail_to_pass", ReportedOutcome.FAILED): "fail",
    ("fail_to_pass", ReportedOutcome.ERROR): "fail",
    ("fail_to_pass", ReportedOutcome.SKIPPED): "fail",
    ("pass_to_pass", ReportedOutcome.PASSED): "pass",
    ("pass_to_pass", ReportedOutcome.XFAIL): "pass",
    ("pass_to_pass", ReportedOutcome.FAILED): "fail",
    ("pass_to_pass", ReportedOutcome.ERROR): "fail",
    ("pass_to_pass", ReportedOutcome.SKIPPED): "pass",
}

_WHY = {
    ReportedOutcome.PASSED: "",
    ReportedOutcome.XFAIL: "expected failure (xfail) counts as a pass",
    ReportedOutcome.FAILED: "the test failed",
    ReportedOutcome.ERROR: "the test errored",
    ReportedOutcome.SKIPPED: "the test was skipped",
}


#: Outcomes a rerun is made of, and its verdict: a test is rerun after it
#: failed or errored, until it passes; a skip or an expected failure is
#: never rerun.
_RERUN_VERDICT: dict[ReportedOutcome, RerunVerdict] = {
    ReportedOutcome.PASSED: "pass",
    ReportedOutcome.FAILED: "fail",
    ReportedOutcome.ERROR: "fail",
}
_RERUN_OUTCOMES = frozenset(_RERUN_VERDICT)


def _row(case_id: str, kind: Kind, entries: Sequence[TestOutcome]) -> CaseResult:
    """The row of a case from the entries of its test, in report order: the
    last one is the result, the earlier ones reruns (see the module
    docstring; one outcome throughout is one result, not reruns)."""
    last = entries[-1]
    verdict = _VERDICT[(kind, last.outcome)]
    why = _WHY[last.outcome]
    if last.outcome is ReportedOutcome.SKIPPED:
        why += (
            " (a skipped guard holds)"
            if kind == "pass_to_pass"
            else " (a skipped fail-to-pass test does not show the fix)"
        )
    if last.message and verdict == "fail":
        why = f"{why}: {last.message[:500]}"
    reruns = [Rerun(verdict=item[0], why=item[1][:500]) for item in last.reruns]
    if len({entry.outcome for entry in entries}) > 1:
        for entry in entries[:-1]:
            reruns += [Rerun(verdict=item[0], why=item[1][:500]) for item in entry.reruns]
            reruns.append(Rerun(verdict=_RERUN_VERDICT[entry.outcome], why=entry.message[:500]))
    measures = {} if last.duration_s is None else {"duration_ms": last.duration_s * 1000}
    return CaseResult(
        id=case_id,
        kind=kind,
        verdict=verdict,
        why=why,
        observations=[
            Observation(name=entry.label, verdict=entry.outcome.value, why=entry.raw)
            for entry in entries
        ],
        measures=measures,
        reruns=reruns,
    )


def case_invalid(case: CaseSpec, why: str) -> CaseResult:
    """The row of a declared case that cannot be graded as declared (invalid
    options, an ambiguous or merged match): ``CASE_INVALID``, the grader's."""
    return CaseResult(
        id=case.id, kind=case.kind, verdict="ungradable", code="CASE_INVALID", why=why
    )


def _explained(found: Sequence[TestOutcome], passed_reruns: bool) -> bool:
    """Whether the entries of one test, in report order, are reruns and a
    final result (module docstring)."""
    outcomes = {entry.outcome for entry in found}
    if len(outcomes) == 1:
        return True
    if not outcomes <= _RERUN_OUTCOMES:
        return False
    return passed_reruns or all(entry.outcome is not ReportedOutcome.PASSED for entry in found[:-1])


def rows_for(
    spec: TaskSpec,
    entries: Iterable[TestOutcome],
    match: Callable[[str], list[TestOutcome]],
    *,
    source: str,
    passed_reruns: bool = False,
    unnamed: int = 0,
) -> list[CaseResult]:
    """One row per declared case of ``spec``. ``match(case_id)`` returns the
    entries that are that case (the reader's matching rules); ``entries`` are
    all of them, or at least every one ``match`` can return; ``source``
    names the report in messages; ``passed_reruns``: whether an earlier
    entry that looks passed can be a rerun (JUnit XML); ``unnamed``: how
    many tests of the report have no name (the row of an absent case says
    so). A declared ``test_x[2]`` that matches nothing, while ``test_x``
    matches a merged entry, is ``CASE_INVALID``; a case that matches a
    malformed entry is ``EVIDENCE_MALFORMED``."""
    entries = list(entries)
    any_merged = any(entry.merged for entry in entries)
    any_invalid = any(entry.invalid for entry in entries)
    absent = f"absent from {source}"
    if unnamed:
        absent += (
            f" (it also lists {unnamed} test{'s' if unnamed > 1 else ''} without a name "
            f"or with one over {MAX_NAME} characters, which no case can match)"
        )

    def row(case: CaseSpec) -> CaseResult:
        found = match(case.id)
        if not found:
            whole = strip_parameters(case.id)
            if any_merged and whole != case.id and any(entry.merged for entry in match(whole)):
                return case_invalid(
                    case,
                    f"{source} merged the parametrised cases of {whole} into one entry, so "
                    f"{case.id} cannot be told apart (a legacy report; upgrade the reporter)",
                )
            return CaseResult(id=case.id, kind=case.kind, verdict="fail", why=absent)
        labels = sorted({entry.label for entry in found})
        if len(labels) > 1:
            return case_invalid(
                case,
                f"{case.id} matches {len(labels)} different tests of {source} "
                f"({', '.join(labels[:5])}); the match is ambiguous",
            )
        invalid = (
            next((entry.invalid for entry in found if entry.invalid), "") if any_invalid else ""
        )
        if invalid:
            return CaseResult(
                id=case.id,
                kind=case.kind,
                verdict="ungradable",
                code="EVIDENCE_MALFORMED",
                why=f"{source}: {labels[0]} is a malformed entry: {invalid}",
            )
        if not _explained(found, passed_reruns):
            listed = ", ".join(entry.outcome.value for entry in found[:5])
            return case_invalid(
                case,
                f"{source} lists {labels[0]} {len(found)} times with outcomes no rerun "
                f"explains ({listed}): a test is rerun only after it failed",
            )
        return _row(case.id, case.kind, found)

    return [row(case) for case in spec.cases]
