"""The Prefect tasks' bodies without Prefect, the retry condition, and
imports that stay light."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.sweeps import make_sweep
from truereward.grading import Chunk, GradeRequest, plan_runs


def test_the_task_functions_work_without_prefect(tmp_path: Path) -> None:
    from truereward.prefect.tasks import fold, publish, read

    sweep = make_sweep(tmp_path / "sw", {"a": "pass", "b": ("heal", 1), "c": "missing"})
    jobs = plan_runs(GradeRequest(sweep=str(sweep), target=str(tmp_path / "out")))
    chunk = Chunk(jobs=tuple(jobs))
    readings = read.fn(chunk)  # one attempt: no retries outside a task run
    assert readings.name == "a..c"
    assert [reading.attempt for reading in readings.readings] == [1, 1, 1]
    grades = fold.fn(readings)
    done = publish.fn(grades)
    assert [item.decision for item in done.published] == ["created"] * 3
    states = {item.record.run: item.record.state.value for item in done.published}
    assert states == {"a": "gradable", "b": "ungradable", "c": "ungradable"}
    assert (tmp_path / "out" / "a" / "reward.txt").read_text() == "1.0\n"


def test_a_payload_is_opaque_to_prefect_and_unpickles_its_rows_only_when_read(
    tmp_path: Path,
) -> None:
    from prefect.utilities.collections import visit_collection

    from truereward.prefect.tasks import read

    sweep = make_sweep(tmp_path / "sw", {"a": "pass", "b": "pass"})
    readings = read.fn(Chunk(jobs=tuple(plan_runs(GradeRequest(sweep=str(sweep))))))
    seen: list[Any] = []
    visit_collection({"readings": readings}, visit_fn=seen.append, return_data=False)
    # Prefect looks at the parameters and the payload, never at its rows.
    assert [type(item).__name__ for item in seen] == ["dict", "str", "ChunkReadings"]

    moved = pickle.loads(pickle.dumps(readings))
    assert object.__getattribute__(moved, "_packed")  # nothing unpacked yet
    assert moved.name == "a..b" and moved == readings
    assert object.__getattribute__(moved, "_packed") is None
    assert [reading.job.run for reading in moved.readings] == ["a", "b"]
    with pytest.raises(AttributeError, match="immutable"):
        moved.name = "c"  # type: ignore[misc]


class FakeState:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    def result(self, raise_on_failure: bool = True) -> Any:
        return self.error


def test_only_grader_faults_and_transient_publish_failures_are_retried() -> None:
    from truereward.prefect.retry import GraderFault, PublishRetry, retry_transient

    assert retry_transient(None, None, FakeState(GraderFault(["r1"])))
    assert retry_transient(None, None, FakeState(PublishRetry([("r1", "timeout")])))
    assert not retry_transient(None, None, FakeState(ValueError("a bug")))
    assert not retry_transient(None, None, FakeState(OSError("disk")))
    # Both travel between processes (Dask workers) as themselves.
    fault = pickle.loads(pickle.dumps(GraderFault([f"r{index}" for index in range(7)])))
    assert fault.runs[-1] == "r6" and "2 more" in str(fault)
    assert pickle.loads(pickle.dumps(PublishRetry([("r1", "x")]))).failures == [("r1", "x")]


def test_a_refusal_logged_by_a_task_is_shown_never_acted_on() -> None:
    # The worker prints its flow runs' logs on its terminal.
    from truereward.prefect.tasks import _reason
    from truereward.record.refusal import refusal

    told = _reason(
        [refusal("GRADER_TIMEOUT", "\x1b[2J\u202eslow"), refusal("EVIDENCE_UNREADABLE", "x")]
    )
    assert told == "GRADER_TIMEOUT (grader): \\u001b[2J\\u202eslow; EVIDENCE_UNREADABLE (grader): x"


def test_grading_and_truereward_do_not_import_prefect() -> None:
    script = (
        "import sys, truereward, truereward.grading, truereward.prefect\n"
        "from truereward.grading import GradeRequest, grade_request\n"
        "GradeRequest(sweep='s')\n"
        "print('prefect' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_transient_publish_errors_are_told_apart() -> None:
    from truereward.grading.steps import is_transient
    from truereward.publishing import PublishConflict, PublishError

    def caused(error: BaseException) -> PublishError:
        wrapped = PublishError("target: failed")
        wrapped.__cause__ = error
        return wrapped

    assert is_transient(caused(TimeoutError("slow store")))
    assert is_transient(caused(OSError(5, "I/O error")))
    assert not is_transient(caused(PermissionError(13, "denied")))
    assert not is_transient(PublishError("not a directory"))
    assert not is_transient(
        PublishConflict("t", existing="a" * 64, attempted="b" * 64, replaces=None)
    )


def test_the_flow_command_refuses_bad_input_with_exit_2(tmp_path: Path, capsys: Any) -> None:
    from flows.grade_run import main

    assert main([str(tmp_path / "nowhere")]) == 2
    assert "nowhere: no such directory" in capsys.readouterr().err
    make_sweep(tmp_path / "sw", {"a": "pass"})
    assert main([str(tmp_path / "sw"), "--max-attempts", "0"]) == 2
    assert "max_attempts: Input should be greater than or equal to 1" in capsys.readouterr().err
    assert not (tmp_path / "sw" / "a" / "logs").exists()


def test_task_runs_in_other_processes_get_larger_chunks_by_default() -> None:
    from prefect.task_runners import ThreadPoolTaskRunner

    from truereward.grading.chunks import MAX_AUTO_CHUNK, MAX_REMOTE_CHUNK, chunk_size_for
    from truereward.prefect.runner import largest_chunk, runner_name

    assert runner_name(ThreadPoolTaskRunner(max_workers=2)) == "threads"
    assert largest_chunk("threads") == MAX_AUTO_CHUNK == 100
    assert largest_chunk("dask") == largest_chunk("RayTaskRunner") == MAX_REMOTE_CHUNK == 300
    # 10,000 runs, 8 at a time: chunks of 100 on threads, 300 on Dask.
    assert chunk_size_for(10_000, 8, largest_chunk("threads")) == 100
    assert chunk_size_for(10_000, 8, largest_chunk("dask")) == 300


def test_a_released_payload_holds_nothing_and_says_so(tmp_path: Path) -> None:
    import gc
    import weakref

    from truereward.prefect.tasks import read

    sweep = make_sweep(tmp_path / "sw", {"a": "pass"})
    readings = read.fn(Chunk(jobs=tuple(plan_runs(GradeRequest(sweep=str(sweep))))))
    rows = readings.readings[0].rows
    alive = weakref.ref(readings.readings[0])
    cycle: list[Any] = [readings]
    cycle.append(cycle)  # held in a reference cycle, as Prefect's engine holds a result
    del rows
    gc.disable()
    try:
        readings.release()
        assert alive() is None  # gone at once, without a garbage collection
    finally:
        gc.enable()
    with pytest.raises(AttributeError, match="released"):
        _ = readings.readings
    readings.release()  # twice is harmless
