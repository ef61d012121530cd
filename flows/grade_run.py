"""The ``grade-run`` flow: grade every run of a sweep and publish each grade.

One parameter, ``request`` (:class:`truereward.grading.GradeRequest`): runs
read, folded and published in chunks, the grader's transient faults retried;
returns a :class:`~truereward.grading.GradeRunOutcome` (persisted JSON), emits
events. docs/prefect.md. Deployed, or here on the ephemeral API::

    prefect deployment run 'grade-run/local' --watch \\
        -p request='{"sweep": "samples/sweep", "target": "out/graded"}'
    python flows/grade_run.py samples/sweep --target out/demo
    python flows/grade_run.py samples/sweep --target out/demo --regrade grader-refusals
"""

# No "from __future__ import annotations": Prefect reads the annotation of
# ``request`` at run time to validate it.

import argparse
import contextlib
import signal
import sys
from collections.abc import Sequence
from typing import Any, Literal, cast

from prefect import State, flow, get_run_logger
from prefect.client.schemas.objects import FlowRun
from prefect.context import FlowRunContext
from prefect.futures import PrefectFuture
from prefect.states import Completed, Failed
from prefect.task_runners import TaskRunner
from prefect.tasks import exponential_backoff

from truereward.grading.chunks import chunk_size_for, chunked
from truereward.grading.commands import deployment_command, local_command
from truereward.grading.halt import PUBLISHED, Halt
from truereward.grading.markdown import render_result, render_runs
from truereward.grading.outcome import GradeRunOutcome
from truereward.grading.plan import RunJob, plan_sweep
from truereward.grading.report import GradeRunReport, GradeRunResult, PublishFailed
from truereward.grading.request import REGRADE_POLICIES, GradeRequest
from truereward.grading.steps import needing_steps
from truereward.grading.triage import triaged
from truereward.prefect.artifacts import (
    artifact_key,
    create_artifacts,
    deployment_name,
    flow_run_name,
    is_shard,
)
from truereward.prefect.events import emit_outcome
from truereward.prefect.lifeline import (
    DRAIN_SECONDS,
    STOP_SIGNALS,
    Lifeline,
    end_process,
    stop_lifeline,
    watch_flow_run,
)
from truereward.prefect.lost import NAMES_SHOWN, LostReport, render_lost
from truereward.prefect.pipeline import Halted, grade_chunks
from truereward.prefect.progress import PublishingProgress
from truereward.prefect.runner import (
    RequestedTaskRunner,
    largest_chunk,
    runner_name,
    ship_flow_code,
    task_runner_for,
)
from truereward.prefect.tasks import fold, publish, read
from truereward.util.target import Target

#: The name of the state the flow ends in when it cannot grade at all
#: (followed by ``: <why>``).
NOT_STARTED = "Not started"


def _not_started(why: str, limit: int = 160) -> str:
    """``Not started: <why>``, cut to ``limit`` characters."""
    name = f"{NOT_STARTED}: {' '.join(why.split())}"
    return name if len(name) <= limit else name[: limit - 1] + "…"


def _target(request: GradeRequest) -> Target | None:
    if request.target_block is None:
        return None
    from truereward.prefect.block import load_target

    return load_target(request.target_block)


class CannotGrade(Exception):
    """The request cannot be graded at all; the message says why."""


def _plan(request: GradeRequest) -> tuple[Sequence[RunJob], list[tuple[str, str]], Target | None]:
    """The runs, the entries that are not, and the target block's target,
    or :class:`CannotGrade`."""
    from truereward.sweeps.source import SweepNotFound

    try:
        target = _target(request)
    except (ValueError, RuntimeError) as error:  # no such block, or no API to load it from
        raise CannotGrade(f"target_block {request.target_block!r}: {error}") from None
    try:
        jobs, skipped = plan_sweep(request, target)
        return jobs, skipped, target
    except SweepNotFound as error:
        raise CannotGrade(f"sweep: {error}") from None


def end_lifeline(flow: object, flow_run: FlowRun, state: State[Any]) -> None:
    """A state hook: the flow run's final state is recorded, so its
    lifeline stops (the process goes on without it)."""
    stop_lifeline(flow_run.id)


def _lifeline() -> Lifeline | None:
    """The flow run's lifeline, started (``None`` when it is turned off, or
    outside a flow run); :class:`CannotGrade` for a bad grace period."""
    try:
        return watch_flow_run(signals=True)
    except ValueError as error:
        raise CannotGrade(str(error)) from None


