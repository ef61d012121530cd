"""Reports as Markdown, for people (the JSON forms are ``to_json()``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..evaluate.distribution import nearest_rank
from ..util.markdown import cell
from .report import Calibration

__all__ = ["format_number", "latency_summary", "markdown_report", "markdown_stability"]


def format_number(value: float | None, digits: int = 3) -> str:
    """A figure for a table: ``n/a`` for an undefined one."""
    if value is None:
        return "n/a"
    return f"{value:.{digits}f}"


def latency_summary(latencies_ms: Sequence[float]) -> dict[str, float | None]:
    """Median, 95th percentile (nearest rank, as an evaluation
    :class:`~truereward.evaluate.Distribution`'s) and maximum latency;
    ``None`` each when there is no case."""
    ordered = sorted(latencies_ms)
    if not ordered:
        return {"p50_ms": None, "p95_ms": None, "max_ms": None}
    return {
        "p50_ms": nearest_rank(ordered, 1, 2),
        "p95_ms": nearest_rank(ordered, 95, 100),
        "max_ms": ordered[-1],
    }


def _cell(value: object) -> str:
    if value is None:
        return "abstained"
    return cell(str(value).lower() if isinstance(value, bool) else value)


def markdown_report(report: Calibration, title: str = "Judge calibration") -> str:
    """Per-question figures, the misses and the latencies as Markdown."""
    lines = [f"# {title}", ""]
    if report.min_confidence is not None:
        lines += [
            f"Answers with confidence below {report.min_confidence:g} are counted as abstentions.",
            "",
        ]
    lines += [
        "| question | labelled | answered | abstained | correct | accuracy "
        "| accuracy when answered | mean p(label) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, stats in report.questions.items():
        lines.append(
            f"| {_cell(name)} | {stats.total} | {stats.answered} | {stats.undecided} "
            f"| {stats.correct} | {format_number(stats.accuracy)} "
            f"| {format_number(stats.accuracy_when_answered)} "
            f"| {format_number(stats.mean_p_correct)} |"
        )
    lines += ["", f"## Misses ({len(report.misses)})", ""]
    if report.misses:
        lines += ["| case | question | label | decision | confidence |", "|---|---|---|---|---:|"]
        for miss in report.misses:
            case = miss.case_id if miss.case_id is not None else f"#{miss.case_index}"
            lines.append(
                f"| {_cell(case)} | {_cell(miss.question)} | {_cell(miss.label)} "
                f"| {_cell(miss.decision)} | {miss.confidence:.3f} |"
            )
    else:
        lines.append("No decided answer differs from its label.")
    summary = latency_summary(report.latencies_ms)
    lines += [
        "",
        "## Latency",
        "",
        f"{len(report.latencies_ms)} calls; median {format_number(summary['p50_ms'], 1)} ms, "
        f"p95 {format_number(summary['p95_ms'], 1)} ms, max {format_number(summary['max_ms'], 1)}"
        f" ms; total wall time {report.total_ms:.1f} ms.",
    ]
    return "\n".join(lines) + "\n"


def markdown_stability(
    result: Mapping[str, float | None], sources: Sequence[str], cases: int
) -> str:
    """Stability per question as Markdown."""
    lines = [
        "# Judge stability",
        "",
        f"{len(sources)} reports of {cases} cases: the share of cases whose decision "
        "(abstentions included) is the same in every report.",
        "",
        "| question | stability |",
        "|---|---:|",
    ]
    for name, value in result.items():
        lines.append(f"| {_cell(name)} | {format_number(value)} |")
    return "\n".join(lines) + "\n"
