"""The flow's artifacts: a table (one row per run: reward or refusal codes,
blame, attempts, what publishing did) and a markdown summary.

Artifact keys are made from the sweep's name (lower case letters, digits
and dashes, as Prefect requires): ``grade-run-<sweep>-runs`` and
``grade-run-<sweep>-summary``, so the artifacts of one sweep's runs are
versions of one key; a request with a list of runs gives unkeyed artifacts
(attached to the flow run only).
"""

from __future__ import annotations

import re

from prefect.artifacts import create_markdown_artifact, create_table_artifact

from ..grading.markdown import render_result
from ..grading.report import GradeRunResult

__all__ = ["artifact_key", "create_artifacts"]


def artifact_key(sweep: str | None, part: str) -> str | None:
    """``grade-run-<sweep>-<part>`` in the characters Prefect allows, or
    ``None`` without a sweep name."""
    if not sweep:
        return None
    slug = re.sub(r"[^a-z0-9]+", "-", sweep.lower()).strip("-")[:80].strip("-")
    return f"grade-run-{slug}-{part}" if slug else None


def create_artifacts(result: GradeRunResult, *, sweep: str | None, title: str) -> None:
    """Create the table and markdown artifacts of ``result`` for the
    current flow run."""
    create_table_artifact(
        table=[line.cells() for line in result.runs],
        key=artifact_key(sweep, "runs"),
        description=f"{title}: {result.headline()}",
    )
    create_markdown_artifact(
        markdown=render_result(result, title),
        key=artifact_key(sweep, "summary"),
        description=f"{title}: {result.state_name}",
    )
