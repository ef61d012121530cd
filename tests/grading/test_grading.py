"""The Prefect-free core: requests, plans, reading with refusals, retry
routing by blame, attempts recorded, reruns that change nothing, the report;
the fault-injection reader and the attempt context."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.support.markdown import HOSTILE, as_read, table_rows
from tests.support.schemas import validator
from tests.support.sweeps import (
    FAULTS,
    case_ids,
    make_run,
    make_sweep,
    published,
    rows_jsonl,
    snapshot,
)
from truereward.codes import Ungradable
from truereward.grading import (
    Chunk,
    ChunkProgress,
    GradeRequest,
    chunk_size_for,
    chunked,
    fold_reading,
    grade_request,
    plan_runs,
    publish_graded,
    read_run,
    retry_delays,
    worth_retrying,
)
from truereward.grading.chunks import MIN_AUTO_CHUNK
from truereward.readers import Evidence, read_with_evidence
from truereward.readers.attempt import attempt_scope, current_attempt
from truereward.record.refusal import refusal
from truereward.util.io import LOCAL_IO

SCHEMA = validator(GradeRequest.model_json_schema())


def schema_accepts(value: Any) -> bool:
    try:
        SCHEMA.validate(value)
    except jsonschema.ValidationError:
        return False
    return True


def no_wait(_: float) -> None:
    return None


# --- the request ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_value", "accepted"),
    [
        ({"sweep": "s"}, True),
        ({"runs": ["a/r1", "b/r2"]}, True),
        ({"sweep": "s", "runs": None}, True),
        ({"sweep": "s", "runs": ["a/r1"]}, False),
        ({}, False),
        ({"sweep": None, "runs": None}, False),
        ({"sweep": "s", "target": "t", "target_block": "b"}, False),
        ({"sweep": "s", "max_attempts": 0}, False),
        ({"sweep": "s", "concurrency": 0}, False),
        ({"sweep": "s", "scheme": "no-such/1"}, False),
        ({"sweep": "s", "task_runner": "processes"}, False),
        ({"sweep": "s", "colour": "blue"}, False),
        ({"sweep": "s", "max_attempts": "3"}, False),
    ],
)
def test_the_schema_and_the_model_agree_on_what_a_request_is(
    request_value: dict[str, Any], accepted: bool
) -> None:
    assert schema_accepts(request_value) is accepted
    if accepted:
        GradeRequest.model_validate(request_value)
    else:
        with pytest.raises(ValidationError):
            GradeRequest.model_validate(request_value)


@pytest.mark.parametrize(
    ("request_value", "message"),
    [
        ({"runs": ["a/r1", "b/r1"]}, "also the id"),
        ({"runs": ["a/.."]}, "runs[0]"),
        ({"sweep": "s", "evidence": "../up.json"}, "evidence"),
        ({"sweep": "s", "case_set": "/etc/task.json"}, "case_set"),
        ({"sweep": "s", "case_set": {"cases": [{"id": "a", "kind": "sideways"}]}}, "case_set"),
        ({"sweep": "s", "reader": "no-such-reader"}, "reader"),
        ({"sweep": "s", "storage_options": {"key": "AKIA"}}, "look like secrets"),
        (
            {"sweep": "s", "storage_options": {"client_kwargs": {"aws_secret_access_key": "x"}}},
            "client_kwargs.aws_secret_access_key",
        ),
        ({"sweep": "s", "dask_address": "tcp://x:8786"}, "dask"),
    ],
)
def test_the_model_refuses_what_the_schema_cannot_say(
    request_value: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        GradeRequest.model_validate(request_value)


REQUEST_FIELDS = st.sampled_from(
    [
        "sweep",
        "runs",
        "reader",
        "target",
        "target_block",
        "max_attempts",
        "concurrency",
        "chunk_size",
        "retry_delay_seconds",
        "task_runner",
        "case_set",
        "storage_options",
        "x",
    ]
)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 50) | st.floats(-1, 100) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(st.dictionaries(REQUEST_FIELDS, JSONISH, max_size=6))
def test_garbage_requests_are_refused_cleanly_and_never_pass_the_model_alone(
    value: dict[str, Any],
) -> None:
    try:
        GradeRequest.model_validate(value)
    except ValidationError:
        return
    # What the model accepts, the schema stored by the deployment accepts too.
    assert schema_accepts(value)


def test_the_sweep_name_is_recorded_when_it_is_a_valid_segment() -> None:
    assert GradeRequest(sweep="s3://bucket/nightly-42/").sweep_label == "nightly-42"
    assert GradeRequest(runs=["a/r1"]).sweep_label is None


# --- plans and chunks ----------------------------------------------------------------------


def test_a_sweep_plan_lists_run_directories_sorted_and_skips_the_rest(tmp_path: Path) -> None:
    sweep = make_sweep(tmp_path / "sw", {"b": "pass", "a": "pass"})
    (sweep / ".hidden").mkdir()
    (sweep / "notes.txt").write_text("not a run")
    jobs = plan_runs(GradeRequest(sweep=str(sweep)))
    assert [job.run for job in jobs] == ["a", "b"]
    assert jobs[0].target.url == f"{sweep}/a/logs/verifier"
    targeted = plan_runs(GradeRequest(sweep=str(sweep), target=str(tmp_path / "out")))
    assert targeted[1].target.url == f"{tmp_path / 'out'}/b"
    assert jobs[0].settings is jobs[1].settings  # one copy of the settings per request


def test_a_plan_holds_a_name_per_run_and_makes_each_job_when_it_is_taken() -> None:
    # A flow grading 100,000 runs held a RunJob per run (about 250 bytes)
    # from start to end; a plan keeps the runs' URLs (already in the request).
    import tracemalloc

    urls = [f"sweep/run-{index:06d}" for index in range(20_000)]
    request = GradeRequest(runs=urls)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        jobs = plan_runs(request)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 20 * len(urls), f"the plan holds {held / len(urls):.0f} bytes per run"
    assert len(jobs) == len(urls)
    assert [job.url for job in jobs] == urls  # in the given order, every time
    assert [job.run for job in jobs[:2]] == ["run-000000", "run-000001"]
    assert jobs[-1].run == "run-019999" and jobs[-1].settings is jobs[0].settings


@given(
    st.integers(0, 100_000),
    st.integers(1, 512),
    st.sampled_from([100, 300]),
    st.sampled_from([1, 8, 64, 1024]),
)
def test_chunk_sizes_are_bounded_and_a_chunk_a_run_only_up_to_the_concurrency(
    runs: int, workers: int, largest: int, io_budget: int
) -> None:
    size = chunk_size_for(runs, workers, largest, io_budget)
    chunks = -(-runs // size)
    smallest = min(largest, max(MIN_AUTO_CHUNK, io_budget))
    assert 1 <= size <= largest
    if runs <= workers:
        assert size == 1  # every run its own task runs, none waits for a worker
    if size > smallest:  # a large sweep: about four chunks a worker
        assert chunks >= min(4 * workers, -(-runs // largest))
    else:  # a smaller one: chunks of the smallest size, or every worker one chunk
        assert size == smallest or size == -(-runs // workers) or size == 1
        assert chunks <= max(workers, -(-runs // smallest))


def test_the_sample_sweep_is_graded_in_chunks_of_four() -> None:
    # 30 runs, 8 at a time: 8 chunks in one round, not 30 one-run chunks
    # whose task runs wait on each other's database locks (MIN_AUTO_CHUNK).
    assert chunk_size_for(30, 8) == 4
    assert chunk_size_for(8, 8) == 1 and chunk_size_for(9, 8) == 2
    assert chunk_size_for(1_000, 8) == 32 and chunk_size_for(500, 8) == 25


def test_an_object_store_s_chunks_are_no_smaller_than_its_io_budget() -> None:
    # A chunk's reads and writes overlap up to the budget (64 by default on
    # an object store): smaller chunks would overlap no more and pay more
    # task runs. Every worker still gets a chunk, and a large sweep four.
    assert chunk_size_for(400, 8, io_budget=64) == 50
    assert chunk_size_for(1_000, 8, io_budget=64) == 64
    assert chunk_size_for(100_000, 8, io_budget=64) == 100  # largest wins
    assert chunk_size_for(8, 8, io_budget=64) == 1
    assert chunk_size_for(1_000, 8, io_budget=LOCAL_IO) == 32  # a local disk: as before
    assert chunk_size_for(1_000, 8, io_budget=1) == 32


@given(st.integers(1, 40), st.integers(1, 12))
def test_chunks_cover_every_run_once_in_order(runs: int, size: int) -> None:
    settings = plan_runs(GradeRequest(runs=["x/r0"]))[0].settings
    from truereward.grading import RunJob

    jobs = [RunJob(run=f"r{index}", url=f"x/r{index}", settings=settings) for index in range(runs)]
    chunks = list(chunked(jobs, size))
    assert [job.run for chunk in chunks for job in chunk.jobs] == [job.run for job in jobs]
    assert all(1 <= len(chunk) <= size for chunk in chunks)
    assert chunks[0].name == ("r0" if len(chunks[0]) == 1 else f"r0..r{len(chunks[0]) - 1}")


def test_retry_delays_double() -> None:
    assert retry_delays(2.0, 4) == [2.0, 4.0, 8.0]
    assert retry_delays(2.0, 1) == []


# --- reading one run -----------------------------------------------------------------------


def first_job(tmp_path: Path, kind: Any, **request: Any) -> Any:
    sweep = tmp_path / "sw"
    make_run(sweep, "run", kind)
    return plan_runs(GradeRequest(sweep=str(sweep), target=str(tmp_path / "out"), **request))[0]


@pytest.mark.parametrize(
    ("kind", "code", "blame"),
    [
        ("missing", "EVIDENCE_MISSING", "run"),
        ("malformed", "EVIDENCE_MALFORMED", "run"),
        ("never", "EVIDENCE_UNREADABLE", "grader"),
    ],
)
def test_a_reader_refusal_is_the_whole_reason(
    tmp_path: Path, kind: str, code: str, blame: str
) -> None:
    reading = read_run(first_job(tmp_path, kind))
    assert reading.refusal is not None and reading.refusal.code == code
    assert [(item.code, item.blame.value) for item in reading.refusals()] == [(code, blame)]
    document = fold_reading(reading).document
    assert not document.gradable and [item.code for item in document.refusals] == [code]


def test_task_spec_problems_are_the_graders_and_not_retried(tmp_path: Path) -> None:
    job = first_job(tmp_path, "pass")
    (tmp_path / "sw" / "run" / "task.json").write_text('{"cases": {"a": "sideways"}}')
    reading = read_run(job)
    assert reading.refusal is not None and reading.refusal.code == "CASE_INVALID"
    assert "task.json" in reading.refusal.why
    (tmp_path / "sw" / "run" / "task.json").unlink()
    missing = read_run(job).refusal
    assert missing is not None and missing.code == "CASE_INVALID" and "no such file" in missing.why
    assert not worth_retrying([missing])


def test_no_reader_anywhere_is_refused(tmp_path: Path) -> None:
    job = first_job(tmp_path, "pass")
    (tmp_path / "sw" / "run" / "task.json").write_text(json.dumps({"cases": case_ids(2)}))
    refused = read_run(job).refusal
    assert refused is not None and refused.code == "CASE_INVALID" and "no reader" in refused.why


def test_the_request_reader_and_an_inline_case_set_win(tmp_path: Path) -> None:
    sweep = tmp_path / "sw"
    (sweep / "r").mkdir(parents=True)
    cases = case_ids(2)
    (sweep / "r" / "out.jsonl").write_text(rows_jsonl(cases))
    request = GradeRequest(sweep=str(sweep), reader="rows", evidence="out.jsonl", case_set=cases)
    reading = read_run(plan_runs(request)[0])
    assert reading.refusal is None and len(reading.rows) == 2
    assert [item.path.rsplit("/", 1)[-1] for item in reading.evidence] == ["out.jsonl"]


def test_worth_retrying_only_when_every_refusal_is_a_retryable_grader_fault() -> None:
    unreadable = refusal("EVIDENCE_UNREADABLE", "store down")
    crashed = refusal("CASE_NOT_GRADED", "reader crashed", "case-a")
    missing = refusal("EVIDENCE_MISSING", "no report")
    partial = refusal("CASES_MISSING", "subset", "case-b")
    assert worth_retrying([unreadable]) and worth_retrying([unreadable, crashed])
    assert not worth_retrying([])
    assert not worth_retrying([unreadable, missing])  # one run-blamed refusal settles it
    assert not worth_retrying([partial])  # the grader's, but not a fault that passes


# --- attempts ------------------------------------------------------------------------------


@pytest.mark.parametrize("heal_after", [0, 1, 2, 4])
def test_a_fault_that_heals_after_k_attempts(tmp_path: Path, heal_after: int) -> None:
    job = first_job(tmp_path, ("heal", heal_after))
    progress = ChunkProgress(Chunk(jobs=(job,)))
    limit = 4
    while progress.attempt(last=progress.attempts + 1 >= limit):
        pass
    reading = progress.readings()[0]
    graded = fold_reading(reading).document
    if heal_after < limit:
        assert graded.gradable and graded.run is not None and graded.run.attempt == heal_after + 1
        assert [item.attempt for item in graded.attempts] == list(range(1, heal_after + 1))
    else:
        assert not graded.gradable and graded.run is not None and graded.run.attempt == limit
        assert len(graded.attempts) == limit - 1
    assert all(
        not item.gradable
        and item.refusals[0].code == "EVIDENCE_UNREADABLE"
        and item.started is not None
        and item.finished is not None
        for item in graded.attempts
    )


def test_only_the_runs_that_need_it_are_read_again(tmp_path: Path) -> None:
    sweep = make_sweep(tmp_path / "sw", {"a": "pass", "b": ("heal", 1), "c": "missing"})
    jobs = plan_runs(GradeRequest(sweep=str(sweep)))
    progress = ChunkProgress(Chunk(jobs=tuple(jobs)))
    assert progress.attempt(last=False) is True
    assert progress.unsettled == ["b"]
    assert progress.attempt(last=False) is False
    readings = progress.readings()
    assert [reading.attempt for reading in readings] == [1, 2, 1]
    assert [len(reading.history) for reading in readings] == [0, 1, 0]


def test_grade_request_routes_by_blame_and_records_every_attempt(tmp_path: Path) -> None:
    sweep = make_sweep(
        tmp_path / "sw",
        {
            "ok": "pass",
            "heals": ("heal", 2),
            "never": "never",
            "blamed": "missing",
            "crash": ("heal", 1, "CASE_NOT_GRADED"),
            "blamed-fault": ("heal", 5, "EVIDENCE_MALFORMED"),
        },
    )
    waits: list[float] = []
    result = grade_request(
        GradeRequest(sweep=str(sweep), target=str(tmp_path / "out"), retry_delay_seconds=1.5),
        sleep=waits.append,
    )
    attempts = {line.run: line.attempts for line in result.runs}
    assert attempts == {"ok": 1, "heals": 3, "never": 3, "blamed": 1, "crash": 2, "blamed-fault": 1}
    assert sorted(waits) == [1.5, 1.5, 1.5, 3.0, 3.0]
    files = published(tmp_path / "out")
    assert files["heals"]["grade"]["gradable"] and "reward.txt" in files["heals"]["files"]
    assert not files["never"]["grade"]["gradable"] and "reward.txt" not in files["never"]["files"]
    assert files["blamed-fault"]["grade"]["refusals"][0]["blame"] == "run"
    assert result.summary.reward.mean == 1.0  # over the gradable runs only
    assert result.summary.attempts.retried == 3 and result.summary.attempts.recovered == 2


def test_each_run_is_folded_once_for_its_retry_decision_and_its_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import truereward.folding
    import truereward.grade.document

    folds: list[int] = []
    real = truereward.folding.fold_fields

    def counted(*args: Any, **kwargs: Any) -> dict[str, Any]:
        folds.append(len(args[0]))
        return real(*args, **kwargs)

    # Wherever a fold may come from: fold() and the grade document's own.
    monkeypatch.setattr(truereward.folding, "fold_fields", counted)
    monkeypatch.setattr(truereward.grade.document, "fold_fields", counted)
    runs = {"a": "pass", "b": "fail", "c": ("heal", 1), "d": "missing", "e": "never"}
    sweep = make_sweep(tmp_path / "sw", runs)
    result = grade_request(
        GradeRequest(sweep=str(sweep), target=str(tmp_path / "out"), retry_delay_seconds=0),
        sleep=no_wait,
    )
    assert {line.run: line.attempts for line in result.runs} == {
        "a": 1,
        "b": 1,
        "c": 2,
        "d": 1,
        "e": 3,
    }
    assert len(folds) == len(runs)  # one fold a run, rows or refusals
    assert sorted(folds) == [0, 0, *[len(case_ids(4))] * 3]
    files = published(tmp_path / "out")
    assert files["a"]["grade"]["reward"] == 1.0 and files["b"]["grade"]["reward"] == 0.0


def test_a_rerun_changes_nothing_and_repairs_an_interrupted_publish(tmp_path: Path) -> None:
    sweep = make_sweep(tmp_path / "sw", {"a": "pass", "b": "never", "c": "missing"})
    out = tmp_path / "out"
    request = GradeRequest(sweep=str(sweep), target=str(out), retry_delay_seconds=0)
    first = grade_request(request, sleep=no_wait)
    assert first.published == {"created": 3}
    before = snapshot(out)
    second = grade_request(request, sleep=no_wait)
    assert second.published == {"unchanged": 3} and second.already_graded == 3
    assert second.summary == first.summary
    assert snapshot(out) == before
    (out / "a" / "reward.txt").unlink()
    (out / "a" / "reward.json").unlink()
    third = grade_request(request, sleep=no_wait)
    assert third.published == {"repaired": 1, "unchanged": 2}
    assert {name: data for name, (data, _) in snapshot(out).items()} == {
        name: data for name, (data, _) in before.items()
    }


def test_a_foreign_grade_is_never_overwritten(tmp_path: Path) -> None:
    sweep = make_sweep(tmp_path / "sw", {"a": "pass", "b": "pass"})
    out = tmp_path / "out"
    (out / "a").mkdir(parents=True)
    (out / "a" / "grade.json").write_text("{}\n")
    result = grade_request(GradeRequest(sweep=str(sweep), target=str(out)), sleep=no_wait)
    assert result.failed == 1 and result.state_name == "Publish failed"
    assert result.failures[0].run == "a" and "grade" in result.failures[0].why
    assert (out / "a" / "grade.json").read_text() == "{}\n"
    # The grade was made, so it is counted by what it is; it is not published.
    assert result.summary.gradable == 2 and result.graded == 2
    assert result.published == {"conflict": 1, "created": 1}
    lines = {line.run: line for line in result.runs}
    assert lines["a"].state == "not published" and lines["b"].state == "gradable"
    assert result.headline().endswith("; 1 not published")


def test_publishing_a_graded_run_reports_what_it_did(tmp_path: Path) -> None:
    job = first_job(tmp_path, "pass")
    graded = fold_reading(read_run(job))
    assert publish_graded(graded).decision == "created"
    assert publish_graded(graded).decision == "unchanged"


# --- the report ----------------------------------------------------------------------------


def test_the_report_keeps_refused_runs_in_a_bounded_table(tmp_path: Path) -> None:
    from truereward.grading import report as report_module

    sweep = make_sweep(tmp_path / "sw", {f"ok{i}": "pass" for i in range(5)} | {"bad": "missing"})
    limit = report_module.TABLE_LIMIT
    try:
        report_module.TABLE_LIMIT = 3
        result = grade_request(GradeRequest(sweep=str(sweep), target=str(tmp_path / "o")))
    finally:
        report_module.TABLE_LIMIT = limit
    assert len(result.runs) == 3 and "bad" in [line.run for line in result.runs]
    assert result.summary.runs == 6
    from truereward.grading.markdown import render_result, render_runs

    assert "3 more gradable runs" in render_runs(result)
    text = render_result(result)
    assert "Graded with refusals" in text and "EVIDENCE_MISSING" in text
    assert next(line for line in result.runs if line.run == "bad").cells()["reward"] == "—"


def test_the_report_shows_run_ids_and_entries_as_they_are(tmp_path: Path) -> None:
    # Two names are run ids, graded; two are not (a backslash, line breaks),
    # listed as entries not graded, with the reason quoting the name.
    kinds = dict(zip(HOSTILE, ["pass", "missing", "fail", "pass"], strict=True))
    sweep = make_sweep(tmp_path / "sw", kinds)
    result = grade_request(GradeRequest(sweep=str(sweep), target=str(tmp_path / "o")))
    from truereward.grading.markdown import render_result, render_runs

    runs = {row[0]: row for row in table_rows(render_runs(result))}
    assert set(runs) == {"`x|y`", "<!--"}
    assert all(len(row) == len(runs["<!--"]) for row in runs.values())
    entries = table_rows(render_result(result).split("## Sweep summary")[0])
    assert [row[0] for row in entries] == [as_read("a\\|b"), as_read("two\rlines\nhere")]
    assert all(len(row) == 2 and row[1].startswith("not a run id: ") for row in entries)


def test_the_headline_writes_the_mean_as_the_summary_table_does(tmp_path: Path) -> None:
    sweep = make_sweep(tmp_path / "sw", {"a": "fail", "b": "fail", "c": "missing"})
    result = grade_request(GradeRequest(sweep=str(sweep), target=str(tmp_path / "o")))
    from truereward.grading.markdown import render_result

    text = render_result(result)
    (mean,) = [row[1] for row in table_rows(text.split("### Reward")[1].split("###")[0])]
    assert mean == "0.0" and f"(mean reward {mean})" in result.headline()


def test_a_sweep_with_no_gradable_run_has_no_mean_reward(tmp_path: Path) -> None:
    sweep = make_sweep(tmp_path / "sw", {"a": "missing", "b": "malformed"})
    result = grade_request(GradeRequest(sweep=str(sweep), target=str(tmp_path / "o")))
    assert result.summary.reward.mean is None and result.summary.reward.count == 0
    assert "no gradable run" in result.headline()


# --- the fault reader and the attempt context -----------------------------------------------


def test_the_attempt_context_defaults_to_one_and_nests() -> None:
    assert current_attempt() == 1
    with attempt_scope(3):
        assert current_attempt() == 3
        with attempt_scope(4):
            assert current_attempt() == 4
        assert current_attempt() == 3
    assert current_attempt() == 1
    with pytest.raises(ValueError, match="from 1"), attempt_scope(0):
        pass


def test_the_fault_reader_delegates_once_healed_and_records_both_files(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r", ("heal", 1))
    spec = json.loads((run / "task.json").read_text())
    with pytest.raises(Ungradable) as refused:
        read_with_evidence(FAULTS, str(run / "faults.json"), spec["cases"])
    assert refused.value.code == "EVIDENCE_UNREADABLE" and "attempt 1" in refused.value.why
    with attempt_scope(2):
        reading = read_with_evidence(FAULTS, str(run / "faults.json"), spec["cases"])
    assert len(reading.rows) == 4
    assert [item.path.rsplit("/", 1)[-1] for item in reading.evidence] == [
        "faults.json",
        "rows.jsonl",
    ]


def test_the_fault_reader_finds_the_evidence_its_plan_names_beside_it(memory_root: str) -> None:
    # Beside the plan on any storage, in a subdirectory too (urls.parent and
    # urls.join, not a hand-made path).
    import fsspec

    declared = case_ids(4)
    fs = fsspec.filesystem("memory")
    plan = {"failing_attempts": 0, "evidence": "sub/rows.jsonl"}
    fs.pipe(f"{memory_root}/run/faults.json", json.dumps(plan).encode())
    fs.pipe(f"{memory_root}/run/sub/rows.jsonl", rows_jsonl(declared).encode())
    reading = read_with_evidence(FAULTS, f"{memory_root}/run/faults.json", declared)
    assert len(reading.rows) == 4
    assert [item.path for item in reading.evidence] == [
        f"{memory_root}/run/faults.json",
        f"{memory_root}/run/sub/rows.jsonl",
    ]


@given(st.one_of(st.binary(max_size=60), JSONISH.map(lambda value: json.dumps(value).encode())))
def test_a_garbage_fault_plan_is_malformed_evidence_never_a_crash(data: bytes) -> None:
    import tempfile

    from truereward.readers.faults import FaultPlan

    try:
        plan: FaultPlan | None = FaultPlan.model_validate_json(data)
    except ValueError:
        plan = None
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "faults.json"
        path.write_bytes(data)
        (Path(directory) / "rows.jsonl").write_text(rows_jsonl({"a": "fail_to_pass"}))
        evidence = Evidence(url=str(path))
        if plan is not None and not plan.fails(1) and plan.reader == "rows":
            rows = read_with_evidence(FAULTS, evidence, {"a": "fail_to_pass"}).rows
            assert [row.id for row in rows] == ["a"]
            return
        with pytest.raises(Ungradable) as refused:
            read_with_evidence(FAULTS, evidence, {"a": "fail_to_pass"})
        expected = {"EVIDENCE_MALFORMED"} if plan is None else {plan.code, "CASE_NOT_GRADED"}
        assert refused.value.code in expected
