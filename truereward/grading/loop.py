"""Grading a request without Prefect: the same steps in a plain loop.

:func:`grade_request` reads, folds and publishes every run of a
:class:`~truereward.grading.request.GradeRequest` in this process, one run
after another (up to ``io_concurrency`` at once on an object store), with
the ``grade-run`` flow's rules: a standing grade is kept unless ``regrade``
selects it, a refusal that is all retryable grader-blame is read again
(``retry_delay_seconds``, doubled each time) up to ``max_attempts``, and
every attempt is recorded. It ignores ``concurrency``, ``chunk_size`` and
``task_runner``. It logs to the ``truereward.grading`` logger and calls
``progress(published, total)`` after each chunk. docs/scale.md, "On one machine".
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from ..util.target import Target
from .chunks import chunked
from .plan import plan_sweep
from .progress import PublishProgress, read_chunk, retry_delays
from .report import GradeRunReport, GradeRunResult
from .request import GradeRequest
from .steps import fold_reading, needing_steps
from .triage import triaged

__all__ = ["grade_request"]

log = logging.getLogger(__name__)


def grade_request(
    request: GradeRequest,
    *,
    target: Target | None = None,
    sleep: Callable[[float], None] = time.sleep,
    progress: Callable[[int, int], None] | None = None,
) -> GradeRunResult:
    """Grade every run of ``request`` (module docstring); ``target``
    overrides the request's. Raises
    :class:`~truereward.sweeps.SweepNotFound` for a sweep that does not exist."""
    report = GradeRunReport()
    delays = retry_delays(request.retry_delay_seconds, request.max_attempts)
    planned, skipped = plan_sweep(request, target)
    for entry, why in skipped:
        report.skip(entry, why)
    jobs = needing_steps(triaged(planned, request.regrade, request.io_budget), report.add)
    total = len(planned)
    log.info("grading %d runs of %s (regrade: %s)", total, request.sweep, request.regrade)
    try:
        # As many runs a chunk as the I/O budget has room for (one at a time
        # on a local disk), read together and published together.
        for chunk in chunked(jobs, max(1, request.io_budget)):
            readings = read_chunk(chunk, request.max_attempts, delays, sleep)
            publishing = PublishProgress([fold_reading(reading) for reading in readings])
            publishing.attempt(last=True)
            for published in publishing.results():
                report.add(published)
            done = sum(report.decisions().values())
            log.debug("%s: %d of %d runs through", chunk.name, done, total)
            if progress is not None:
                progress(done, total)
    except KeyboardInterrupt:
        done = sum(report.decisions().values())
        log.warning(
            "stopped: %d of %d runs went through, each published with its whole set of files; "
            "grading the same request again grades the rest",
            done,
            total,
        )
        raise
    result = report.result()
    log.info("%s", result.headline())
    return result