def _resume(request: GradeRequest) -> list[str]:
    """The commands that run ``request`` again: through this flow run's
    deployment when it came from one, and on one machine."""
    from prefect.runtime import deployment

    commands = [local_command(request)]
    if deployment.id is not None:
        commands.insert(0, deployment_command(request, deployment_name()))
    return commands


def _lost(
    lifeline: Lifeline,
    why: str,
    stage: Literal["planning", "grading", "graded"],
    resume: list[str],
    *,
    runs: int | None = None,
    published: dict[str, int] | None = None,
    **more: Any,
) -> str:
    return render_lost(
        LostReport(
            why=why,
            stage=stage,
            exit_status=lifeline.exit_status,
            signal=lifeline.signal.name if lifeline.signal is not None else None,
            runs=runs,
            published=published or {},
            resume=resume,
            **more,
        )
    )


@flow(
    name="grade-run",
    description="Grade every run of a sweep: read, fold and publish each run's grade.",
    flow_run_name=flow_run_name,
    # A cast: TaskRunner is invariant in its future type, so mypy takes a
    # thread runner (of PrefectConcurrentFuture) for no TaskRunner[PrefectFuture].
    task_runner=cast("TaskRunner[PrefectFuture[Any]]", RequestedTaskRunner()),
    validate_parameters=True,
    # The result is a GradeRunOutcome (the headline and its counts, never a
    # line per run), persisted as JSON in the result storage Prefect's
    # settings name, so that a caller of run_deployment reads it back.
    persist_result=True,
    result_serializer="json",
    on_completion=[end_lifeline],
    on_failure=[end_lifeline],
    on_crashed=[end_lifeline],
    on_cancellation=[end_lifeline],
)
def grade_run(request: GradeRequest) -> State[GradeRunOutcome]:
    """Grade the runs ``request`` names (module docstring)."""
    logger = get_run_logger()
    try:
        lifeline = _lifeline()
        resume = _resume(request)
        if lifeline is not None:
            lifeline.farewell = lambda why: _lost(lifeline, why, "planning", resume)
        jobs, skipped, target = _plan(request)
    except CannotGrade as error:
        logger.error("cannot grade: %s", error)
        # The reason is in the state's name too: `prefect deployment run
        # --watch` prints the final state's name, not its message.
        return Failed(name=_not_started(str(error)), message=f"cannot grade: {error}")
    context = FlowRunContext.get()
    configured = context.task_runner if context is not None else RequestedTaskRunner()
    chosen = isinstance(configured, RequestedTaskRunner)
    on = request.task_runner if chosen else runner_name(configured)
    size = request.chunk_size or chunk_size_for(
        len(jobs), request.concurrency, largest_chunk(on), request.io_budget
    )
    logger.info(
        "grading %d runs in chunks of %d, %d chunks at a time, on %s (regrade: %s)",
        len(jobs),
        size,
        request.concurrency,
        on,
        request.regrade,
    )
    if on != "threads":  # task runs in other processes: see ship_flow_code
        ship_flow_code(__name__)
    retries = request.max_attempts - 1
    steps = (
        read.with_options(
            retries=retries,
            retry_delay_seconds=exponential_backoff(request.retry_delay_seconds)(retries)
            if retries
            else 0,
        ),
        fold,
        publish,
    )
    report = GradeRunReport()
    for entry, why in skipped:
        report.skip(entry, why)
        logger.warning("not graded: %r: %s", entry, why)
    # A kept run whose set a listing shows whole needs no task run at all.
    decided = needing_steps(triaged(jobs, request.regrade, request.io_budget), report.add)
    work = chunked(decided, size)
    tags = ("truereward", f"sweep:{request.sweep_label or 'runs'}")
    halt = lifeline.halt if lifeline is not None else None
    if lifeline is not None:
        # Should the process have to end while the flow waits on the API:
        # how many runs were planned, and what is known published (the
        # halt sees the publishes of this process, the report those of
        # task runs elsewhere that reported back).
        seen = lifeline.halt
        watched = lifeline
        lifeline.farewell = lambda why: _lost(
            watched, why, "grading", resume, runs=len(jobs), published=_at_least(seen, report)
        )
    with contextlib.ExitStack() as stack:
        # Runs published of those planned, in an artifact kept up to date.
        # A shard's artifacts are keyless (its parent keys the sweep's own).
        key = None if is_shard() else artifact_key(request, target, "progress")
        progress = PublishingProgress(key, len(jobs), lambda: _count(report)).start()
        stack.callback(progress.stop)
        # The caller's own runner is started by Prefect for this flow run.
        runner = stack.enter_context(task_runner_for(request)) if chosen else configured
        halted = grade_chunks(
            work,
            runner,
            concurrency=request.concurrency,
            steps=steps,
            report=report,
            tags=tags,
            halt=halt,
            drain_seconds=DRAIN_SECONDS,
        )
        if halted is not None and lifeline is not None:
            lifeline.end(_halted(lifeline, halted, jobs, report.result(), resume))
    result = report.result()
    if lifeline is not None:
        failures = [item.run for item in result.failures]
        done = lifeline
        lifeline.farewell = lambda why: _lost(
            done,
            why,
            "graded",
            resume,
            runs=result.summary.runs,
            published=_published(result),
            failed=result.failed,
            failures=failures,
        )
    page = _write_page(result, request, target, logger)
    create_artifacts(result, request, target, page)
    emit_outcome(result, sweep=request.sweep_label, report=page)
    logger.info("%s: %s", result.state_name, result.headline())
    if result.failed:
        # A failed state carries an exception; the result rides on it.
        return Failed(name=result.state_name, message=result.headline(), data=PublishFailed(result))
    outcome = GradeRunOutcome.of(
        result,
        sweep=request.sweep_label,
        target=request.target if request.target is not None else request.target_block,
        report=page,
    )
    return Completed(name=result.state_name, message=result.headline(), data=outcome)


