"""Markdown views of a :class:`~truereward.grading.report.GradeRunResult`:
the per-run table and the summary, shared by the flow's artifacts and the
command that prints them. An absent reward is ``—``, never 0."""

from __future__ import annotations

from ..sweeps.markdown import render_summary
from ..util.markdown import cell
from .report import GradeRunResult

__all__ = ["render_result", "render_runs"]

#: The table's columns, in :meth:`~truereward.grading.report.RunLine.cells`'s order.
_COLUMNS = (
    "run",
    "state",
    "reward",
    "codes",
    "why",
    "earlier",
    "attempts",
    "blame",
    "published",
)


def render_runs(result: GradeRunResult) -> str:
    """One table row per run (at most the report's table limit; the line
    under the table says when some are left out)."""
    lines = [
        "| " + " | ".join(_COLUMNS) + " |",
        "|---|---|---:|---|---|---:|---|---|---|",
    ]
    for line in result.runs:
        cells = line.cells()
        lines.append("| " + " | ".join(cell(cells[name]) for name in _COLUMNS) + " |")
    left_out = result.summary.runs - len(result.runs)
    if left_out > 0:
        lines.append(f"\n… and {left_out} more gradable runs (first attempt) not listed.")
    return "\n".join(lines) + "\n"


def render_result(result: GradeRunResult, title: str = "grade-run") -> str:
    """The headline, what publishing did, the failures and the sweep summary."""
    decisions = ", ".join(f"{name} {count}" for name, count in result.published.items())
    lines = [
        f"# {cell(title)}: {result.state_name}",
        "",
        result.headline() + ".",
        "",
        f"Published: {decisions or 'nothing'}.",
    ]
    if result.already_graded:
        lines.append(
            f"{result.already_graded} runs already had a grade published: not graded again "
            "(their stored grade was published again, which repairs an interrupted publish)."
        )
    if result.failures:
        lines += ["", "## Not published", "", "| run | why |", "|---|---|"]
        lines += [f"| {cell(item.run)} | {cell(item.why)} |" for item in result.failures]
        if result.failed > len(result.failures):
            lines.append(f"\n… and {result.failed - len(result.failures)} more.")
    if result.not_graded:
        lines += ["", "## Not graded (not runs)", "", "| entry | why |", "|---|---|"]
        lines += [f"| {cell(item.entry)} | {cell(item.why)} |" for item in result.not_graded]
    lines += ["", render_summary(result.summary, title="Sweep summary")]
    return "\n".join(lines)
