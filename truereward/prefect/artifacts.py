"""The flow's name and artifacts.

From one :class:`~truereward.grading.GradeRunResult`: ``…-runs`` (a row
per run), ``…-summary`` (the headline, publishing, the sweep summary),
``…-regrade`` (the still-refused runs: those grading again may heal, and
apart those needing a fix) and ``…-report`` (a browser link to the HTML
report). Keys are ``grade-run-<sweep>[-to-<target>]-<part>``; a shard's
artifacts have none. docs/prefect.md, "States, artifacts and the result".
"""

from __future__ import annotations

import re
from typing import Any

from prefect.artifacts import (
    create_link_artifact,
    create_markdown_artifact,
    create_table_artifact,
)

from ..grading.commands import (
    DEFAULT_DEPLOYMENT,
    deployment_command,
    local_command,
    regrade_request,
)
from ..grading.markdown import render_result
from ..grading.plan import options_for
from ..grading.report import GradeRunResult
from ..grading.request import GradeRequest
from ..util import urls
from ..util.markdown import cell, fence
from ..util.target import Target

__all__ = [
    "PRESIGN_SECONDS",
    "artifact_key",
    "create_artifacts",
    "deployment_name",
    "flow_run_name",
    "is_shard",
    "render_regrade",
    "report_link",
]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60].strip("-")


def _tail_slug(text: str, limit: int = 40) -> str:
    """``text`` as a slug, keeping its last ``limit`` characters (the end of
    a location is what tells two apart)."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[-limit:].strip("-")


def artifact_key(request: Any, target: Target | None, part: str, flow: str = "grade-run") -> str:
    """``<flow>-<sweep>[-to-<target>]-<part>`` (docs/prefect.md) for a
    :class:`GradeRequest` (or a request with the same ``sweep_label``,
    ``target``)."""
    sweep = _slug(request.sweep_label or "runs") or "sweep"
    aimed = target.url if target is not None else request.target
    place = ""
    if aimed is not None:
        where = urls.strip_protocol(aimed)
        place = f"-to-{_tail_slug(where) or 'target'}"
    return f"{flow}-{sweep}{place}-{part}"


def is_shard() -> bool:
    """Whether the current flow run is a shard of ``grade-sweep`` (tagged
    ``shard:N``)."""
    from prefect.runtime import flow_run

    return any(str(tag).startswith("shard:") for tag in (flow_run.tags or ()))


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
    from ..record.refusal import outlook, what_to_change

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
            fence(deployment_command(again, deployment), "bash"),
            "",
            "or on one machine, without a server:",
            "",
            fence(local_command(again), "bash"),
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
        fence(deployment_command(fixed, deployment), "bash"),
    ]
    return "\n".join(lines) + "\n"


def deployment_name() -> str:
    """``grade-run/<deployment>`` of the current flow run (the default
    deployment's name when it was not started from one)."""
    from prefect.runtime import deployment

    name = deployment.name
    return f"grade-run/{name}" if name else DEFAULT_DEPLOYMENT


#: How long a presigned link to a report on S3 stays valid: a week, the
#: longest an S3 signature (SigV4) allows.
PRESIGN_SECONDS = 7 * 24 * 3600


def report_link(where: str, target: Target | None, request: GradeRequest) -> str:
    """A URL a browser opens for the page at ``where`` (module docstring)."""
    if not urls.is_url(where):
        import os
        from pathlib import Path

        return Path(os.path.abspath(where)).as_uri()
    if urls.protocol(where) not in ("s3", "s3a"):
        return where
    try:
        from fsspec.core import url_to_fs

        fs, path = url_to_fs(where, **options_for(where, request, target))
        signed = fs.sign(path, expiration=PRESIGN_SECONDS)
    except Exception:  # noqa: BLE001 - no credentials or no signer: the plain URL
        return where
    return str(signed)


def create_artifacts(
    result: GradeRunResult,
    request: GradeRequest,
    target: Target | None,
    page: str | None = None,
) -> None:
    """Create the artifacts of ``result`` (module docstring) for the current
    flow run; ``page`` is where the HTML sweep report was written."""
    title = f"grade-run {request.sweep_label or f'({len(request.runs or ())} runs)'}"
    shard = is_shard()

    def key(part: str) -> str | None:
        # A shard's artifacts stay on its flow run: its parent keys the sweep's.
        return None if shard else artifact_key(request, target, part)

    create_table_artifact(
        table=[line.cells() for line in result.runs],
        key=key("runs"),
        description=f"{title}: {result.headline()}",
    )
    create_markdown_artifact(
        markdown=render_result(result, title),
        key=key("summary"),
        description=f"{title}: {result.state_name}",
    )
    create_markdown_artifact(
        markdown=render_regrade(result, request, deployment_name()),
        key=key("regrade"),
        description=f"{title}: {_runs(result.summary.grader_refused)} still refused for the "
        f"grader's reasons ({result.summary.retryable} retryable, "
        f"{result.summary.needs_fix} needing a fix)",
    )
    if page is not None:
        create_link_artifact(
            link=report_link(page, target, request),
            link_text=f"{title}: sweep report",
            key=key("report"),
            description=f"{title}: the HTML sweep report ({page})",
        )
