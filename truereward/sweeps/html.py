"""The sweep report as one self-contained HTML page (``truereward sweep report``).

:func:`render_report` is pure: a :class:`~truereward.sweeps.SweepSummary`,
the retried runs, optionally their tally and a
:class:`~truereward.sweeps.SweepComparison` in, a ``str`` of HTML out, so
the ``grade-run`` flow renders the same page as the command line. The page
is self-contained (inline CSS and SVG, no script), shows an absent value as
``—`` (never 0), names every number (``data-metric``) and escapes
everything that comes from a grade. docs/sweeps.md, "Report",
gives what the page shows and the rules it keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from html import escape

from ..evaluate.distribution import DistributionDelta
from ..util.terminal import printable
from .charts import Bar, bar_chart
from .comparison import NoReward, RewardChange, SweepComparison
from .numbers import ABSENT, real
from .numbers import signed as signed_text
from .retries import RetriedRun, RetriesTally
from .summary import SweepSummary

__all__ = ["ABSENT", "LIMIT", "render_report"]

#: Rows of a list shown at most (the rest is counted: "and K more").
LIMIT = 50

_STATS = (
    ("mean", "mean"),
    ("minimum", "min"),
    ("p10", "p10"),
    ("p50", "p50"),
    ("p90", "p90"),
    ("maximum", "max"),
)

_STYLE = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
  margin: 0 auto; max-width: 1100px; padding: 16px 24px 48px; color: #1b1b1b;
  background: #fff; line-height: 1.4; }
h1 { font-size: 1.6em; margin: 0.4em 0 0.2em; word-break: break-all; }
h2 { font-size: 1.25em; margin: 1.6em 0 0.5em; border-bottom: 1px solid #ddd;
  padding-bottom: 0.2em; }
h3 { font-size: 1.05em; margin: 1.2em 0 0.4em; }
p.sub { color: #555; margin: 0 0 1em; word-break: break-all; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 12px 0; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: 10px 16px; min-width: 110px;
  background: #fafafa; }
.card .num { display: block; font-size: 1.7em; font-weight: 600; }
.card .label { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; margin: 8px 0; font-size: 0.95em; }
th, td { border: 1px solid #ddd; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
td code, li code { word-break: break-all; }
.absent { color: #888; }
.still { color: #b00020; font-weight: 600; }
ul.attempts { margin: 0; padding: 0; list-style: none; }
ul.attempts li.ok { color: #2e7d32; }
pre { background: #f6f8fa; border: 1px solid #ddd; padding: 8px 12px; overflow-x: auto;
  white-space: pre-wrap; word-break: break-all; }
figure.chart { margin: 8px 0 16px; }
figure.chart figcaption { color: #333; font-size: 0.92em; margin-top: 2px; }
svg.chart { display: block; margin: 8px 0 4px; max-width: 100%; height: auto; }
svg.chart text { fill: #1b1b1b; font-family: inherit; }
.more { color: #555; font-style: italic; }
footer { margin-top: 3em; color: #777; font-size: 0.85em; }
"""


def _e(text: str) -> str:
    # printable: a bidi override in a run's text would reorder its cell.
    return escape(printable(text), quote=True)


def _num(metric: str, value: int | float | None, *, signed: bool = False) -> str:
    """One number as the page shows it: a ``<span>`` with its
    ``data-metric``, its exact ``data-value`` and its text (an int as is, a
    float rounded to 4 decimals, ``+`` before a positive delta when
    ``signed``); ``None`` is ``—`` without a ``data-value``."""
    name = _e(metric)
    if value is None:
        return f'<span class="num absent" data-metric="{name}">{ABSENT}</span>'
    if isinstance(value, bool):
        raise TypeError(f"{metric}: a number, not a bool")
    exact, text = _exact_and_text(value, signed=signed)
    return f'<span class="num" data-metric="{name}" data-value="{_e(exact)}">{text}</span>'


