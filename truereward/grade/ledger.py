"""The ledger of one graded test session: declared cases, rows, and every
reason the session is not the whole case set.

Nothing here knows pytest (:mod:`truereward.plugin` is the glue). Rows and
declarations arrive in any order, from any process; the ledger folds once,
at the end, into a grade document. It never loses a problem: a test that
ended without a row, a row it cannot read, a test that is not a case, a
selection or stop that can leave cases out, each becomes a refusal with a
sentence saying what happened.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..codes import Ungradable
from ..record.cases import CaseResult
from ..record.refusal import Refusal, refusal
from .document import GradeDocument, grade_document

__all__ = ["Ledger", "fold_repetitions", "grade_one"]


def grade_one(case: Any, assess: Callable[[Any], Any]) -> tuple[CaseResult, BaseException | None]:
    """Grade one case: ``assess(case)`` (the verifier author's function;
    not a :class:`~truereward.readers.Reader`, which reads a whole evidence
    file) must return the :class:`CaseResult` of that case or raise
    :class:`~truereward.codes.Ungradable`. Returns the row (timed) and what
    ``assess`` raised. An ``assess`` that raised anything else, or answered
    with something that is not this case's row, gives an ungradable row
    under ``CASE_NOT_GRADED``."""
    started = time.perf_counter()
    raised: BaseException | None = None
    try:
        result = assess(case)
        if not isinstance(result, CaseResult) or result.id != case.id:
            raise TypeError(
                f"assessing the case answered {result!r:.200}, which is not the CaseResult "
                f"of case {case.id}"
            )
    except Ungradable as error:
        raised = error
        result = CaseResult(
            id=case.id, kind=case.kind, verdict="ungradable", code=error.code, why=error.why
        )
    except Exception as error:  # noqa: BLE001 - a bug in assess is the case's missing result
        raised = error
        result = CaseResult(
            id=case.id,
            kind=case.kind,
            verdict="ungradable",
            code="CASE_NOT_GRADED",
            why=f"{case.id}: assessing the case raised {type(error).__name__}: {error}",
        )
    return result.model_copy(update={"duration_s": time.perf_counter() - started}), raised


def fold_repetitions(rows: Sequence[CaseResult]) -> CaseResult:
    """One row for a case whose test ran several times on purpose (pytest-repeat's
    ``--count``), its repetitions in order. Every repetition must pass:

    - any repetition ungradable: the row is ungradable, with the first such
      repetition's code (the case was not fully measured; never a pass or a fail);
    - else any repetition failed: the row fails, its why counting the failures and
      quoting the first;
    - else the row passes.

    The row is the deciding repetition's (the first ungradable one, else the first
    failed one, else the last), with one observation per repetition (its verdict and
    why), ``measures`` ``repetitions`` and ``repetitions_passed`` added, and the
    durations summed. One row is returned as it is."""
    if len(rows) == 1:
        return rows[0]
    count = len(rows)
    numbered = list(enumerate(rows, 1))
    ungradable = [(step, row) for step, row in numbered if row.verdict == "ungradable"]
    failed = [(step, row) for step, row in numbered if row.verdict == "fail"]
    passed = count - len(ungradable) - len(failed)
    if ungradable:
        step, base = ungradable[0]
        why = f"repetition {step} of {count} could not be graded: {base.why}"
    elif failed:
        step, base = failed[0]
        why = f"failed {len(failed)} of {count} repetitions; repetition {step}: {base.why}"
    else:
        base = rows[-1]
        why = f"passed all {count} repetitions" + (f"; the last: {base.why}" if base.why else "")
    seen = [
        {"name": f"repetition {step} of {count}", "verdict": row.verdict, "why": row.why[:300]}
        for step, row in numbered
    ]
    return CaseResult.from_row(
        {
            **base.to_row(),
            "why": why,
            "observations": [*base.to_row()["observations"], *seen],
            "measures": {
                **base.measures,
                "repetitions": float(count),
                "repetitions_passed": float(passed),
            },
            "duration_s": sum(row.duration_s for row in rows),
        }
    )


class Ledger:
    """Everything one session reported, folded once at the end."""

    def __init__(self) -> None:
        self.declared: list[dict[str, Any]] = []
        self.rows: list[CaseResult] = []
        self.refusals: list[Refusal] = []

    def declare(self, cases: Iterable[Mapping[str, Any]]) -> None:
        """Take declared cases in; the same ``(id, kind)`` declared again
        (by every xdist worker, by two modules) is one declaration, a
        conflicting one is kept and refused by the fold."""
        seen = {(case["id"], case["kind"]) for case in self.declared}
        for case in cases:
            key = (case.get("id"), case.get("kind"))
            if key not in seen:
                seen.add(key)
                self.declared.append({"id": key[0], "kind": key[1]})

    def add_row(self, test: str, row: Mapping[str, Any]) -> None:
        """Take one test's row in. A row this process cannot read (an
        unknown code, a bad field) is a refusal about that case, never a
        crash of the session."""
        from pydantic import ValidationError

        from ..record.validation import describe

        try:
            self.rows.append(CaseResult.from_row(row))
        except ValidationError as error:
            case = row.get("id") if isinstance(row.get("id"), str) else None
            self.refuse(
                "CASE_NOT_GRADED",
                f"{test}: its row cannot be read here: {describe(error, limit=1, whole='(row)')}",
                case,
            )

    def add_repetitions(self, test: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Take in the rows of one case from the repetitions of one test, in
        order, as one row (:func:`fold_repetitions`). A row this process cannot
        read is a refusal about that case, as in :meth:`add_row`."""
        from pydantic import ValidationError

        from ..record.validation import describe

        results: list[CaseResult] = []
        for row in rows:
            try:
                results.append(CaseResult.from_row(row))
            except ValidationError as error:
                case = row.get("id") if isinstance(row.get("id"), str) else None
                self.refuse(
                    "CASE_NOT_GRADED",
                    f"{test}: a repetition's row cannot be read here: "
                    f"{describe(error, limit=1, whole='(row)')}",
                    case,
                )
                return
        self.rows.append(fold_repetitions(results))

    def refuse(self, code: str, why: str, case: str | None = None) -> None:
        """Record a refusal about the session (or one case)."""
        self.refusals.append(refusal(code, why, case))

    def document(
        self,
        run: Mapping[str, Any] | None = None,
        publication: Mapping[str, Any] | None = None,
    ) -> GradeDocument:
        """The grade document over everything that arrived (``publication``:
        how its files are laid out, see :class:`~truereward.grade.document.Publication`)."""
        refusals = list(self.refusals)
        case_set: object = self.declared
        if not self.declared:
            refusals.append(
                refusal(
                    "CASE_INVALID",
                    "no case set was declared (call truereward.plugin.cases(...) in "
                    "the test module): without it a subset cannot be told from the whole",
                )
            )
            case_set = None
        return grade_document(
            self.rows, case_set=case_set, refusals=refusals, run=run, publication=publication
        )
