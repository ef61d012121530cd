"""The flow's name and artifacts.

From one :class:`~truereward.grading.GradeRunResult`: ``…-runs`` (a row
per run), ``…-summary`` (the headline, publishing, the sweep summary),
``…-regrade`` (the runs refused for the grader's reasons, with the commands
that grade them again) and ``…-report`` (a link to the HTML report). Keys
are ``grade-run-<sweep>-<digest>-<part>``, the digest of the sweep's
location and the target, so one sweep and target is one key's versions and
two targets never share one. docs/prefect.md, "States, artifacts and the
result".
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


def render_regrade(result: GradeRunResult, request: GradeRequest, deployment: str) -> str:
    """The runs still refused for the grader's reasons and the commands that
    grade them again (markdown)."""
    summary = result.summary
    lines = [f"# Still refused for the grader's reasons: {summary.grader_refused}", ""]
    if not summary.grader_refused:
        lines.append("None: no run needs grading again.")
        return "\n".join(lines) + "\n"
    refused = [
        line for line in result.runs if line.state == "ungradable" and line.blame == ["grader"]
    ]
    lines += ["| run | codes | why | attempts | earlier |", "|---|---|---|---:|---|"]
    lines += [
        f"| {cell(line.run)} | {cell(', '.join(line.codes))} | {cell(line.why)} "
        f"| {line.attempts} | {cell('; '.join(line.earlier) or '—')} |"
        for line in refused
    ]
    if summary.grader_refused > len(refused):
        lines.append(f"\n… and {summary.grader_refused - len(refused)} more.")
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
        description=f"{title}: {result.summary.grader_refused} runs still refused for the "
        "grader's reasons",
    )
    if page is not None:
        create_link_artifact(
            link=_link(page),
            link_text=f"{title}: sweep report",
            key=artifact_key(request, target, "report"),
            description=f"{title}: the HTML sweep report ({page})",
        )