def _exact_and_text(value: int | float, *, signed: bool = False) -> tuple[str, str]:
    """A number's exact ``data-value`` and its text (as :func:`_num` shows it)."""
    if isinstance(value, int):
        return str(value), str(value)
    return repr(float(value)), (signed_text if signed else real)(value)


def _td(metric: str, value: int | float | None, *, signed: bool = False) -> str:
    return f'<td class="n">{_num(metric, value, signed=signed)}</td>'


def _bar(
    label: str,
    metric: str,
    value: int | float,
    kind: str = "count",
    label_metric: str | None = None,
    label_markup: str | None = None,
) -> Bar:
    exact, text = _exact_and_text(value)
    return Bar(label, float(value), text, metric, exact, kind, label_metric, label_markup)


def _card(metric: str, value: int | float | None, label: str) -> str:
    return f'<div class="card">{_num(metric, value)}<span class="label">{_e(label)}</span></div>'


def _more(metric: str, hidden: int, hint: str = "") -> str:
    if hidden <= 0:
        return ""
    tail = f" ({hint})" if hint else ""
    return f'<p class="more">… and {_num(metric, hidden)} more{_e(tail)}.</p>'


def _figure(chart: str, caption: str) -> str:
    """A chart with a caption a reader sees (the SVG's own title is only
    its accessible name); ``caption`` is markup, already escaped."""
    if not chart:
        return ""
    return f'<figure class="chart">{chart}<figcaption>{caption}</figcaption></figure>'


def _bound(metric: str, value: float) -> str:
    """A histogram bound inside a chart label: a ``<tspan>`` carrying its
    metric, as every number of the page does."""
    return f'<tspan data-metric="{_e(metric)}" data-value="{_e(repr(value))}">{real(value)}</tspan>'


def _runs(count: int) -> str:
    return "run" if count == 1 else "runs"


def _codes(codes: Sequence[str]) -> str:
    return ", ".join(f"<code>{_e(code)}</code>" for code in codes)


# --- Sections ----------------------------------------------------------------------


def _counts(summary: SweepSummary) -> list[str]:
    return [
        '<section id="counts">',
        '<div class="cards">',
        _card("runs", summary.runs, "runs"),
        _card("gradable", summary.gradable, "gradable"),
        _card("ungradable", summary.ungradable, "ungradable"),
        _card("unreadable", summary.unreadable, "unreadable"),
        _card("grader_refused", summary.grader_refused, "still refused (grader's reasons)"),
        "</div>",
        "</section>",
    ]


def _bucket_label(index: int, low: float, high: float, last: bool) -> tuple[str, str, str]:
    """A histogram bucket's label: plain text, SVG markup, HTML markup."""
    metric = f"reward_histogram.{index}"
    if low == high:
        text = real(low)
        return text, _bound(f"{metric}.low", low), _num(f"{metric}.low", low)
    close = "]" if last else ")"
    text = f"[{real(low)}, {real(high)}{close}"
    svg = f"[{_bound(f'{metric}.low', low)}, {_bound(f'{metric}.high', high)}{close}"
    html = f"[{_num(f'{metric}.low', low)}, {_num(f'{metric}.high', high)}{close}"
    return text, svg, html


