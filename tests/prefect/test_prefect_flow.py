"""The grade-run flow in this process against a real Prefect server:
blame-routed retries visible as task-run retries, attempts in documents,
artifacts, state names, reruns that change nothing, chunks, Dask, blocks."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.sweeps import make_sweep, published, run_flow, snapshot
from truereward.grading import GradeRequest, GradeRunOutcome, PublishFailed

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def no_heartbeats() -> Iterator[None]:
    """Flow runs without Prefect's heartbeat thread: no test here is about
    heartbeats, and the end of every flow run waited for that thread to
    wake from its sleep."""
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        yield


def task_runs_by_name(flow_run_id: Any, expected: dict[str, int]) -> dict[str, Any]:
    """The flow run's task runs by name, once the server has recorded the
    run counts ``expected`` (task run states arrive as events, some after
    the flow run has ended: name every task run the test reads)."""
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    deadline = time.monotonic() + 30
    with get_client(sync_client=True) as client:
        while True:
            runs = client.read_task_runs(
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id]))
            )
            named = {run.name: run for run in runs}
            counts = {name: named[name].run_count for name in expected if name in named}
            final = all(run.state is not None and run.state.is_final() for run in runs)
            if (counts == expected and final) or time.monotonic() > deadline:
                return named
            time.sleep(0.2)


def once_each(chunks: Iterable[str]) -> dict[str, int]:
    """Each chunk's three task runs (read, fold, publish), run once each."""
    return {f"{step}-{chunk}": 1 for step in ("read", "fold", "publish") for chunk in chunks}


def state_names(task_run_id: Any) -> list[str]:
    from prefect import get_client

    with get_client(sync_client=True) as client:
        return [state.name for state in client.read_task_run_states(task_run_id)]


def outcome(grade: dict[str, Any]) -> tuple[Any, ...]:
    return (
        grade["gradable"],
        grade["reward"],
        sorted(item["code"] for item in grade["refusals"]),
        grade["run"]["attempt"],
        [item["attempt"] for item in grade["attempts"]],
    )


