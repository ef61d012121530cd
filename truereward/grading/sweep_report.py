"""The HTML sweep report of a grading: where it goes, and writing it.

The ``grade-run`` flow renders one page
(:func:`truereward.sweeps.html.render_report`) from the same
:class:`~truereward.grading.GradeRunResult` as its headline and artifacts,
to ``GradeRequest.report``, else ``sweep-report.html`` in the target, else
(graded in place) at the top of the sweep; a list of runs graded in place
gets none unless named. A local page is written whole, and not at all when
it is unchanged. docs/prefect.md ("report") and docs/sweeps.md, "Report".
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime

from ..util import safefile, urls
from ..util.target import Target
from .commands import deployment_command, local_command, regrade_request
from .plan import options_for
from .report import GradeRunResult
from .request import GradeRequest

__all__ = ["REPORT_NAME", "report_location", "write_sweep_report"]


#: The page's ``<time>`` element: when it was made, the one part of the
#: page that differs between two renderings of the same grades.
_MADE = re.compile(rb"<time [^>]*>[^<]*</time>")


def _holds(path: str, data: bytes) -> bool:
    """Whether the regular file at ``path`` already holds ``data``, but for
    the time it was made (read by :func:`truereward.util.safefile.read_regular`,
    never through a symlink and no further than a little past ``data``'s
    length); ``False`` when it cannot be read."""
    try:
        found = safefile.read_regular(path, limit=len(data) + 64)
    except OSError:  # absent, not a regular file, larger, unreadable
        return False
    return _MADE.sub(b"", found) == _MADE.sub(b"", data)


#: The page's name in a target or a sweep.
REPORT_NAME = "sweep-report.html"


def report_location(request: GradeRequest, target: Target | None = None) -> str | None:
    """Where the page of ``request`` goes (module docstring), or ``None``."""
    if request.report is not None:
        return request.report
    base = target.url if target is not None else request.target
    if base is None:
        base = request.sweep
    if base is None:
        return None
    return urls.join(base, REPORT_NAME)


def write_sweep_report(
    result: GradeRunResult,
    request: GradeRequest,
    target: Target | None = None,
    *,
    deployment: str = "grade-run/local",
) -> str | None:
    """Render and write the page; returns where it went (``None`` when it
    has nowhere to go). ``OSError`` when it cannot be written."""
    from ..sweeps.html import render_report

    where = report_location(request, target)
    if where is None:
        return None
    again = regrade_request(request)
    page = render_report(
        result.summary,
        result.retry_lines,
        result.retry_tally,
        title=f"grade-run {request.sweep_label or f'({len(request.runs or ())} runs)'}",
        sweep=request.sweep or ", ".join((request.runs or [])[:3]),
        regrade=[deployment_command(again, deployment), local_command(again)],
        target=target.url if target is not None else request.target,
        made=datetime.now(UTC),
    )
    data = page.encode("utf-8")
    path = urls.local_or_none(where)
    if path is not None:
        from ..util.atomic import write_whole

        if _holds(path, data):
            return where  # the same page: a second, idempotent run touches nothing
        # The target may not exist yet: a sweep none of whose runs could be
        # published, whose page is then the one that says why.
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        write_whole(path, data)
        return where
    from fsspec.core import url_to_fs

    fs, path = url_to_fs(where, **options_for(where, request, target))
    fs.pipe_file(path, data)  # one PUT on an object store
    return where