def _reward(summary: SweepSummary) -> list[str]:
    reward = summary.reward
    lines = [
        '<section id="reward">',
        "<h2>Reward (gradable runs only)</h2>",
        "<h3>Summary statistics</h3>",
        '<table><thead><tr><th class="n">count</th>'
        + "".join(f'<th class="n">{label}</th>' for _, label in _STATS)
        + "</tr></thead><tbody><tr>"
        + _td("reward.count", reward.count)
        + "".join(_td(f"reward.{key}", getattr(reward, key)) for key, _ in _STATS)
        + "</tr></tbody></table>",
    ]
    if not reward.present:
        lines.append(
            "<p>No gradable run: there is no reward distribution (absent, not zero; "
            "nothing is drawn).</p>"
        )
    else:
        lines.append(
            f"<p>Over the {_num('gradable', summary.gradable)} gradable runs; the "
            f"{_num('ungradable', summary.ungradable)} ungradable and "
            f"{_num('unreadable', summary.unreadable)} unreadable runs have no reward and are "
            "not in it (never counted as zero).</p>"
        )
        histogram = summary.reward_histogram
        lines.append("<h3>Distribution: gradable runs per reward</h3>")
        lines.append(
            '<table id="reward-histogram"><thead><tr><th>reward</th><th class="n">runs</th>'
            "</tr></thead><tbody>"
        )
        bars = []
        for index, bucket in enumerate(histogram):
            text, svg, html = _bucket_label(
                index, bucket.low, bucket.high, index == len(histogram) - 1
            )
            metric = f"reward_histogram.{index}.runs"
            lines.append(f"<tr><td>{html}</td>{_td(metric, bucket.runs)}</tr>")
            bars.append(_bar(text, metric, bucket.runs, "reward", label_markup=svg))
        lines.append("</tbody></table>")
        lines.append(
            _figure(
                bar_chart(bars, title="Gradable runs per reward"),
                "Gradable runs per reward: one bar per row of the table above, its length "
                "the row's runs. Ungradable and unreadable runs have no reward and are not "
                "drawn.",
            )
        )
    if summary.schemes:
        schemes = ", ".join(
            f"<code>{_e(name)}</code> ({_num(f'schemes.{name}', count)})"
            for name, count in summary.schemes.items()
        )
        lines.append(
            f"<p>Schemes: {schemes}. Rewards of different schemes are different quantities.</p>"
        )
    lines.append("</section>")
    return lines


def _refusals(summary: SweepSummary) -> list[str]:
    lines = ['<section id="refusals">', "<h2>Refusals by code and blame</h2>"]
    if not summary.refusals:
        return [*lines, "<p>No refusals.</p>", "</section>"]
    lines.append(
        '<table><thead><tr><th>code</th><th>blame</th><th class="n">refusals</th>'
        '<th class="n">runs</th></tr></thead><tbody>'
    )
    for item in summary.refusals:
        key = f"refusals.{item.code}.{item.blame}"
        lines.append(
            f"<tr><td><code>{_e(item.code)}</code></td><td>{_e(item.blame)}</td>"
            f"{_td(f'{key}.refusals', item.refusals)}{_td(f'{key}.runs', item.runs)}</tr>"
        )
    lines.append("</tbody></table>")
    lines.append(
        _figure(
            bar_chart(
                [
                    _bar(
                        f"{item.code} ({item.blame})",
                        f"refusals.{item.code}.{item.blame}.runs",
                        item.runs,
                        item.blame if item.blame in ("run", "grader") else "other",
                    )
                    for item in summary.refusals
                ],
                title="Runs refused, by code and blame",
            ),
            "Runs refused, by code and blame: the runs column of the table above "
            "(a run refused twice under one code counts once; a run refused under two codes "
            "counts under each).",
        )
    )
    lines.append("<h3>By blame</h3>")
    lines.append(
        '<table><thead><tr><th>blame</th><th class="n">refusals</th><th class="n">runs</th>'
        "</tr></thead><tbody>"
    )
    for blame in summary.blame:
        key = f"blame.{blame.blame}"
        lines.append(
            f"<tr><td>{_e(blame.blame)}</td>{_td(f'{key}.refusals', blame.refusals)}"
            f"{_td(f'{key}.runs', blame.runs)}</tr>"
        )
    lines.append("</tbody></table>")
    lines.append("<p>A run refused for both reasons counts under both blames.</p>")
    lines.append("</section>")
    return lines


