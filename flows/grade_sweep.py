"""The ``grade-sweep`` flow: a sweep too large for one process, sharded over
``grade-run`` flow runs on a work pool's workers.

One parameter, ``request`` (:class:`truereward.grading.shards.SweepRequest`);
it lists the sweep once, splits its runs stably by run id into shards, runs
one ``grade-run`` flow run per shard through ``run_deployment`` (at most
``shards_in_flight`` at once), then summarises the sweep from the published
grades. docs/scale.md, "On several process workers", says how to run it::

    prefect deployment run 'grade-sweep/local' --watch \\
        -p request='{"sweep": "samples/sweep", "target": "out/graded", "shards": 4}'
"""

# No "from __future__ import annotations": Prefect reads the annotation of
# ``request`` at run time to validate it.

import asyncio
import json
import shlex
from typing import Any

from prefect import State, flow, get_client, get_run_logger
from prefect.artifacts import acreate_markdown_artifact, acreate_table_artifact
from prefect.client.schemas.objects import FlowRun
from prefect.deployments import arun_deployment
from prefect.flow_runs import wait_for_flow_run
from prefect.states import Completed, Failed

from truereward.grading.plan import plan_sweep
from truereward.grading.shards import SweepRequest, launch_order, shard_requests
from truereward.prefect.artifacts import artifact_key
from truereward.prefect.lifeline import EXIT_API_LOST, stop_lifeline, watch_flow_run
from truereward.prefect.lost import LostReport, render_lost
from truereward.sweeps.markdown import render_summary
from truereward.sweeps.source import SweepNotFound, SweepSource
from truereward.sweeps.summary import SweepSummary, summarize
from truereward.util import urls
from truereward.util.target import Target

#: Runs of a failed shard named in the artifact (all are counted).
NAMED_RUNS = 10


def _target(request: SweepRequest) -> Target | None:
    if request.target_block is not None:
        from truereward.prefect.block import load_target

        return load_target(request.target_block)
    if request.target is not None:
        return Target(url=request.target, storage_options=dict(request.storage_options))
    return None


def _summary(request: SweepRequest, target: Target | None) -> SweepSummary:
    """The whole sweep's summary from its published grades (at the target,
    or in each run's own logs/verifier)."""
    if target is not None:
        source = SweepSource(target.url, target.options())
    else:
        source = SweepSource(request.sweep or "", dict(request.storage_options))
    return summarize(source.records())


def _again(request: SweepRequest, shard: int | None = None) -> str:
    """The command that grades shard ``shard`` again (every shard: the
    request as it is), through this deployment (``grade-sweep/local`` when
    run without one)."""
    from prefect.runtime import deployment

    fields = request.model_dump(mode="json", exclude_defaults=True)
    if shard is not None:
        fields["only_shards"] = [shard]
    text = json.dumps(fields, sort_keys=True, separators=(", ", ": "))
    name = f"grade-sweep/{deployment.name}" if deployment.name else "grade-sweep/local"
    return f"prefect deployment run '{name}' -p request={shlex.quote(text)} --watch"


async def _finished(flow_run_id: Any, patience: float = 60.0) -> FlowRun:
    """The shard's flow run once the API records it in a final state.

    ``wait_for_flow_run`` returns on the first event of a final state, then
    reads the flow run; on a loaded server that read has returned the state
    before it (``Running``), and the sweep was reported failed for a shard
    that had completed. So a flow run read before its final state is read
    again, once a second, for up to ``patience`` seconds."""
    run: FlowRun = await wait_for_flow_run(flow_run_id, timeout=None)
    if run.state is not None and run.state.is_final():
        return run
    async with get_client() as client:
        for _ in range(int(patience)):
            await asyncio.sleep(1.0)
            run = await client.read_flow_run(flow_run_id)
            if run.state is not None and run.state.is_final():
                break
    return run


async def _run_shards(request: SweepRequest, shards: dict[int, Any], logger: Any) -> dict[int, Any]:
    """Each shard's finished flow run, at most ``shards_in_flight`` at once.

    The shards' flow runs are created one at a time, largest first
    (:func:`launch_order`), and waited for together. Created at once, they
    collide on the write lock of a SQLite database (Prefect's default): the
    server answers ``503``, each client backs off, and while the first
    shards grade their own task runs keep the lock busy, so the last shard
    started late while the workers sat idle (``infra/bench/grade_sweep.py``;
    docs/scale.md, "Where the time goes")."""
    room = asyncio.Semaphore(request.shards_in_flight or len(shards) or 1)
    creating = asyncio.Lock()

    async def one(index: int, shard: Any) -> Any:
        async with room:
            logger.info("shard %d: %d runs on %s", index, len(shard.runs or ()), request.deployment)
            async with creating:
                created = await arun_deployment(
                    name=request.deployment,
                    parameters={"request": shard.model_dump(mode="json", exclude_defaults=True)},
                    tags=["truereward", f"sweep:{shard.sweep_label or 'runs'}", f"shard:{index}"],
                    timeout=0,  # created, not waited for
                )
            return await _finished(created.id)

    order = launch_order({index: len(shard.runs or ()) for index, shard in shards.items()})
    finished = await asyncio.gather(*(one(index, shards[index]) for index in order))
    ended = dict(zip(order, finished, strict=True))
    return {index: ended[index] for index in shards}


