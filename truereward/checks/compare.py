"""Comparing two result files (``truereward checks score`` or ai-eval-forge
``score`` JSON): what regressed, what improved, what moved.

Cases are paired by id: regressions, improvements, score changes beyond the
tolerance (exact on the four-decimal scores; default 0), unchanged, added,
removed, and ``errored_ids`` for cases the current run could not score.
``has_regressions`` (exit 1) when anything regressed, was removed or could
not be scored. A duplicate id is an error, pass rates are computed from the
cases, and the JSON is ai-eval-forge's plus ``score_delta``,
``errored_ids`` and ``tolerance``. docs/checks.md, "Compare".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, computed_field

from ..record.validation import describe
from ..util.dumped import Dumped
from ..util.exceptions import TruerewardError
from ..util.markdown import cell, code
from ..util.strictjson import StrictJSONError, loads

__all__ = [
    "BadResults",
    "CaseDiff",
    "Comparison",
    "ResultCase",
    "compare",
    "load_results",
    "render_markdown",
]


class BadResults(TruerewardError, ValueError):
    """A result file that cannot be compared; the message names the file,
    the case and the field."""


class ResultCase(BaseModel):
    """One case of a result file: what the comparison reads of it."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    id: str | int
    passed: bool
    score: float | None
    error: Any = None

    @property
    def key(self) -> str:
        """The id as text."""
        return self.id if isinstance(self.id, str) else str(self.id)

    @property
    def errored(self) -> bool:
        """Whether the case could not be scored."""
        return self.score is None or self.error is not None


def load_results(path: str, data: bytes | None = None) -> list[ResultCase]:
    """The cases of the result file ``path`` (or of ``data``, named
    ``path``). :class:`BadResults` when it is not a result file or when two
    cases share an id."""
    if data is None:
        from ..util import safefile

        try:
            data = safefile.read_regular(path)  # no FIFO, device, symlink; bounded
        except (safefile.NotAFile, safefile.TooLarge) as error:
            raise BadResults(f"{path}: refused: {error.strerror}") from None
        except OSError as error:
            raise BadResults(f"{path}: cannot read: {error.strerror or error}") from None
    try:
        document = loads(data)
    except StrictJSONError as error:
        raise BadResults(f"{path}: {error}") from None
    if not isinstance(document, dict) or not isinstance(document.get("cases"), list):
        raise BadResults(f"{path}: not a result file (an object with a 'cases' list)")
    cases: list[ResultCase] = []
    seen: dict[str, int] = {}
    duplicates: list[str] = []
    for position, raw in enumerate(document["cases"]):
        try:
            case = ResultCase.model_validate(raw)
        except ValidationError as error:
            problem = describe(error, limit=3, whole="case", depth=1)
            raise BadResults(f"{path}: cases[{position}]: {problem}") from None
        first = seen.setdefault(case.key, position)
        if first != position:
            duplicates.append(f"{case.key!r} (cases[{first}] and cases[{position}])")
        cases.append(case)
    if duplicates:
        shown = ", ".join(duplicates[:5]) + (" ..." if len(duplicates) > 5 else "")
        raise BadResults(f"{path}: {len(duplicates)} duplicate case id(s): {shown}")
    return cases


def _decimal(value: float) -> Fraction:
    return Fraction(repr(value))


@dataclass(frozen=True)
class CaseDiff(Dumped):
    """One case present in both files."""

    id: str
    baseline_passed: bool
    current_passed: bool
    baseline_score: float | None
    current_score: float | None

    @property
    def delta(self) -> Fraction | None:
        """current - baseline, exactly, rounded to four decimals; None when a
        side has no score."""
        if self.baseline_score is None or self.current_score is None:
            return None
        return round(_decimal(self.current_score) - _decimal(self.baseline_score), 4)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def score_delta(self) -> float | None:
        """:attr:`delta` as a float."""
        delta = self.delta
        return None if delta is None else float(delta)


@dataclass
class Comparison(Dumped):
    """The comparison of two result files (see the module docstring)."""

    tolerance: Annotated[float, Field(exclude=True)] = 0.0
    regressions: list[CaseDiff] = field(default_factory=list)
    improvements: list[CaseDiff] = field(default_factory=list)
    score_changes: list[CaseDiff] = field(default_factory=list)
    unchanged: int = 0
    added_ids: list[str] = field(default_factory=list)
    removed_ids: list[str] = field(default_factory=list)
    errored_ids: list[str] = field(default_factory=list)
    baseline_pass_rate: float = 0.0
    current_pass_rate: float = 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_rate_delta(self) -> float:
        return round(self.current_pass_rate - self.baseline_pass_rate, 4)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def has_regressions(self) -> bool:
        """Something regressed, was removed, or could not be scored now."""
        return bool(self.regressions or self.removed_ids or self.errored_ids)

    # Last in the JSON, as ai-eval-forge's keys come first.
    @computed_field(alias="tolerance")  # type: ignore[prop-decorator]
    @property
    def _tolerance(self) -> float:
        return self.tolerance


