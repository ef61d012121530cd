"""``markdown``: a summary and one table row per case (ai-eval-forge's
layout: case, result, score, failed checks), plus the errors when some
cases could not be scored."""

from __future__ import annotations

from ...util.markdown import cell, code
from ..model import Summary
from ..suite import ScoredCase
from . import Run


class MarkdownFormat:
    name = "markdown"
    summary_first = True
    separator = ""

    def case(self, scored: ScoredCase, run: Run) -> str:
        outcome = scored.outcome
        if outcome.error is not None:
            where = f"{run.file}:{scored.line}: " if scored.line is not None else ""
            return f"| {cell(outcome.id)} | error | - | {cell(where + outcome.error)} |\n"
        failed = ", ".join(check.type for check in outcome.checks if not check.passed)
        result = "pass" if outcome.passed else "fail"
        return f"| {cell(outcome.id)} | {result} | {outcome.score} | {cell(failed or '-')} |\n"

    def head(self, run: Run, summary: Summary | None) -> str:
        assert summary is not None
        lines = [
            "# Checks report",
            "",
            f"- File: {code(run.file)}",
            f"- Total: {summary.total}",
            f"- Passed: {summary.passed}",
            f"- Failed: {summary.failed}",
        ]
        if summary.errors:
            lines.append(f"- Errors (not scored): {summary.errors}")
        lines += [
            f"- Pass rate: {round(summary.pass_rate * 100)}%",
            f"- Average score: {round(summary.average_score, 4)}",
            "",
            "| Case | Result | Score | Failed checks |",
            "| --- | --- | ---: | --- |",
        ]
        return "\n".join(lines) + "\n"

    def tail(self, run: Run, summary: Summary) -> str:
        return ""


FORMAT = MarkdownFormat()
