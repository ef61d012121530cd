"""What a ``grade-run`` (or ``grade-sweep``) flow run says on stderr when it
has lost its Prefect API: why it stops, what it published and did not grade,
whether a publish was cut, what the server will show, and the commands that
resume (the same request again grades only what is missing).

:func:`render_lost` is pure; the flow fills a :class:`LostReport` from its
pipeline's :class:`~truereward.prefect.pipeline.Halted`, or, when the
process must end while the flow waits on the API outside its pipeline, from
what it knows then (:attr:`LostReport.stage`). docs/prefect.md, "When the
Prefect server goes away", shows the message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["NAMES_SHOWN", "LostReport", "render_lost", "render_stopped"]

#: Runs named at most in the message (all are counted).
NAMES_SHOWN = 20


@dataclass(frozen=True)
class LostReport:
    """What the flow run knows when it ends for want of its API.

    ``flow``: the flow's name, which starts each line. ``stage``:
    ``planning`` (nothing was graded), ``grading`` (the pipeline stopped,
    or was waiting), ``graded`` (every run went through; the flow was
    recording its artifacts or final state), ``sharding`` (a
    ``grade-sweep`` parent waiting for its ``shards``). ``runs``: the runs
    planned; ``published``: runs published by decision; ``failed``: grades
    made and not published (a conflict, a store failure), ``failures``
    the first of them by name; ``not_graded``:
    the runs known not to be graded (the first :data:`NAMES_SHOWN` are
    named) and ``not_graded_count`` how many in all (``None``: unknown);
    ``cut``: runs whose publish was still writing when the process ended;
    ``resume``: the commands that grade what is missing; ``exit_status``;
    ``signal``: the signal that stopped the flow run (``SIGINT``...), when
    one did rather than the loss of the API.
    """

    why: str
    stage: Literal["planning", "grading", "graded", "sharding"]
    exit_status: int
    flow: str = "grade-run"
    shards: int = 0
    runs: int | None = None
    published: Mapping[str, int] = field(default_factory=dict)
    failed: int = 0
    failures: Sequence[str] = ()
    not_graded: Sequence[str] = ()
    not_graded_count: int | None = None
    cut: Sequence[str] = ()
    resume: Sequence[str] = ()
    signal: str | None = None


def _names(names: Sequence[str], count: int) -> str:
    shown = ", ".join(names[:NAMES_SHOWN])
    more = count - min(len(names), NAMES_SHOWN)
    return f"{shown}, and {more} more" if shown and more > 0 else shown


def render_lost(report: LostReport) -> str:
    """The message, one statement a line, each starting with the flow's name
    (one line for a flow run stopped by a signal: :func:`render_stopped`)."""
    if report.signal is not None:
        return render_stopped(report)
    lines = [f"{report.why}; grading stops."]
    done = sum(report.published.values())
    decisions = ", ".join(f"{name} {count}" for name, count in report.published.items())
    of = f" of {report.runs}" if report.runs is not None else ""
    published = f"published {done}{of} runs" + (f" ({decisions})" if decisions else "")
    if report.stage == "planning":
        lines.append("nothing was graded: the API was lost before grading began.")
    elif report.stage == "sharding":
        lines.append(
            f"the parent stops waiting for its {report.shards} shards: a shard still grading "
            "(a grade-run flow run of its own) stops by itself within the same bound, saying "
            "what it published."
        )
    elif report.stage == "graded":
        lines.append(
            f"{published}: every run went through; only the flow run's artifacts and "
            "final state were not recorded."
        )
    else:
        count = report.not_graded_count
        if count is None:
            left = "the other runs were not graded"
        elif count:
            named = _names(report.not_graded, count)
            left = f"not graded: {count}" + (f" ({named})" if named else "")
        else:
            left = "every run was graded"
        lines.append(f"{published}; {left}.")
    if report.failed:
        named = _names(report.failures, report.failed)
        lines.append(
            f"{report.failed} grades were made and not published (a conflict or a store "
            "failure)" + (f": {named}." if named else ".")
        )
    if report.cut:
        lines.append(
            f"the publish of {_names(report.cut, len(report.cut))} was still writing when the "
            "process ended: each of its files is whole or absent, and the next run of the "
            "request repairs the set."
        )
    elif report.stage in ("grading", "graded"):
        lines.append("no publish was cut: every run published has its whole set of files.")
    lines.append(
        "the server shows this flow run Running until Prefect's zombie detection marks it "
        "Crashed (self-hosted: the automation of infra/automations/; see docs/prefect.md)."
    )
    if report.resume:
        lines.append(
            "to grade what is missing (published grades are kept, not graded again), "
            "run the same request again:"
        )
    prefix = f"{report.flow}: "
    text = "\n".join(prefix + line for line in lines)
    for index, command in enumerate(report.resume):
        text += "\n" + ("  or: " if index else "    ") + command
    return f"{text}\n{prefix}exit status {report.exit_status}: the Prefect API was lost."


def render_stopped(report: LostReport) -> str:
    """One line for a flow run stopped by a signal (someone pressed Ctrl-C,
    a supervisor sent SIGTERM): what was published, what was not, the exit
    status and the first command that resumes. Runs are counted, not named."""
    done = sum(report.published.values())
    of = f" of {report.runs}" if report.runs is not None else ""
    said = f"{report.flow}: stopped by {report.signal}"
    if report.stage == "planning":
        said += ": nothing was published"
    else:
        said += f": published {done}{of} runs"
        if report.stage == "graded":
            said += " (the report and artifacts were not written)"
        elif report.not_graded_count:
            said += f", {report.not_graded_count} not graded"
        if report.failed:
            said += f", {report.failed} grades not published"
        if report.cut:
            said += f", {len(report.cut)} cut mid-publish (repaired by the next run)"
    said += f"; exit status {report.exit_status}"
    if report.resume:
        said += f"; to resume (published grades are kept): {report.resume[0]}"
    return said
