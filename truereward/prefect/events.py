"""The Prefect events a grade-run flow run emits when it ends, for
automations to act on: ``truereward.sweep.graded`` (one per flow run, its
counts) and ``truereward.run.still-refused`` (one per run still refused for
the grader's reasons, at most :data:`REFUSED_EVENTS`). Emitting never fails
grading. docs/prefect.md, "Events and automations"; an example automation
is in ``infra/automations/``.
"""

from __future__ import annotations

from typing import Any

from prefect.events import Event, emit_event
from prefect.exceptions import EventTooLarge

from ..codes import known, lookup
from ..grading.report import GradeRunResult, RunLine

__all__ = ["REFUSED_EVENTS", "RUN_EVENT", "SWEEP_EVENT", "emit_outcome"]

#: The event of a flow run's outcome.
SWEEP_EVENT = "truereward.sweep.graded"
#: The event of a run still refused for the grader's reasons.
RUN_EVENT = "truereward.run.still-refused"
#: Run events sent at most per flow run.
REFUSED_EVENTS = 100
#: Characters of a run's reasons kept in its event.
WHY_LIMIT = 500


def _still_refused(line: RunLine) -> bool:
    return line.state == "ungradable" and "grader" in line.blame


def _retryable(line: RunLine) -> bool:
    """Whether grading again may heal the run: every code of it a grader
    code whose retry default is yes."""
    return bool(line.codes) and all(known(code) and lookup(code).retry for code in line.codes)


def _emit(event: str, **fields: Any) -> Event | None:
    """Emit one event; one over Prefect's size limit (which Prefect raises
    rather than drops) is left out: emitting never fails grading."""
    try:
        return emit_event(event, **fields)
    except EventTooLarge:
        return None


def sweep_resource(label: str) -> dict[str, str]:
    return {
        "prefect.resource.id": f"truereward.sweep.{label}",
        "prefect.resource.name": label,
        "truereward.sweep": label,
    }


def emit_outcome(result: GradeRunResult, *, sweep: str | None, report: str | None) -> int:
    """Emit the events of ``result`` (module docstring) for the sweep
    labelled ``sweep`` (``runs`` for a list of runs); returns how many run
    events were sent."""
    label = sweep or "runs"
    refused = [line for line in result.runs if _still_refused(line)][:REFUSED_EVENTS]
    summary = result.summary
    payload: dict[str, Any] = {
        "state": result.state_name,
        "headline": result.headline(),
        "runs": summary.runs,
        "gradable": summary.gradable,
        "ungradable": summary.ungradable,
        "unreadable": summary.unreadable,
        "mean_reward": summary.reward.mean,
        "grader_refused": summary.grader_refused,
        "graded": result.graded,
        "regraded": result.regraded,
        "retried": result.retried,
        "already_graded": result.already_graded,
        "failed": result.failed,
        "published": dict(result.published),
        "refused_events": len(refused),
        "report": report,
    }
    sweep_event = _emit(
        SWEEP_EVENT,
        resource={
            **sweep_resource(label),
            "truereward.state": result.state_name,
            # Automations match labels, not payloads: whether any run needs ops.
            "truereward.grader-refused": "true" if summary.grader_refused else "false",
        },
        payload=payload,
    )
    related = [{**sweep_resource(label), "prefect.resource.role": "sweep"}]
    for line in refused:
        _emit(
            RUN_EVENT,
            resource={
                "prefect.resource.id": f"truereward.run.{label}.{line.run}",
                "prefect.resource.name": line.run,
                "truereward.sweep": label,
                "truereward.run": line.run,
                "truereward.retryable": "true" if _retryable(line) else "false",
            },
            related=related,
            payload={
                "codes": list(line.codes),
                "blame": list(line.blame),
                "attempts": line.attempts,
                "why": line.why[:WHY_LIMIT],
            },
            follows=sweep_event,
        )
    return len(refused)