def _attempts(summary: SweepSummary) -> list[str]:
    attempts = summary.attempts
    lines = [
        '<section id="attempts">',
        "<h2>Attempts</h2>",
        '<div class="cards">',
        _card("attempts.total", attempts.total, "attempts in all"),
        _card("attempts.retried", attempts.retried, "runs retried"),
        _card("attempts.recovered", attempts.recovered, "retried, gradable in the end"),
        "</div>",
    ]
    if attempts.by_count:
        lines.append(
            '<table><thead><tr><th class="n">attempts</th><th class="n">runs</th></tr>'
            "</thead><tbody>"
        )
        for item in attempts.by_count:
            key = f"attempts.by_count.{item.attempts}"
            lines.append(
                f"<tr>{_td(f'{key}.attempts', item.attempts)}{_td(f'{key}.runs', item.runs)}</tr>"
            )
        lines.append("</tbody></table>")
        lines.append(
            _figure(
                bar_chart(
                    [
                        _bar(
                            str(item.attempts),
                            f"attempts.by_count.{item.attempts}.runs",
                            item.runs,
                            label_metric=f"attempts.by_count.{item.attempts}.attempts",
                        )
                        for item in attempts.by_count
                    ],
                    title="Runs by number of attempts",
                ),
                "Runs by number of attempts: one bar per row of the table above (labelled "
                "with the attempts), its length the row's runs.",
            )
        )
    lines.append("</section>")
    return lines


def _attempt_list(index: int, run: RetriedRun) -> str:
    items = []
    for position, line in enumerate(run.attempts):
        number = _num(f"retries.runs.{index}.attempts.{position}.attempt", line.attempt)
        if line.gradable:
            items.append(f'<li class="ok">{number}: gradable</li>')
            continue
        why = f': <span class="why">{_e(line.why)}</span>' if line.why else ""
        blame = f" ({_e(', '.join(line.blame))})" if line.blame else ""
        items.append(f"<li>{number}: {_codes(line.codes)}{blame}{why}</li>")
    return '<ul class="attempts">' + "".join(items) + "</ul>"


def _retries(
    summary: SweepSummary,
    retried: Sequence[RetriedRun],
    tally: RetriesTally | None,
    regrade: Sequence[str],
    regrade_note: str,
    limit: int,
) -> list[str]:
    lines = ['<section id="retries">', "<h2>Retried and still-refused runs</h2>"]
    if tally is not None:
        unreadable = (
            f" ({_num('retries.unreadable', tally.unreadable)} without a readable grade)"
            if tally.unreadable
            else ""
        )
        lines.append(
            f"<p>{_num('retries.runs_read', tally.runs)} runs read{unreadable}: "
            f"{_num('retries.retried', tally.retried)} retried "
            f"({_num('retries.healed', tally.healed)} healed after a retry), "
            f"{_num('retries.still_refused', tally.still_refused)} still refused for the "
            f"grader's reasons ({_num('retries.retryable', tally.retryable)} retryable, "
            f"{_num('retries.needs_fix', tally.needs_fix)} needing a fix of the task "
            f"definition or the reader, {_num('retries.unchanged', tally.unchanged)} of "
            "them graded again with nothing changed); "
            f"{_num('retries.listed', tally.listed)} listed.</p>"
        )
        total = tally.listed
    else:
        total = len(retried)
    shown = list(retried[:limit])
    if not shown:
        lines.append("<p>No run was retried, and none stands refused for the grader's reasons.</p>")
    else:
        lines.append(
            '<table><thead><tr><th>run</th><th>state</th><th class="n">reward</th>'
            '<th class="n">attempts</th><th>attempt by attempt (the last stands)</th></tr>'
            "</thead><tbody>"
        )
        for index, run in enumerate(shown):
            state = _e(run.state)
            if run.still_refused and run.fix:
                again = ", graded again with nothing changed" if run.unchanged else ""
                state += (
                    f'<br><span class="still">still refused, needs a fix{again}</span>'
                    f'<br><span class="why">change {_e(run.fix)}</span>'
                )
            elif run.still_refused:
                state += '<br><span class="still">still refused, retryable</span>'
            lines.append(
                f'<tr data-run="{_e(run.run)}"><td><code>{_e(run.run)}</code></td>'
                f"<td>{state}</td>{_td(f'retries.runs.{index}.reward', run.reward)}"
                f"{_td(f'retries.runs.{index}.attempts', len(run.attempts))}"
                f"<td>{_attempt_list(index, run)}</td></tr>"
            )
        lines.append("</tbody></table>")
        lines.append(
            _more("retries.more", total - len(shown), "truereward sweep retries lists them all")
        )
    if regrade and summary.retryable:
        lines.append(
            f"<p>To grade the {_num('retryable', summary.retryable)} "
            f"{_runs(summary.retryable)} still refused for the grader's reasons that grading "
            "again may heal, once the fault is fixed (each replaces the grade it finds):</p>"
        )
        lines.append("<pre>" + _e("\n".join(regrade)) + "</pre>")
        if regrade_note:
            lines.append(f"<p>({_e(regrade_note)})</p>")
    if summary.needs_fix:
        lines.append(
            f"<p>{_num('needs_fix', summary.needs_fix)} {_runs(summary.needs_fix)} still "
            "refused for reasons grading again cannot heal: change the task definition or "
            "the reader first (each line says what). <code>regrade: grader-refusals</code> "
            "grades such a run again once its task definition or reader changed; "
            "<code>regrade: needing-fix</code> grades them all again.</p>"
        )
    lines.append("</section>")
    return lines


