"""The flow's name and artifacts.

Three artifacts per flow run, made from the one
:class:`~truereward.grading.GradeRunResult`:

- ``…-runs``: a table, one row per run (reward or refusal codes, blame,
  attempts, the codes of its earlier attempts, what publishing did);
- ``…-summary``: the headline, what publishing did, the sweep summary;
- ``…-regrade``: the runs that stand refused for the grader's reasons, with
  their codes and why: those grading again may heal, with the exact
  commands that grade them again once the fault is fixed (``regrade:
  grader-refusals``), and apart those that need a change of the task
  definition or the reader, with what to change (``regrade: needing-fix``);
- ``…-report``: a link to the HTML sweep report the flow wrote
  (:mod:`truereward.grading.sweep_report`), when it wrote one.

Keys are ``grade-run-<sweep>-<digest>-<part>`` in the characters Prefect
allows: ``<sweep>`` is the sweep's name (``runs`` for a list of runs) and
``<digest>`` eight hex digits of the sweep's URL (or the runs) and the
target, so the flow runs of one sweep and one target are versions of one
key, and two targets of one sweep, or two folders named alike, never share
one.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from prefect.artifacts import (
    create_link_artifact,
    create_markdown_artifact,
    create_table_artifact,
)

from .. import urls
from ..grading.commands import (
    DEFAULT_DEPLOYMENT,
    deployment_command,
    local_command,
    regrade_request,
)
from ..grading.markdown import cell, render_result
from ..grading.report import GradeRunResult
from ..grading.request import GradeRequest
from ..target import Target

__all__ = [
    "artifact_key",
    "create_artifacts",
    "deployment_name",
    "flow_run_name",
    "render_regrade",
]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60].strip("-")


def artifact_key(request: GradeRequest, target: Target | None, part: str) -> str:
    """``grade-run-<sweep>-<digest>-<part>`` (module docstring)."""
    where = request.sweep if request.sweep is not None else "\n".join(request.runs or ())
    aimed = target.url if target is not None else (request.target or "(each run's logs)")
    digest = hashlib.sha256(f"{where}\n{aimed}".encode()).hexdigest()[:8]
    return f"grade-run-{_slug(request.sweep_label or 'runs') or 'sweep'}-{digest}-{part}"


def flow_run_name() -> str:
    """The flow run's name: ``grade-run-<sweep>`` (``-shard-<n>`` for a shard
    of ``grade-sweep``, ``-regrade-<policy>`` when it grades runs again)."""
    from prefect.runtime import flow_run

    value: Any = flow_run.parameters.get("request")
    try:
        request = (
            value if isinstance(value, GradeRequest) else GradeRequest.model_validate(value or {})
        )
    except ValueError:
        return "grade-run-bad-request"
    name = f"grade-run-{_slug(request.sweep_label or f'{len(request.runs or ())}-runs')}"
    # A shard of grade-sweep carries its index as a tag (shard:N).
    shard = [tag for tag in (flow_run.tags or ()) if str(tag).startswith("shard:")]
    if shard:
        name += f"-shard-{_slug(str(shard[0]).split(':', 1)[1])}"
    return name if request.regrade == "none" else f"{name}-regrade-{request.regrade}"


def _runs(count: int) -> str:
    return f"{count} run" if count == 1 else f"{count} runs"


def render_regrade(result: GradeRunResult, request: GradeRequest, deployment: str) -> str:
    """The runs still refused for the grader's reasons, in two lists: those
    grading again may heal, with the commands that grade them again once
    the fault is fixed, and those that need a change of the task definition
    or the reader first, with what to change (markdown)."""
    from ..refusal import outlook, what_to_change

    summary = result.summary
    lines = [f"# Still refused for the grader's reasons: {summary.grader_refused}", ""]
    if not summary.grader_refused:
        lines.append("None: no run needs grading again.")
        return "\n".join(lines) + "\n"
    refused = [
        line for line in result.runs if line.state == "ungradable" and line.blame == ["grader"]
    ]
    healing = [
        line for line in refused if outlook((code, "grader") for code in line.codes) == "retryable"
    ]
    fixing = [line for line in refused if line not in healing]
    header = ["| run | codes | why | attempts | earlier |", "|---|---|---|---:|---|"]

    def rows(chosen: list[Any]) -> list[str]:
        return [
            f"| {cell(line.run)} | {cell(', '.join(line.codes))} | {cell(line.why)} "
            f"| {line.attempts} | {cell('; '.join(line.earlier) or '—')} |"
            for line in chosen
        ]

    lines += [f"## Grading again may heal them: {summary.retryable}", ""]
    if summary.retryable:
        lines += [*header, *rows(healing)]
        if summary.retryable > len(healing):
            lines.append(f"\n… and {summary.retryable - len(healing)} more.")
        again = regrade_request(request)
        lines += [
            "",
            "Once the fault is fixed, grade exactly these again (each replaces the grade it "
            "finds and keeps its attempts):",
            "",
            "```bash",
            deployment_command(again, deployment),
            "```",
            "",
            "or on one machine, without a server:",
            "",
            "```bash",
            local_command(again),
            "```",
        ]
    else:
        lines.append("None.")
    lines += ["", f"## Needing a fix of the task definition or the reader: {summary.needs_fix}"]
    lines.append("")
    if not summary.needs_fix:
        lines.append("None.")
        return "\n".join(lines) + "\n"
    if summary.unchanged:
        lines += [f"{_runs(summary.unchanged)} of them graded again with nothing changed.", ""]
    lines += ["| run | codes | what to change | attempts |", "|---|---|---|---:|"]
    for line in fixing:
        blocking = [code for code in line.codes if outlook([(code, "grader")]) == "needs-fix"]
        change = "; ".join(f"{code}: {what_to_change(code)}" for code in blocking)
        lines.append(
            f"| {cell(line.run)} | {cell(', '.join(line.codes))} | {cell(change)} "
            f"| {line.attempts} |"
        )
    if summary.needs_fix > len(fixing):
        lines.append(f"\n… and {summary.needs_fix - len(fixing)} more.")
    fixed = regrade_request(request, "needing-fix")
    lines += [
        "",
        "Grading these again as they are adds an identical attempt. Once the task definition "
        "or the reader is changed, `regrade: grader-refusals` grades a run again when its "
        "definition's digest changed; to grade them all again whatever changed:",
        "",
        "```bash",
        deployment_command(fixed, deployment),
        "```",
    ]
    return "\n".join(lines) + "\n"


def deployment_name() -> str:
    """``grade-run/<deployment>`` of the current flow run (the default
    deployment's name when it was not started from one)."""
    from prefect.runtime import deployment

    name = deployment.name
    return f"grade-run/{name}" if name else DEFAULT_DEPLOYMENT


def _link(where: str) -> str:
    if urls.is_url(where):
        return where
    import os
    from pathlib import Path

    return Path(os.path.abspath(where)).as_uri()


def create_artifacts(
    result: GradeRunResult,
    request: GradeRequest,
    target: Target | None,
    page: str | None = None,
) -> None:
    """Create the artifacts of ``result`` (module docstring) for the current
    flow run; ``page`` is where the HTML sweep report was written."""
    title = f"grade-run {request.sweep_label or f'({len(request.runs or ())} runs)'}"
    create_table_artifact(
        table=[line.cells() for line in result.runs],
        key=artifact_key(request, target, "runs"),
        description=f"{title}: {result.headline()}",
    )
    create_markdown_artifact(
        markdown=render_result(result, title),
        key=artifact_key(request, target, "summary"),
        description=f"{title}: {result.state_name}",
    )
    create_markdown_artifact(
        markdown=render_regrade(result, request, deployment_name()),
        key=artifact_key(request, target, "regrade"),
        description=f"{title}: {_runs(result.summary.grader_refused)} still refused for the "
        f"grader's reasons ({result.summary.retryable} retryable, "
        f"{result.summary.needs_fix} needing a fix)",
    )
    if page is not None:
        create_link_artifact(
            link=_link(page),
            link_text=f"{title}: sweep report",
            key=artifact_key(request, target, "report"),
            description=f"{title}: the HTML sweep report ({page})",
        )