def _pass_rate(cases: list[ResultCase]) -> float:
    return sum(1 for case in cases if case.passed) / len(cases) if cases else 0.0


def _order(diff: CaseDiff) -> tuple[Fraction, str]:
    return (diff.delta or Fraction(0), diff.id)


def compare(
    baseline: list[ResultCase], current: list[ResultCase], *, tolerance: float = 0.0
) -> Comparison:
    """Compare two lists of result cases (ids unique in each, see
    :func:`load_results`). ``tolerance`` is finite and at least 0."""
    if not tolerance >= 0 or tolerance == float("inf"):
        raise ValueError(f"the tolerance is a finite number >= 0, got {tolerance!r}")
    limit = _decimal(float(tolerance))
    result = Comparison(
        tolerance=float(tolerance),
        baseline_pass_rate=_pass_rate(baseline),
        current_pass_rate=_pass_rate(current),
    )
    before = {case.key: case for case in baseline}
    after = {case.key: case for case in current}
    result.added_ids = sorted(set(after) - set(before))
    result.removed_ids = sorted(set(before) - set(after))
    result.errored_ids = sorted(key for key, case in after.items() if case.errored)
    for key in sorted(set(before) & set(after)):
        old, new = before[key], after[key]
        diff = CaseDiff(key, old.passed, new.passed, old.score, new.score)
        delta = diff.delta
        if old.passed and not new.passed:
            result.regressions.append(diff)
        elif new.passed and not old.passed:
            result.improvements.append(diff)
        elif delta is not None and abs(delta) > limit:
            result.score_changes.append(diff)
        else:
            result.unchanged += 1
    result.regressions.sort(key=_order)
    result.improvements.sort(key=lambda diff: (-_order(diff)[0], diff.id))
    result.score_changes.sort(key=_order)
    return result


def _score(value: float | None) -> str:
    return "-" if value is None else repr(value)


def _delta(diff: CaseDiff) -> str:
    delta = diff.score_delta
    return "" if delta is None else f" ({delta:+})"


def render_markdown(
    result: Comparison, *, baseline_label: str = "baseline", current_label: str = "current"
) -> str:
    """The comparison as Markdown (ai-eval-forge's layout, plus the cases
    that could not be scored)."""
    sign = "+" if result.pass_rate_delta >= 0 else ""
    lines = [
        "# Checks comparison",
        "",
        f"Pass rate: {baseline_label} {result.baseline_pass_rate:.0%} → "
        f"{current_label} {result.current_pass_rate:.0%} ({sign}{result.pass_rate_delta:.0%})",
        "",
        f"- Regressions: **{len(result.regressions)}**",
        f"- Improvements: **{len(result.improvements)}**",
        f"- Score changes (no flip, beyond {result.tolerance:g}): {len(result.score_changes)}",
        f"- Unchanged: {result.unchanged}",
        f"- Added cases: {len(result.added_ids)}",
        f"- Removed cases: {len(result.removed_ids)}",
        f"- Not scored now (errors): {len(result.errored_ids)}",
        "",
    ]
    for title, diffs, was, now in (
        ("Regressions", result.regressions, "yes", "**no**"),
        ("Improvements", result.improvements, "no", "**yes**"),
    ):
        if diffs:
            lines += [
                f"## {title}",
                "",
                "| Case | Score | Was passing | Now passing |",
                "| --- | ---: | :---: | :---: |",
            ]
            lines += [
                f"| {cell(diff.id)} | {_score(diff.baseline_score)} → "
                f"{_score(diff.current_score)}{_delta(diff)} | {was} | {now} |"
                for diff in diffs
            ]
            lines.append("")
    if result.score_changes:
        lines += ["## Score changes (still passing or still failing)", ""]
        lines += [
            f"- {code(diff.id)}: {_score(diff.baseline_score)} → {_score(diff.current_score)}"
            f"{_delta(diff)}"
            for diff in result.score_changes
        ]
        lines.append("")
    for title, ids in (
        ("New cases", result.added_ids),
        ("Removed cases", result.removed_ids),
        ("Not scored now (errors)", result.errored_ids),
    ):
        if ids:
            lines += [f"## {title}", ""] + [f"- {code(case_id)}" for case_id in ids] + [""]
    return "\n".join(lines) + "\n"