def _unreadable(summary: SweepSummary) -> list[str]:
    if not summary.unreadable:
        return []
    lines = [
        '<section id="unreadable">',
        "<h2>Unreadable grades</h2>",
        "<table><thead><tr><th>run</th><th>why</th></tr></thead><tbody>",
    ]
    lines += [
        f'<tr data-run="{_e(item.run)}"><td><code>{_e(item.run)}</code></td>'
        f'<td class="why">{_e(item.why)}</td></tr>'
        for item in summary.unreadable_runs
    ]
    lines.append("</tbody></table>")
    lines.append(_more("unreadable_runs.more", summary.unreadable - len(summary.unreadable_runs)))
    lines.append("</section>")
    return lines


def _changes(heading: str, key: str, changes: Sequence[RewardChange], limit: int) -> list[str]:
    metric = f"comparison.{key}"
    lines = [f"<h3>{_e(heading)} ({_num(metric, len(changes))})</h3>"]
    if not changes:
        return [*lines, "<p>None.</p>"]
    lines.append(
        '<table><thead><tr><th>run</th><th class="n">baseline</th><th class="n">candidate</th>'
        '<th class="n">delta</th></tr></thead><tbody>'
    )
    for index, item in enumerate(changes[:limit]):
        row = f"{metric}.{index}"
        lines.append(
            f'<tr data-run="{_e(item.run)}"><td><code>{_e(item.run)}</code></td>'
            f"{_td(f'{row}.baseline', item.baseline)}{_td(f'{row}.candidate', item.candidate)}"
            f"{_td(f'{row}.delta', item.delta, signed=True)}</tr>"
        )
    lines.append("</tbody></table>")
    lines.append(_more(f"{metric}.more", len(changes) - limit))
    return lines