def _at_least(halt: Halt, report: GradeRunReport) -> dict[str, int]:
    """Runs known published, by decision, from either account."""
    counted = {name: count for name, count in report.decisions().items() if name in PUBLISHED}
    for name, count in halt.published().items():
        counted[name] = max(count, counted.get(name, 0))
    return dict(sorted(counted.items()))


def _count(report: GradeRunReport) -> int:
    """Runs published so far (safe from another thread)."""
    return sum(count for name, count in report.decisions().items() if name in PUBLISHED)


def _published(result: GradeRunResult) -> dict[str, int]:
    """The runs whose grade is published, by decision."""
    return {name: count for name, count in result.published.items() if name in PUBLISHED}


def _halted(
    lifeline: Lifeline,
    halted: Halted,
    jobs: Sequence[RunJob],
    result: GradeRunResult,
    resume: list[str],
) -> str:
    """The message of a flow run whose pipeline stopped for want of its API:
    the runs of the chunks in flight that were not published, then the
    runs never started (in the plan's order, after the ones taken)."""
    never = len(jobs) - halted.taken
    shown = sorted(set(halted.unfinished))
    if len(shown) < NAMES_SHOWN and never:
        shown += [job.run for job in jobs[halted.taken : halted.taken + NAMES_SHOWN - len(shown)]]
    return _lost(
        lifeline,
        halted.why,
        "grading",
        resume,
        runs=len(jobs),
        published=_published(result),
        failed=result.failed,
        failures=[item.run for item in result.failures],
        not_graded=shown,
        not_graded_count=len(set(halted.unfinished)) + never,
        cut=halted.cut,
    )


def _write_page(
    result: GradeRunResult, request: GradeRequest, target: Any, logger: Any
) -> str | None:
    """Write the HTML sweep report; a page that cannot be written is logged,
    never a failure of the grading."""
    from truereward.grading.sweep_report import write_sweep_report

    try:
        page = write_sweep_report(result, request, target, deployment=deployment_name())
    except (OSError, ValueError, ImportError) as error:
        logger.warning("the sweep report could not be written: %s", error)
        return None
    if page is not None:
        logger.info("sweep report: %s", page)
    return page


def _request(args: argparse.Namespace) -> GradeRequest:
    """The request the command line describes (``--request`` JSON, or the
    sweep and flags)."""
    if args.request is not None:
        if args.sweep is not None:
            raise ValueError("give a SWEEP or --request, not both")
        return GradeRequest.model_validate_json(args.request)
    if args.sweep is None:
        raise ValueError("give a SWEEP (a directory whose subdirectories are runs) or --request")
    return GradeRequest(
        sweep=args.sweep,
        target=args.target,
        reader=args.reader,
        regrade=args.regrade,
        max_attempts=args.max_attempts,
        retry_delay_seconds=args.retry_delay,
        concurrency=args.concurrency,
        chunk_size=args.chunk_size,
        task_runner=args.task_runner,
    )