def test_grader_faults_are_retried_as_task_retries_and_recorded(
    prefect_client_settings: str, tmp_path: Path
) -> None:
    sweep = make_sweep(
        tmp_path / "nightly",
        {
            "run-ok": "pass",
            "run-fails": "fail",
            "run-heals": ("heal", 2),
            "run-never": "never",
            "run-blamed": "missing",
        },
    )
    out = tmp_path / "out"
    state = run_flow(sweep=str(sweep), target=str(out), retry_delay_seconds=0.05, max_attempts=3)
    assert state.is_completed() and state.name == "Graded with refusals"
    result = state.result()
    summary = result.summary
    assert (summary.runs, summary.gradable, summary.ungradable) == (5, 3, 2)
    assert summary.reward.mean == pytest.approx(2 / 3)  # gradable runs only
    assert {(item.code, item.blame) for item in summary.refusals} == {
        ("EVIDENCE_UNREADABLE", "grader"),
        ("EVIDENCE_MISSING", "run"),
    }
    assert summary.attempts.total == 1 + 1 + 3 + 3 + 1

    files = published(out)
    heals, never, blamed = (files[run]["grade"] for run in ("run-heals", "run-never", "run-blamed"))
    assert outcome(heals) == (True, 1.0, [], 3, [1, 2])
    assert all(
        [item["code"] for item in attempt["refusals"]] == ["EVIDENCE_UNREADABLE"]
        for attempt in heals["attempts"]
    )
    assert "reward.txt" in files["run-heals"]["files"]
    assert outcome(never) == (False, None, ["EVIDENCE_UNREADABLE"], 3, [1, 2])
    assert "reward.txt" not in files["run-never"]["files"]
    assert outcome(blamed) == (False, None, ["EVIDENCE_MISSING"], 1, [])
    assert blamed["refusals"][0]["blame"] == "run"
    assert never["run"]["sweep"] == "nightly"

    # The retries are Prefect task-run retries, visible through the API.
    runs = task_runs_by_name(
        state.state_details.flow_run_id,
        {
            "read-run-heals": 3,
            "read-run-never": 3,
            "read-run-blamed": 1,
            "read-run-ok": 1,
            "fold-run-heals": 1,
            "publish-run-heals": 1,
        },
    )
    assert runs["read-run-heals"].run_count == 3
    assert runs["read-run-never"].run_count == 3
    assert runs["read-run-blamed"].run_count == 1
    assert runs["read-run-ok"].run_count == 1
    assert runs["fold-run-heals"].run_count == 1 and runs["publish-run-heals"].run_count == 1
    assert state_names(runs["read-run-heals"].id).count("AwaitingRetry") == 2
    assert "AwaitingRetry" not in state_names(runs["read-run-blamed"].id)
    # A run never healed is not a plain Completed in `prefect task-run ls`.
    never_state = runs["read-run-never"].state
    assert never_state.is_completed() and never_state.name == "Grader-refused"
    assert "run-never: EVIDENCE_UNREADABLE (grader)" in (never_state.message or "")
    assert runs["read-run-ok"].state.name == "Completed"
    assert runs["read-run-blamed"].state.name == "Completed"  # the run's own fault

    # A table artifact and a markdown artifact, keyed by the sweep.
    from prefect import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(
                flow_run_id=ArtifactFilterFlowRunId(any_=[state.state_details.flow_run_id])
            )
        )
    # (Prefect keeps the persisted result's record as an artifact without a key.)
    artifacts = [artifact for artifact in artifacts if artifact.key is not None]
    kinds = {artifact.key: artifact.type for artifact in artifacts}
    # Keys that say the sweep, the target and the part.
    to = "to-" + re.sub(r"[^a-z0-9]+", "-", str(out).lower()).strip("-")[-40:].strip("-")
    assert kinds == {
        f"grade-run-nightly-{to}-runs": "table",
        f"grade-run-nightly-{to}-summary": "markdown",
        f"grade-run-nightly-{to}-regrade": "markdown",
        f"grade-run-nightly-{to}-report": "markdown",  # a link artifact
        f"grade-run-nightly-{to}-progress": "progress",  # runs published of those planned
    }
    page = out / "sweep-report.html"
    assert page.as_uri() in next(a.data for a in artifacts if a.key.endswith("-report"))
    html = page.read_text()
    assert 'data-metric="runs"' in html and "run-never" in html
    by_key = {artifact.key.rsplit("-", 1)[1]: artifact.data for artifact in artifacts}
    assert by_key["progress"] == 100.0  # every run published
    assert "Graded with refusals" in by_key["summary"] and "EVIDENCE_MISSING" in by_key["summary"]
    # The table shows what a healed run healed from.
    rows = json.loads(by_key["runs"])
    # The columns a reader looks for first come first.
    assert list(rows[0])[:6] == ["run", "state", "reward", "codes", "why", "earlier"]
    table = {row["run"]: row for row in rows}
    assert table["run-heals"]["earlier"] == "1: EVIDENCE_UNREADABLE; 2: EVIDENCE_UNREADABLE"
    assert table["run-ok"]["earlier"] == "—"
    # The runs still refused for the grader's reasons, and how to grade them again.
    regrade = by_key["regrade"]
    assert "run-never" in regrade and "run-blamed" not in regrade
    assert "prefect deployment run 'grade-run/local'" in regrade
    assert '"regrade": "grader-refusals"' in regrade and "python flows/grade_run.py" in regrade
    # The flow run is named after the sweep.
    with get_client(sync_client=True) as client:
        flow_run = client.read_flow_run(state.state_details.flow_run_id)
    assert flow_run.name == "grade-run-nightly"
    # Its result is persisted: read back through the API, the outcome's
    # counts without the per-run detail (docs/prefect.md, "The flow run's result").
    # A JSON object, which GradeRunOutcome reads again.
    assert flow_run.state is not None
    read_back = flow_run.state.result()
    assert isinstance(read_back, dict) and read_back["summary"]["runs"] == 5
    stored = GradeRunOutcome.model_validate(read_back)
    assert stored.model_dump() == result.model_dump() and stored.detail is None
    assert result.detail is not None and len(result.detail.runs) == 5
    assert (stored.state, stored.sweep, stored.target) == (
        "Graded with refusals",
        "nightly",
        str(out),
    )
    assert stored.report == str(page) and stored.headline == state.message

    # Running again publishes nothing new and changes nothing.
    before = snapshot(out)
    again = run_flow(sweep=str(sweep), target=str(out), retry_delay_seconds=0.05)
    assert again.name == "Graded with refusals"
    assert again.result().published == {"unchanged": 5}
    assert again.result().already_graded == 5
    assert snapshot(out) == before

    # An interrupted publish (reward.txt never written) is repaired, nothing regraded.
    reward = out / "run-ok" / "reward.txt"
    reward.unlink()
    repaired = run_flow(sweep=str(sweep), target=str(out), retry_delay_seconds=0.05)
    assert repaired.result().published == {"repaired": 1, "unchanged": 4}
    assert reward.read_bytes() == before["run-ok/reward.txt"][0]
    assert (out / "run-ok" / "grade.json").read_bytes() == before["run-ok/grade.json"][0]