def _no_rewards(
    heading: str, key: str, items: Sequence[NoReward], side: str, limit: int
) -> list[str]:
    """A table of runs without a reward on one side: ``side`` is the side
    with the reward (``baseline`` for newly ungradable runs, ``candidate``
    for newly gradable ones); the state, codes and blame are the other
    side's, and the columns say so."""
    metric = f"comparison.{key}"
    lines = [f"<h3>{_e(heading)} ({_num(metric, len(items))})</h3>"]
    if not items:
        return [*lines, "<p>None.</p>"]
    other = "candidate" if side == "baseline" else "baseline"
    reward = f'<th class="n">{_e(side)} reward</th>'
    states = (
        f"<th>{other} state</th><th>{other} codes, or why unreadable</th><th>{other} blame</th>"
    )
    columns = reward + states if side == "baseline" else states + reward
    lines.append(f"<table><thead><tr><th>run</th>{columns}</tr></thead><tbody>")
    for index, item in enumerate(items[:limit]):
        reasons = _codes(item.codes) or f'<span class="why">{_e(item.why or "")}</span>'
        blame = _e(", ".join(item.blame)) or ABSENT
        value = _td(f"{metric}.{index}.reward", item.reward)
        state = f"<td>{_e(item.state)}</td><td>{reasons}</td><td>{blame}</td>"
        cells = value + state if side == "baseline" else state + value
        lines.append(
            f'<tr data-run="{_e(item.run)}"><td><code>{_e(item.run)}</code></td>{cells}</tr>'
        )
    lines.append("</tbody></table>")
    lines.append(_more(f"{metric}.more", len(items) - limit))
    return lines


def _delta(metric: str, delta: DistributionDelta) -> str:
    if not delta.present:
        return _num(metric, None) + " (a side has no gradable run)"
    return _num(metric, delta.mean, signed=True)


_HEADINGS = (
    ("paired", "in both sweeps"),
    ("unchanged", "unchanged reward"),
    ("regressions", "regressions"),
    ("fixes", "fixes"),
    ("newly_ungradable", "newly ungradable"),
    ("newly_gradable", "newly gradable"),
    ("still_ungradable", "ungradable on both sides"),
    ("added", "only in the candidate"),
    ("removed", "only in the baseline"),
)
#: The changes the comparison's chart draws, each with its bar's colour.
_CHANGE_KINDS = (
    ("regressions", "grader"),
    ("fixes", "reward"),
    ("newly_ungradable", "run"),
    ("newly_gradable", "count"),
)


def _comparison(
    comparison: SweepComparison, baseline: str | None, candidate: str | None, limit: int
) -> list[str]:
    lines = ['<section id="comparison">', "<h2>Against the baseline</h2>"]
    names = []
    if baseline:
        names.append(f"baseline <code>{_e(baseline)}</code>")
    if candidate:
        names.append(f"candidate <code>{_e(candidate)}</code>")
    if names:
        lines.append(f'<p class="sub">Runs paired by id: {"; ".join(names)}.</p>')
    lines.append(
        '<table><thead><tr><th></th><th class="n">runs</th><th class="n">gradable</th>'
        '<th class="n">ungradable</th><th class="n">unreadable</th><th class="n">mean reward</th>'
        "</tr></thead><tbody>"
    )
    for side, summary in (("baseline", comparison.baseline), ("candidate", comparison.candidate)):
        key = f"comparison.{side}"
        lines.append(
            f"<tr><th>{side}</th>{_td(f'{key}.runs', summary.runs)}"
            f"{_td(f'{key}.gradable', summary.gradable)}"
            f"{_td(f'{key}.ungradable', summary.ungradable)}"
            f"{_td(f'{key}.unreadable', summary.unreadable)}"
            f"{_td(f'{key}.reward.mean', summary.reward.mean)}</tr>"
        )
    lines.append("</tbody></table>")
    lines.append(
        "<p>Mean reward delta (candidate minus baseline, each over its own gradable runs): "
        f"{_delta('comparison.reward_delta', comparison.reward_delta)}; over the runs "
        "gradable on both sides: "
        f"{_delta('comparison.paired_reward_delta', comparison.paired_reward_delta)}.</p>"
    )
    values = {key: getattr(comparison, key) for key, _ in _HEADINGS}
    counts = {key: value if isinstance(value, int) else len(value) for key, value in values.items()}
    labels = dict(_HEADINGS)
    lines.append('<div class="cards">')
    lines += [_card(f"comparison.{key}", counts[key], label) for key, label in _HEADINGS]
    lines.append("</div>")
    lines.append(
        _figure(
            bar_chart(
                [
                    _bar(labels[key], f"comparison.{key}", counts[key], kind)
                    for key, kind in _CHANGE_KINDS
                ],
                title="Runs per change against the baseline",
            ),
            "Runs per change from the baseline to the candidate: the counts of the cards "
            "above of the same names.",
        )
    )
    lines.append(
        "<p>A run without a reward on one side is newly ungradable or newly gradable, "
        "never a regression or a fix: a missing reward is not zero.</p>"
    )
    lines += _changes("Regressions (reward down)", "regressions", comparison.regressions, limit)
    lines += _changes("Fixes (reward up)", "fixes", comparison.fixes, limit)
    lines += _no_rewards(
        "Newly ungradable (no reward in the candidate)",
        "newly_ungradable",
        comparison.newly_ungradable,
        "baseline",
        limit,
    )
    lines += _no_rewards(
        "Newly gradable (no reward in the baseline)",
        "newly_gradable",
        comparison.newly_gradable,
        "candidate",
        limit,
    )
    lines.append("</section>")
    return lines