def _shard_rows(shards: dict[int, Any], runs: dict[int, Any]) -> list[dict[str, Any]]:
    rows = []
    for index, shard in shards.items():
        run = runs[index]
        state = run.state
        rows.append(
            {
                "shard": index,
                "runs": len(shard.runs or ()),
                "flow run": run.name,
                "state": state.name if state is not None else "unknown",
                "message": (state.message or "") if state is not None else "",
            }
        )
    return rows


def _name() -> str:
    from prefect.runtime import flow_run

    value: Any = flow_run.parameters.get("request")
    try:
        request = value if isinstance(value, SweepRequest) else SweepRequest.model_validate(value)
    except ValueError:
        return "grade-sweep-bad-request"
    return f"grade-sweep-{request.sweep_label or 'runs'}"


def end_lifeline(flow: object, flow_run: FlowRun, state: State[Any]) -> None:
    """A state hook: the flow run's final state is recorded, so its
    lifeline stops."""
    stop_lifeline(flow_run.id)


def _lost(why: str, again: str, shards: int, stage: Any) -> str:
    return render_lost(
        LostReport(
            why=why,
            stage=stage,
            exit_status=EXIT_API_LOST,
            flow="grade-sweep",
            shards=shards,
            resume=[again],
        )
    )


@flow(
    name="grade-sweep",
    description="Grade a sweep in shards, one grade-run flow run per shard on a work pool.",
    flow_run_name=_name,
    validate_parameters=True,
    persist_result=False,
    on_completion=[end_lifeline],
    on_failure=[end_lifeline],
    on_crashed=[end_lifeline],
    on_cancellation=[end_lifeline],
)
async def grade_sweep(request: SweepRequest) -> State[SweepSummary]:
    """Grade the sweep ``request`` names, shard by shard (module docstring).
    Should its Prefect API be lost (:mod:`truereward.prefect.lifeline`), the
    parent ends its process at once with status 75, naming the command that
    grades what is missing; its shards end by themselves."""
    logger = get_run_logger()
    try:
        # It publishes nothing itself: nothing to finish once the API is lost.
        lifeline = watch_flow_run(patience=0)
        again = _again(request)  # now: its deployment's name comes from the API
        if lifeline is not None:
            lifeline.farewell = lambda why: _lost(why, again, 0, "planning")
        target = _target(request)
        jobs, skipped = plan_sweep(request, target)
    except (SweepNotFound, ValueError, RuntimeError) as error:
        logger.error("cannot grade: %s", error)
        return Failed(name=f"Not started: {str(error)[:140]}", message=f"cannot grade: {error}")
    for entry, why in skipped:
        logger.warning("not graded: %r: %s", entry, why)
    shards = shard_requests(request, jobs, request.shards)
    if request.only_shards is not None:
        shards = {index: shard for index, shard in shards.items() if index in request.only_shards}
    logger.info("%d runs in %d shards; grading shards %s", len(jobs), request.shards, list(shards))
    if lifeline is not None:
        lifeline.farewell = lambda why: _lost(why, again, len(shards), "sharding")
    try:
        runs = await _run_shards(request, shards, logger)
    except Exception:
        # Waiting on a shard failed: when the API went away, the lifeline
        # ends the process saying so (status 75) rather than a traceback.
        if lifeline is not None and await asyncio.to_thread(lifeline.confirm_lost):
            await asyncio.Event().wait()
        raise
    summary = _summary(request, target)
    rows = _shard_rows(shards, runs)
    failed = [
        index for index, run in runs.items() if run.state is None or not run.state.is_completed()
    ]
    title = f"grade-sweep {request.sweep_label or ''}".strip()
    lines = [f"# {title}", "", f"{len(jobs)} runs in {request.shards} shards.", ""]
    lines += ["| shard | runs | flow run | state |", "|---:|---:|---|---|"]
    lines += [f"| {r['shard']} | {r['runs']} | {r['flow run']} | {r['state']} |" for r in rows]
    for index in failed:
        named = [urls.name(url) for url in shards[index].runs or ()]
        more = f" and {len(named) - NAMED_RUNS} more" if len(named) > NAMED_RUNS else ""
        lines += [
            "",
            f"## Shard {index} did not complete ({rows[list(shards).index(index)]['state']})",
            "",
            f"Runs: {', '.join(named[:NAMED_RUNS])}{more}. To grade it again (what it "
            "graded is kept):",
            "",
            "```bash",
            _again(request, index),
            "```",
        ]
    if skipped:
        lines += ["", "## Not graded (not runs)", ""]
        lines += [f"- `{entry}`: {why}" for entry, why in skipped]
    lines += ["", render_summary(summary, title="Sweep summary (from the published grades)")]
    # The flow is async: the sync names would return coroutines, never awaited.
    await acreate_markdown_artifact(
        markdown="\n".join(lines),
        key=artifact_key(request, target, "summary", flow="grade-sweep"),
        description=f"{title}: {summary.runs} runs, {summary.gradable} gradable",
    )
    await acreate_table_artifact(
        table=rows,
        key=artifact_key(request, target, "shards", flow="grade-sweep"),
        description=f"{title}: the shards",
    )
    headline = (
        f"{summary.runs} runs: {summary.gradable} gradable, {summary.ungradable} refused, "
        f"{summary.unreadable} without a grade; {len(shards)} shards"
    )
    if failed:
        return Failed(
            name=f"Shards failed: {', '.join(str(index) for index in failed)}",
            message=headline,
        )
    name = "Graded" if summary.gradable == summary.runs else "Graded with refusals"
    return Completed(name=name, message=headline, data=summary)