def test_chunks_and_the_graded_state(prefect_client_settings: str, tmp_path: Path) -> None:
    sweep = make_sweep(tmp_path / "all-good", {f"r{index}": "pass" for index in range(5)})
    out = tmp_path / "out"
    state = run_flow(sweep=str(sweep), target=str(out), chunk_size=2, concurrency=2)
    assert state.is_completed() and state.name == "Graded"
    assert state.result().summary.gradable == 5
    runs = task_runs_by_name(state.state_details.flow_run_id, once_each(["r0..r1", "r2..r3", "r4"]))
    assert {"read-r0..r1", "read-r2..r3", "read-r4", "publish-r4"} <= set(runs)
    assert len(runs) == 9  # three steps for each of three chunks
    assert sorted(published(out)) == [f"r{index}" for index in range(5)]
    # Tags carry the sweep (a tag concurrency limit on sweep:all-good bounds
    # its task runs across flow runs), one set for every task run: a tag
    # naming the run made each one-run chunk ask for its slots anew, a
    # SQLite write that collided and waited 2 s (docs/prefect.md, "Tags and limits").
    # The run is in the name.
    for name, run in runs.items():
        assert set(run.tags) == {"truereward", "sweep:all-good"}, (name, run.tags)


def test_a_hostile_task_spec_is_its_run_s_refusal_and_its_chunk_is_graded(
    prefect_client_settings: str, tmp_path: Path
) -> None:
    """A task spec nested 100,000 deep (TOML raised RecursionError, which
    failed the whole chunk on every rerun) or declaring 500,000 cases
    beside valid runs in the same chunk: those runs are refused with
    CASE_INVALID naming their spec, the others graded, and a rerun changes
    nothing."""
    sweep = make_sweep(tmp_path / "sweep", {"a": "pass", "d": "pass"})
    cases = json.loads((sweep / "a" / "task.json").read_text())["cases"]
    valid = 'reader = "rows"\n[cases]\n' + "".join(
        f"{json.dumps(case)} = {json.dumps(kind)}\n" for case, kind in cases.items()
    )
    for run, text in {
        "a": valid,
        "b": "cases = " + "[" * 100_000 + "]" * 100_000,
        "c": "[cases]\n" + "".join(f't{index} = "fail_to_pass"\n' for index in range(500_000)),
        "d": valid,
    }.items():
        (sweep / run).mkdir(exist_ok=True)
        (sweep / run / "task.toml").write_text(text)
    out = tmp_path / "out"
    for _ in range(2):
        state = run_flow(sweep=str(sweep), target=str(out), case_set="task.toml", chunk_size=4)
        assert state.is_completed() and state.name == "Graded with refusals", state.message
        grades = {run: item["grade"] for run, item in published(out).items()}
        assert {run: grade["reward"] for run, grade in grades.items()} == {
            "a": 1.0, "b": None, "c": None, "d": 1.0,
        }  # fmt: skip
        for run, said in (("b", "nested too deeply"), ("c", "declares 500000 cases")):
            (refusal,) = grades[run]["refusals"]
            assert refusal["code"] == "CASE_INVALID" and refusal["blame"] == "grader"
            assert "task.toml" in refusal["why"] and said in refusal["why"], refusal
    runs = task_runs_by_name(state.state_details.flow_run_id, {"read-a..d": 1})
    assert "read-a..d" in runs  # one chunk: the hostile runs and their siblings


def overlapping_pairs(runs: dict[str, Any]) -> int:
    """How many pairs of the task runs ``runs`` ran at the same time."""
    spans = sorted((run.start_time, run.end_time) for run in runs.values() if run.start_time)
    assert spans and all(end is not None for _, end in spans)
    return sum(
        1 for index, (_, end) in enumerate(spans) for start, _ in spans[index + 1 :] if start < end
    )


def test_a_tag_concurrency_limit_on_the_sweep_bounds_its_task_runs(
    prefect_client_settings: str, tmp_path: Path
) -> None:
    # Prefect's own machinery, as docs/prefect.md says to use it: a limit on
    # the tag sweep:<name> that every task run of the sweep carries.
    from prefect import get_client

    name = f"limited-{uuid.uuid4().hex[:8]}"  # a tag of its own on the shared server
    # Reads that take a while, four at a time: without the limit they overlap
    # (quick ones did, 16 pairs, when the limit was created too late to be
    # seen: Prefect caches for 5 s that a tag has none). No unlimited run in this
    # process serves as the control: one graded after a limited run was
    # seen to run its reads one at a time too. As many runs as reads at a
    # time, all in flight at once: every task run takes the one slot in turn,
    # and a hand-over often waits out the Prefect client's backoff (SQLite
    # on the server was busy), so more runs only add hand-overs.
    runs = {f"r{index}": ("slow", 0.3) for index in range(4)}

    def grade(label: str) -> Any:
        sweep = make_sweep(tmp_path / label / name, runs)
        out = str(tmp_path / f"out-{label}")
        return run_flow(sweep=str(sweep), target=out, chunk_size=1, concurrency=4)

    with get_client(sync_client=True) as client:
        client.create_concurrency_limit(tag=f"sweep:{name}", concurrency_limit=1)
        try:
            bound = grade("bound")
        finally:
            client.delete_concurrency_limit_by_tag(f"sweep:{name}")
    assert bound.is_completed(), bound.message
    steps = once_each(runs)
    recorded = task_runs_by_name(bound.state_details.flow_run_id, steps)
    assert set(recorded) == set(steps)
    assert overlapping_pairs(recorded) == 0
    assert sorted(published(tmp_path / "out-bound")) == sorted(runs)