def render_report(
    summary: SweepSummary,
    retried: Sequence[RetriedRun] = (),
    tally: RetriesTally | None = None,
    comparison: SweepComparison | None = None,
    title: str = "Sweep report",
    *,
    sweep: str | None = None,
    baseline: str | None = None,
    regrade: Sequence[str] = (),
    regrade_note: str = "",
    limit: int = LIMIT,
    target: str | None = None,
    made: datetime | None = None,
) -> str:
    """The report page (module docstring) as a complete HTML document.

    - ``summary``: the sweep's summary (with a comparison, the candidate's:
      ``comparison.candidate``, which is the same thing).
    - ``retried``: the retried and still-refused runs to list, in order
      (:func:`~truereward.sweeps.retries.retried_runs`); the first
      ``limit`` are shown.
    - ``tally``: the counts of the listing; when given, the page shows them
      and "and K more" counts ``tally.listed`` past what is shown; without
      it, ``retried`` is taken as the whole listing.
    - ``comparison``: the candidate against a baseline, or ``None``.
    - ``title``; ``sweep`` and ``baseline``: the locations, shown as they
      are (escaped); ``target``: where the grades are, when it is not
      ``sweep``; ``made``: when the page was made (shown in UTC, in a
      ``<time>`` element).
    - ``regrade``: commands that grade the still-refused runs again (shown
      when some are), and ``regrade_note``, a sentence under them.

    ``ValueError`` when ``limit`` is below 1.
    """
    if limit < 1:
        raise ValueError(f"limit is at least 1, got {limit}")
    header = [f"<h1>{_e(title)}</h1>"]
    said = []
    if sweep:
        said.append(f"Sweep <code>{_e(sweep)}</code>")
    if target:
        said.append(f"grades in <code>{_e(target)}</code>")
    if made is not None:
        when = made.astimezone(UTC)
        said.append(
            f'made <time datetime="{when.isoformat(timespec="seconds").replace("+00:00", "Z")}">'
            f"{when.strftime('%Y-%m-%d %H:%M:%S')} UTC</time>"
        )
    if said:
        header.append(f'<p class="sub">{"; ".join(said)}.</p>')
    body = [
        *header,
        *_counts(summary),
        *_reward(summary),
        *_refusals(summary),
        *_attempts(summary),
        *_retries(summary, retried, tally, regrade, regrade_note, limit),
        *_unreadable(summary),
    ]
    if comparison is not None:
        body += _comparison(comparison, baseline, sweep, limit)
    body.append(
        "<footer><p>Made by <code>truereward sweep report</code>. Every number carries a "
        "<code>data-metric</code> attribute naming it; — is an absent value, never zero.</p>"
        "</footer>"
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="truereward sweep report">\n'
        f"<title>{_e(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(part for part in body if part)
        + "\n</body>\n</html>\n"
    )
