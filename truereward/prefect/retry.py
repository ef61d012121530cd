"""When a task run of ours is tried again: transient failures only.

:func:`retry_transient` (the tasks' ``retry_condition_fn``) retries two
exceptions and nothing else: :class:`GraderFault` (the ``read`` task read
runs whose refusals are all the grader's and may pass; only they are read
again) and :class:`PublishRetry` (the ``publish`` task could not publish
some runs for a reason that may pass; only they are published again). A
bug, a conflict, a run-blamed refusal: never retried. docs/prefect.md,
"Retries, routed by blame".
"""

from __future__ import annotations

from typing import Any

from ..util.exceptions import TruerewardError

__all__ = ["GraderFault", "PublishRetry", "retry_transient"]


class GraderFault(TruerewardError):
    """Runs of a chunk were refused for grader faults that may pass.
    ``runs`` are their ids, ``reasons`` (one per run, when given) the codes
    and why of each, as the message shows them."""

    def __init__(self, runs: list[str], reasons: list[str] | None = None) -> None:
        self.runs = runs
        self.reasons = reasons or []
        told = [f"{run}: {why}" for run, why in zip(runs, self.reasons, strict=False)] or runs
        shown = "; ".join(told[:5]) + (f"; and {len(runs) - 5} more" if len(runs) > 5 else "")
        super().__init__(f"grader faults that may pass: {shown}; reading them again")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.runs, self.reasons))


class PublishRetry(TruerewardError):
    """Runs of a chunk could not be published, for reasons that may pass."""

    def __init__(self, failures: list[tuple[str, str]]) -> None:
        self.failures = failures
        shown = "; ".join(f"{run}: {why}" for run, why in failures[:3])
        super().__init__(f"{len(failures)} runs not published yet ({shown}); trying again")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.failures,))


def retry_transient(task: Any, task_run: Any, state: Any) -> bool:
    """``retry_condition_fn``: retry when the task raised
    :class:`GraderFault` or :class:`PublishRetry`, and only then."""
    error = state.result(raise_on_failure=False)
    return isinstance(error, GraderFault | PublishRetry)