def test_the_dask_runner_publishes_the_same_grades(
    prefect_client_settings: str, tmp_path: Path
) -> None:
    kinds: dict[str, Any] = {
        "a": "pass",
        "b": "fail",
        "c": ("heal", 1),
        "d": "never",
        "e": "missing",
    }
    sweep = make_sweep(tmp_path / "sweep", kinds)
    threads, dask = tmp_path / "threads", tmp_path / "dask"
    common = {"sweep": str(sweep), "retry_delay_seconds": 0.05, "max_attempts": 2}
    first = run_flow(target=str(threads), **common)
    second = run_flow(target=str(dask), task_runner="dask", concurrency=2, chunk_size=2, **common)
    assert first.name == second.name == "Graded with refusals"
    by_threads = {run: outcome(item["grade"]) for run, item in published(threads).items()}
    by_dask = {run: outcome(item["grade"]) for run, item in published(dask).items()}
    assert by_threads == by_dask
    assert by_dask["c"] == (True, 1.0, [], 2, [1])
    assert [item["files"] for item in published(dask).values()] == [
        item["files"] for item in published(threads).values()
    ]


def test_a_grade_that_cannot_be_published_fails_the_flow_and_only_that_run(
    prefect_client_settings: str, tmp_path: Path
) -> None:
    sweep = make_sweep(tmp_path / "sweep", {"a": "pass", "b": "pass"})
    out = tmp_path / "out"
    (out / "b").mkdir(parents=True)
    foreign = b'{"not": "a grade of ours"}\n'
    (out / "b" / "grade.json").write_bytes(foreign)
    state = run_flow(sweep=str(sweep), target=str(out))
    assert state.is_failed() and state.name == "Publish failed"
    assert (out / "b" / "grade.json").read_bytes() == foreign  # nothing already there is lost
    assert (out / "a" / "reward.txt").read_text() == "1.0\n"
    # The failed run still carries its summary, on the error it raises.
    failure = state.result(raise_on_failure=False)
    assert isinstance(failure, PublishFailed)
    assert failure.result.failed == 1 and failure.result.summary.runs == 2
    # Read back from the persisted result: the error with its message alone.
    from prefect import get_client

    with get_client(sync_client=True) as client:
        stored = client.read_flow_run(state.state_details.flow_run_id).state
    assert stored is not None
    read_back = stored.result(raise_on_failure=False)
    assert isinstance(read_back, PublishFailed) and read_back.result is None
    assert str(read_back) == str(failure) and str(failure).startswith("Publish failed: 2 runs")
    from flows.grade_run import grade_run

    with pytest.raises(PublishFailed) as raised:
        grade_run(GradeRequest(sweep=str(sweep), target=str(out)))
    assert raised.value.result.state_name == "Publish failed"


def test_a_sweep_that_does_not_exist_fails_the_flow(
    prefect_client_settings: str, tmp_path: Path
) -> None:
    state = run_flow(sweep=str(tmp_path / "nowhere"), target=str(tmp_path / "out"))
    assert state.is_failed()
    assert "nowhere" in (state.message or "")
    assert not (tmp_path / "out").exists()


def test_a_target_block_keeps_its_secrets_and_is_where_grades_go(
    prefect_client_settings: str, tmp_path: Path
) -> None:
    from truereward.prefect.block import TargetBlock

    TargetBlock.register_type_and_schema()
    name = f"t-{uuid.uuid4().hex[:12]}"
    block = TargetBlock(
        url=str(tmp_path / "grades"),
        storage_options={"endpoint_url": "http://store.invalid"},
        secret_options={"secret": "hunter2"},
    )
    block.save(name)
    loaded = TargetBlock.load(name)
    assert "hunter2" not in repr(loaded) and "hunter2" not in str(loaded.model_dump())
    assert loaded.target().options()["secret"] == "hunter2"
    assert "hunter2" not in repr(loaded.target())
    with pytest.raises(ValueError, match="secret_options"):
        TargetBlock(
            url="s3://b/p", storage_options={"client_kwargs": {"aws_secret_access_key": "x"}}
        )

    sweep = make_sweep(tmp_path / "sweep", {"a": "pass"})
    state = run_flow(sweep=str(sweep), target_block=name)
    assert state.name == "Graded"
    assert (tmp_path / "grades" / "a" / "reward.txt").read_text() == "1.0\n"
