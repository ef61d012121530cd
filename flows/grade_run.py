"""The ``grade-run`` flow: grade every run of a sweep and publish each grade.

One parameter, ``request`` (:class:`truereward.grading.GradeRequest`). For
each run: read, fold, publish (the tasks of :mod:`truereward.prefect.tasks`),
in chunks, ``concurrency`` chunks at a time. A run refused only for
grader-blamed faults that may pass is read again as Prefect retries of its
``read`` task run, with backoff, up to ``max_attempts``; each attempt is
recorded in its document. A run-blamed refusal is published at once. A run
whose target already holds a grade is not graded again (its stored grade is
published again, which repairs an interrupted publish), so running the flow
twice on a sweep changes nothing.

It ends with a table artifact and a markdown artifact, returns the
:class:`~truereward.grading.GradeRunResult`, and finishes Completed in a state
named ``Graded`` (every run gradable) or ``Graded with refusals``; Failed
(``Publish failed``) only when some grade could not be published, with a
:class:`~truereward.grading.PublishFailed` error whose ``result`` is the
GradeRunResult (called as a function, the flow raises it).

Deploy and run against a Prefect server (see docs/prefect.md)::

    prefect deploy --prefect-file infra/prefect.yaml --name local
    prefect deployment run 'grade-run/local' -p request='{"sweep": "samples/sweep"}' --watch

Or here, on Prefect's ephemeral API, printing the table::

    python flows/grade_run.py samples/sweep --target out/demo
"""

# No "from __future__ import annotations": Prefect reads the annotation of
# ``request`` at run time to validate it.

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from prefect import State, flow, get_run_logger
from prefect.states import Completed, Failed

from truereward.grading.chunks import chunk_size_for, chunked
from truereward.grading.markdown import render_result, render_runs
from truereward.grading.plan import plan_runs
from truereward.grading.progress import retry_delays
from truereward.grading.report import GradeRunReport, GradeRunResult, PublishFailed
from truereward.grading.request import GradeRequest
from truereward.prefect.artifacts import create_artifacts
from truereward.prefect.pipeline import grade_chunks
from truereward.prefect.runner import task_runner_for
from truereward.prefect.tasks import fold, publish, read
from truereward.target import Target


def _target(request: GradeRequest) -> Target | None:
    if request.target_block is None:
        return None
    from truereward.prefect.block import TargetBlock

    block: Any = TargetBlock.load(request.target_block)
    target: Target = block.target()
    return target


@flow(
    name="grade-run",
    description="Grade every run of a sweep: read, fold and publish each run's grade.",
    validate_parameters=True,
    persist_result=False,
)
def grade_run(request: GradeRequest) -> State[GradeRunResult]:
    """Grade the runs ``request`` names (module docstring)."""
    logger = get_run_logger()
    jobs = plan_runs(request, _target(request))
    size = request.chunk_size or chunk_size_for(len(jobs), request.concurrency)
    logger.info(
        "grading %d runs in chunks of %d, %d chunks at a time, on %s",
        len(jobs),
        size,
        request.concurrency,
        request.task_runner,
    )
    delays = retry_delays(request.retry_delay_seconds, request.max_attempts)
    steps = (
        read.with_options(retries=request.max_attempts - 1, retry_delay_seconds=delays or 0),
        fold,
        publish,
    )
    report = GradeRunReport()
    with task_runner_for(request) as runner:
        grade_chunks(
            chunked(jobs, size),
            runner,
            concurrency=request.concurrency,
            steps=steps,
            report=report,
        )
    result = report.result()
    title = f"grade-run {request.sweep_name or f'({len(jobs)} runs)'}"
    create_artifacts(result, sweep=request.sweep_name, title=title)
    logger.info("%s: %s", result.state_name, result.headline())
    if result.failed:
        # A failed state carries an exception; the result rides on it.
        return Failed(name=result.state_name, message=result.headline(), data=PublishFailed(result))
    return Completed(name=result.state_name, message=result.headline(), data=result)


def main(argv: Sequence[str] | None = None) -> int:
    """Grade a sweep on this machine (Prefect's ephemeral API unless a
    server is configured) and print the table and the summary. Exit status
    0 when every grade was published, 1 otherwise, 2 for a bad request."""
    parser = argparse.ArgumentParser(
        prog="flows/grade_run.py", description="Grade a sweep with the grade-run flow."
    )
    parser.add_argument("sweep", help="a directory whose subdirectories are runs")
    parser.add_argument("--target", help="publish run <id> under TARGET/<id>/")
    parser.add_argument("--reader", help="reader name (default: each task spec's)")
    parser.add_argument("--max-attempts", type=int, default=3)
    parser.add_argument("--retry-delay", type=float, default=5.0, help="seconds, doubled")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--chunk-size", type=int)
    parser.add_argument("--task-runner", choices=("threads", "dask"), default="threads")
    args = parser.parse_args(argv)
    from pydantic import ValidationError

    from truereward.sweeps.source import SweepNotFound, SweepSource

    try:
        request = GradeRequest(
            sweep=args.sweep,
            target=args.target,
            reader=args.reader,
            max_attempts=args.max_attempts,
            retry_delay_seconds=args.retry_delay,
            concurrency=args.concurrency,
            chunk_size=args.chunk_size,
            task_runner=args.task_runner,
        )
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in item['loc']) or 'request'}: "
            f"{str(item['msg']).removeprefix('Value error, ')}"
            for item in error.errors()
        )
        print(f"grade_run: bad request: {problems}", file=sys.stderr)
        return 2
    try:
        SweepSource(args.sweep).run_names()
    except SweepNotFound as error:
        print(f"grade_run: {error}", file=sys.stderr)
        return 2
    try:
        state = grade_run(request, return_state=True)
    except RuntimeError as error:  # the ephemeral API did not come up, for one
        print(f"grade_run: Prefect could not run the flow: {str(error)[:2000]}", file=sys.stderr)
        return 1
    result = state.result(raise_on_failure=False)
    if isinstance(result, PublishFailed):
        result = result.result
    if not isinstance(result, GradeRunResult):
        print(f"grade_run: {state.name}: {state.message}", file=sys.stderr)
        return 1
    print(render_runs(result))
    print(render_result(result, f"grade-run {args.sweep}"))
    return 0 if state.is_completed() else 1


if __name__ == "__main__":
    sys.exit(main())