def _stop_at_once(request: GradeRequest, when: list[str]) -> None:
    """Outside the flow run's grading (Prefect starting, or ending): a
    SIGINT or SIGTERM ends the process at once, on one line (``when[0]``
    says where it stood). Inside it, the flow run's lifeline takes the
    signals over (:meth:`Lifeline.catch_signals`) and gives them back."""
    command = local_command(request)

    def stop(number: int, frame: object) -> None:
        name = signal.Signals(number).name
        end_process(
            f"grade_run: stopped by {name} {when[0]}; exit status {128 + number}; "
            f"to resume (published grades are kept): {command}",
            128 + number,
        )

    for number in STOP_SIGNALS:
        signal.signal(number, stop)


def main(argv: Sequence[str] | None = None) -> int:
    """Grade a sweep on this machine (Prefect's ephemeral API unless a
    server is configured) and print the table and the summary. Exit status
    0 when every grade was published, 1 otherwise, 2 for a bad request or a
    sweep that cannot be graded, 75 when the Prefect API was lost, 130 on
    SIGINT (Ctrl-C) and 143 on SIGTERM (the process ends from inside the
    flow run, saying on stderr what it published and how to resume)."""
    parser = argparse.ArgumentParser(
        prog="flows/grade_run.py", description="Grade a sweep with the grade-run flow."
    )
    parser.add_argument("sweep", nargs="?", help="a directory whose subdirectories are runs")
    parser.add_argument("--request", metavar="JSON", help="the whole GradeRequest, as JSON")
    parser.add_argument("--target", help="publish run <id> under TARGET/<id>/")
    parser.add_argument("--reader", help="reader name (default: each task spec's)")
    parser.add_argument(
        "--regrade",
        choices=REGRADE_POLICIES,
        default="none",
        help="which runs that have a grade are graded again (default: none)",
    )
    parser.add_argument("--max-attempts", type=int, default=3)
    parser.add_argument("--retry-delay", type=float, default=5.0, help="seconds, doubled")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--chunk-size", type=int)
    parser.add_argument("--task-runner", choices=("threads", "dask"), default="threads")
    args = parser.parse_args(argv)
    from pydantic import ValidationError

    from truereward.record.validation import describe

    try:
        request = _request(args)
    except ValidationError as error:
        print(f"grade_run: bad request: {describe(error)}", file=sys.stderr)
        return 2
    except ValueError as error:
        print(f"grade_run: {error}", file=sys.stderr)
        return 2
    try:
        _plan(request)
    except CannotGrade as error:
        print(f"grade_run: cannot grade: {error}", file=sys.stderr)
        return 2
    when = ["before grading began: nothing was published"]
    _stop_at_once(request, when)
    try:
        state = grade_run(request, return_state=True)
    except RuntimeError as error:  # the ephemeral API did not come up, for one
        print(f"grade_run: Prefect could not run the flow: {str(error)[:2000]}", file=sys.stderr)
        return 1
    when[0] = f"after grading ({state.name}: {state.message})"
    # The flow returns a State, so its declared result type is a State; the
    # value is the GradeRunOutcome (or PublishFailed) it carries, with the
    # whole GradeRunResult beside it in this process.
    result: object = state.result(raise_on_failure=False)
    if isinstance(result, PublishFailed):
        result = result.result
    elif isinstance(result, GradeRunOutcome):
        result = result.detail
    if not isinstance(result, GradeRunResult):
        print(f"grade_run: {state.name}: {state.message}", file=sys.stderr)
        return 1
    print(render_runs(result))
    print(
        render_result(result, f"grade-run {request.sweep or f'({len(request.runs or [])} runs)'}")
    )
    _say_page(request)
    return 0 if state.is_completed() else 1


def _say_page(request: GradeRequest) -> None:
    """Print where the HTML sweep report is, when the flow wrote one."""
    import os

    from truereward.grading.sweep_report import report_location
    from truereward.util import urls

    where = report_location(request)
    local = None if where is None else urls.local_or_none(where)
    if where is not None and (local is None or os.path.isfile(local)):
        print(f"sweep report: {where}")


if __name__ == "__main__":
    sys.exit(main())
