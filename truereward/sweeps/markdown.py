"""Markdown views of sweep summaries, comparisons and stability reports.

Pure functions from the models to text, shared by ``truereward sweep`` and
the Prefect flow's artifacts. An absent value is shown as ``—``, never as 0.
Long lists are cut at ``limit`` rows with a line saying how many more there
are (the JSON output always has them all).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..evaluate.distribution import Distribution, DistributionDelta
from ..util.markdown import cell, code
from .comparison import NoReward, RewardChange, SweepComparison
from .flaky import RunHistory, Stability
from .numbers import ABSENT, real, signed
from .summary import SweepSummary

__all__ = ["render_comparison", "render_stability", "render_summary"]

LIMIT = 50
#: The statistics of a distribution's table, in its columns' order.
_STATS = ("mean", "minimum", "p10", "p50", "p90", "maximum")


def _num(value: float | None) -> str:
    return ABSENT if value is None else real(value)


def _signed(value: float | None) -> str:
    return ABSENT if value is None else signed(value)


def _distribution(distribution: Distribution) -> list[str]:
    if not distribution.present:
        return ["No gradable run: no reward distribution (absent, not 0)."]
    return [
        "| count | mean | min | p10 | p50 | p90 | max |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        "| "
        + " | ".join(
            [str(distribution.count), *(_num(getattr(distribution, key)) for key in _STATS)]
        )
        + " |",
    ]


def _delta(delta: DistributionDelta) -> str:
    return _signed(delta.mean) if delta.present else f"{ABSENT} (a side has no gradable run)"


def _cut(rows: list[str], total: int, limit: int) -> list[str]:
    if total > limit:
        rows.append(f"\n… and {total - limit} more (see `--format json`).")
    return rows


def _named(title: str, runs: Sequence[str], total: int) -> list[str]:
    """``title: a, b, c (and N more).`` naming the first runs of a count."""
    if not total:
        return []
    shown = ", ".join(code(run) for run in runs)
    more = f" and {total - len(runs)} more" if total > len(runs) else ""
    return ["", f"{title} ({total}): {shown}{more}."]


def render_summary(summary: SweepSummary, title: str = "Sweep summary") -> str:
    """The summary as markdown."""
    lines = [
        f"## {title}",
        "",
        f"{summary.runs} runs: {summary.gradable} gradable, {summary.ungradable} ungradable, "
        f"{summary.unreadable} unreadable.",
        "",
        "### Reward (gradable runs only)",
        "",
        *_distribution(summary.reward),
    ]
    if summary.schemes:
        schemes = ", ".join(f"{code(name)} ({count})" for name, count in summary.schemes.items())
        lines += ["", f"Schemes: {schemes}."]
    lines += ["", "### Refusals", ""]
    if summary.refusals:
        lines += ["| code | blame | refusals | runs |", "|---|---|---:|---:|"]
        lines += [
            f"| `{item.code}` | {item.blame} | {item.refusals} | {item.runs} |"
            for item in summary.refusals
        ]
        lines += [
            "",
            "By blame: "
            + ", ".join(
                f"{item.blame} {item.refusals} refusals in {item.runs} runs"
                for item in summary.blame
            )
            + ".",
        ]
    else:
        lines.append("None.")
    attempts = summary.attempts
    lines += [
        "",
        "### Attempts",
        "",
        f"{attempts.total} attempts; {attempts.retried} runs retried, "
        f"{attempts.recovered} of them gradable in the end.",
    ]
    if attempts.by_count:
        lines += ["", "| attempts | runs |", "|---:|---:|"]
        lines += [f"| {item.attempts} | {item.runs} |" for item in attempts.by_count]
    lines += _named("Retried", summary.retried_runs, attempts.retried)
    lines += _named(
        "Still refused for the grader's reasons",
        summary.grader_refused_runs,
        summary.grader_refused,
    )
    if summary.grader_refused:
        unchanged = (
            f", {summary.unchanged} of them graded again with nothing changed"
            if summary.unchanged
            else ""
        )
        lines += [
            "",
            f"Of them {summary.retryable} retryable (grading again may heal them) and "
            f"{summary.needs_fix} needing a fix of the task definition or the reader"
            f"{unchanged} (`truereward sweep retries` says what to change).",
        ]
        lines += _named("Needing a fix", summary.needs_fix_runs, summary.needs_fix)
    if summary.unreadable:
        lines += ["", "### Unreadable grades", "", "| run | why |", "|---|---|"]
        lines += [f"| {cell(item.run)} | {cell(item.why)} |" for item in summary.unreadable_runs]
        if summary.unreadable > len(summary.unreadable_runs):
            lines.append(f"\n… and {summary.unreadable - len(summary.unreadable_runs)} more.")
    return "\n".join(lines) + "\n"


def _changes(title: str, changes: Sequence[RewardChange], limit: int) -> list[str]:
    lines = ["", f"### {title} ({len(changes)})", ""]
    if not changes:
        return [*lines, "None."]
    lines += ["| run | baseline | candidate | delta |", "|---|---:|---:|---:|"]
    lines += [
        f"| {cell(item.run)} | {_num(item.baseline)} | {_num(item.candidate)} "
        f"| {_signed(item.delta)} |"
        for item in changes[:limit]
    ]
    return _cut(lines, len(changes), limit)


def _no_rewards(title: str, items: Sequence[NoReward], side: str, limit: int) -> list[str]:
    lines = ["", f"### {title} ({len(items)})", ""]
    if not items:
        return [*lines, "None."]
    lines += [f"| run | reward ({side}) | state | codes | blame |", "|---|---:|---|---|---|"]
    for item in items[:limit]:
        codes = ", ".join(f"`{each}`" for each in item.codes) or cell(item.why or "")
        lines.append(
            f"| {cell(item.run)} | {_num(item.reward)} | {item.state} | {codes} "
            f"| {', '.join(item.blame) or ABSENT} |"
        )
    return _cut(lines, len(items), limit)


def _names(title: str, names: Sequence[str], limit: int) -> list[str]:
    lines = ["", f"### {title} ({len(names)})", ""]
    if not names:
        return [*lines, "None."]
    lines += [f"- {cell(name)}" for name in names[:limit]]
    return _cut(lines, len(names), limit)


def render_comparison(
    comparison: SweepComparison,
    baseline: str = "baseline",
    candidate: str = "candidate",
    limit: int = LIMIT,
) -> str:
    """The comparison as markdown: one heading per kind of change."""
    base, cand = comparison.baseline, comparison.candidate
    lines = [
        "## Sweep comparison",
        "",
        f"Baseline {code(baseline)}: {base.runs} runs, {base.gradable} gradable, "
        f"mean reward {_num(base.reward.mean)}.",
        f"Candidate {code(candidate)}: {cand.runs} runs, {cand.gradable} gradable, "
        f"mean reward {_num(cand.reward.mean)}.",
        "",
        f"Mean reward delta: {_delta(comparison.reward_delta)}; over the runs gradable on "
        f"both sides: {_delta(comparison.paired_reward_delta)}.",
        f"{comparison.paired} runs in both sweeps, "
        f"{comparison.unchanged} with an unchanged reward.",
    ]
    lines += _changes("Regressions (reward down)", comparison.regressions, limit)
    lines += _changes("Fixes (reward up)", comparison.fixes, limit)
    lines += _no_rewards(
        "Newly ungradable (no reward in the candidate; not regressions)",
        comparison.newly_ungradable,
        "baseline",
        limit,
    )
    lines += _no_rewards(
        "Newly gradable (no reward in the baseline; not fixes)",
        comparison.newly_gradable,
        "candidate",
        limit,
    )
    lines += _names("Ungradable on both sides", comparison.still_ungradable, limit)
    lines += _names("Only in the candidate", comparison.added, limit)
    lines += _names("Only in the baseline", comparison.removed, limit)
    return "\n".join(lines) + "\n"


def _histories(title: str, items: Sequence[RunHistory], limit: int) -> list[str]:
    lines = ["", f"### {title} ({len(items)})", ""]
    if not items:
        return [*lines, "None."]
    lines += ["| run | per sweep |", "|---|---|"]
    for item in items[:limit]:
        outcomes = ", ".join(
            _num(reward) if state == "gradable" else state
            for state, reward in zip(item.states, item.rewards, strict=True)
        )
        lines.append(f"| {cell(item.run)} | {outcomes} |")
    return _cut(lines, len(items), limit)


def render_stability(report: Stability, labels: Sequence[str] = (), limit: int = LIMIT) -> str:
    """The stability report as markdown."""
    lines = ["## Stability across sweeps", ""]
    if labels:
        lines += [f"{index}. {code(label)}" for index, label in enumerate(labels, 1)] + [""]
    lines += [
        f"{report.runs} runs over {report.sweeps} sweeps: {report.stable} stable, "
        f"{len(report.flaky_runs)} flaky, {len(report.flips)} flip gradability, "
        f"{report.always_ungradable} never gradable, {report.single} in one sweep only "
        f"({report.incomplete} missing from some sweep).",
    ]
    lines += _histories("Flaky runs (different rewards)", report.flaky_runs, limit)
    lines += _histories("Runs that flip gradability (not counted as flaky)", report.flips, limit)
    lines += ["", f"### Flaky cases ({len(report.flaky_cases)} of {report.cases})", ""]
    if report.flaky_cases:
        lines += ["| run | case | passed | failed | ungradable |", "|---|---|---:|---:|---:|"]
        lines += [
            f"| {cell(item.run)} | {cell(item.case)} | {item.passed} | {item.failed} "
            f"| {item.ungradable} |"
            for item in report.flaky_cases[:limit]
        ]
        lines = _cut(lines, len(report.flaky_cases), limit)
    else:
        lines.append("None.")
    return "\n".join(lines) + "\n"
