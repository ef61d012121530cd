"""The lifeline of a grade-run flow run (:mod:`truereward.prefect.lifeline`)
and its last words (:mod:`truereward.prefect.lost`): the grace period's
setting, the exit bound, the message; in this process against the test
server, a halted pipeline accounts for every run exactly once, and a flow
run's lifeline stops with its final state. The server killed under a flow
run is ``test_prefect_serverloss.py``."""

from __future__ import annotations

import math
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.sweeps import make_sweep, run_flow
from truereward.prefect.lifeline import (
    EXIT_API_LOST,
    GRACE_ENV,
    MAX_GRACE_SECONDS,
    MIN_GRACE_SECONDS,
    _shown,
    exit_bound,
    grace_seconds,
)
from truereward.prefect.lost import NAMES_SHOWN, LostReport, render_lost
from truereward.verify import verify_published

# --- the grace period and the bound ----------------------------------------------------------


def test_the_grace_period_defaults_to_twenty_seconds_and_zero_turns_it_off() -> None:
    assert grace_seconds({}) == 20.0
    assert grace_seconds({GRACE_ENV: "  "}) == 20.0
    assert grace_seconds({GRACE_ENV: "0"}) is None
    assert grace_seconds({GRACE_ENV: "7.5"}) == 7.5


@given(st.floats(MIN_GRACE_SECONDS, MAX_GRACE_SECONDS))
def test_any_grace_period_in_bounds_is_taken_as_it_is(value: float) -> None:
    assert grace_seconds({GRACE_ENV: repr(value)}) == value


@given(
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True).filter(
            lambda value: value != 0 and not MIN_GRACE_SECONDS <= value <= MAX_GRACE_SECONDS
        ),
        st.text().filter(lambda text: text.strip() and not _number(text)),
    )
)
def test_anything_else_is_refused_naming_the_variable(value: object) -> None:
    with pytest.raises(ValueError, match=GRACE_ENV):
        grace_seconds({GRACE_ENV: str(value)})


def _number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def test_the_process_ends_well_under_a_minute_after_the_last_answer() -> None:
    assert exit_bound(20.0) == 47.0
    assert exit_bound(20.0) < 60 and exit_bound(5.0) < exit_bound(20.0)


def test_an_api_url_is_shown_without_its_credentials() -> None:
    assert _shown("https://user:secret@prefect.example:4200/api") == (
        "https://prefect.example:4200/api"
    )
    assert _shown("http://127.0.0.1:4200/api") == "http://127.0.0.1:4200/api"


# --- the message ---------------------------------------------------------------------------------

WHY = "the Prefect API at http://127.0.0.1:1/api was lost: no answer for 21 s"
RESUME = ["prefect deployment run 'grade-run/local' -p request='{}' --watch", "python x.py"]


def test_the_message_says_what_was_published_what_was_not_and_how_to_resume() -> None:
    names = [f"run-{index:03d}" for index in range(40, 130)]
    text = render_lost(
        LostReport(
            why=WHY,
            stage="grading",
            exit_status=EXIT_API_LOST,
            runs=130,
            published={"created": 35, "unchanged": 5},
            not_graded=names[:NAMES_SHOWN],
            not_graded_count=90,
            resume=RESUME,
        )
    )
    lines = text.splitlines()
    assert all(line.startswith(("grade-run: ", "    ", "  or: ")) for line in lines)
    assert lines[0] == f"grade-run: {WHY}; grading stops."
    assert "published 40 of 130 runs (created 35, unchanged 5); not graded: 90 (run-040" in text
    assert f"{names[NAMES_SHOWN - 1]}, and 70 more)." in text
    assert names[NAMES_SHOWN] not in text
    assert "no publish was cut" in text
    assert f"    {RESUME[0]}" in lines and f"  or: {RESUME[1]}" in lines
    assert lines[-1] == "grade-run: exit status 75: the Prefect API was lost."


def test_a_cut_publish_and_unpublished_grades_are_named() -> None:
    text = render_lost(
        LostReport(
            why=WHY,
            stage="grading",
            exit_status=75,
            runs=3,
            published={"created": 1},
            failed=1,
            failures=["c"],
            not_graded=["b"],
            not_graded_count=1,
            cut=["b"],
        )
    )
    assert "1 grades were made and not published (a conflict or a store failure): c." in text
    assert "the publish of b was still writing" in text and "no publish was cut" not in text


@pytest.mark.parametrize(
    ("stage", "said"),
    [
        ("planning", "nothing was graded: the API was lost before grading began."),
        ("graded", "published 3 of 3 runs (created 3): every run went through"),
    ],
)
def test_the_stage_says_how_far_grading_went(stage: Any, said: str) -> None:
    text = render_lost(
        LostReport(
            why=WHY,
            stage=stage,
            exit_status=75,
            runs=3 if stage == "graded" else None,
            published={"created": 3} if stage == "graded" else {},
        )
    )
    assert said in text


def test_unknown_names_are_not_invented() -> None:
    text = render_lost(
        LostReport(why=WHY, stage="grading", exit_status=75, runs=9, published={"created": 2})
    )
    assert "published 2 of 9 runs (created 2); the other runs were not graded." in text


# --- in this process, against the test server ------------------------------------------------


def lifeline_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "truereward-lifeline"]


@pytest.mark.slow
def test_a_flow_runs_lifeline_stops_with_its_final_state(
    prefect_client_settings: str, tmp_path: Path
) -> None:
    from truereward.prefect import lifeline

    sweep = make_sweep(tmp_path / "sweep", {"r1": "pass", "r2": "fail"})
    state = run_flow(sweep=str(sweep), target=str(tmp_path / "out"))
    assert state.is_completed()
    assert lifeline._lifelines == {}  # the registry the hook empties
    deadline = time.monotonic() + 10
    while lifeline_threads() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert lifeline_threads() == []


@pytest.mark.slow
def test_a_bad_grace_period_is_why_the_flow_run_does_not_start(
    prefect_client_settings: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(GRACE_ENV, "soon")
    sweep = make_sweep(tmp_path / "sweep", {"r1": "pass"})
    state = run_flow(sweep=str(sweep), target=str(tmp_path / "out"))
    assert state.is_failed() and state.name.startswith(f"Not started: {GRACE_ENV}='soon'")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_halted_pipeline_accounts_for_every_run_once(
    prefect_client_settings: str, tmp_path: Path
) -> None:
    """The flow's pipeline halted mid-sweep (as a lost API halts it, here by
    hand under a lifeline that watches a healthy server): every run is
    either published, whole, or named unfinished or never started, never
    both, and nothing is published after the halt has answered."""
    from prefect import flow
    from prefect.context import FlowRunContext
    from prefect.task_runners import ThreadPoolTaskRunner

    from truereward.grading import GradeRequest, GradeRunReport, chunked, plan_runs
    from truereward.prefect import fold, publish, read
    from truereward.prefect.lifeline import Lifeline, stop_lifeline
    from truereward.prefect.pipeline import grade_chunks

    runs = {f"r{index:02d}": ("slow", 0.1) for index in range(30)}
    sweep = make_sweep(tmp_path / "sweep", runs, cases=2)
    out = tmp_path / "out"

    @flow(persist_result=False)
    def halted_midway() -> tuple[Any, Any, int]:
        context = FlowRunContext.get()
        assert context is not None and context.flow_run is not None
        watch = Lifeline(context.flow_run.id, MAX_GRACE_SECONDS).start()

        def stop_after_six() -> None:
            while len(list(out.glob("*/reward.txt"))) < 6:
                time.sleep(0.02)
            watch.halt.stop("stopped by the test")

        stopper = threading.Thread(target=stop_after_six, daemon=True)
        stopper.start()
        jobs = plan_runs(GradeRequest(sweep=str(sweep), target=str(out)))
        report = GradeRunReport()
        try:
            with ThreadPoolTaskRunner(max_workers=2) as runner:
                halted = grade_chunks(
                    chunked(jobs, 1),
                    runner,
                    concurrency=2,
                    steps=(read, fold, publish),
                    report=report,
                    halt=watch.halt,
                    drain_seconds=10,
                )
        finally:
            stop_lifeline(context.flow_run.id)
        return halted, report.result(), len(jobs)

    halted, result, planned = halted_midway()
    assert halted is not None and halted.why == "stopped by the test" and halted.cut == []
    time.sleep(1)  # anything still running would publish now
    on_disk = sorted(path.parent.name for path in out.glob("*/grade.json"))
    assert sum(result.published.values()) == result.summary.runs == len(on_disk) >= 6
    assert result.failed == 0 and result.published == {"created": len(on_disk)}
    never = sorted(runs)[halted.taken :]
    left = sorted(halted.unfinished) + never
    assert sorted(on_disk + left) == sorted(runs)  # each run counted once
    assert not set(on_disk) & set(left)
    for run in on_disk:
        assert verify_published(out / run)[1] == [], run
    assert planned == len(runs) and halted.taken < planned


def test_a_task_run_whose_engine_raised_is_a_failed_step_not_a_failed_flow() -> None:
    """A task run that could not start (its engine raised taking its tag's
    concurrency slot from an API that did not answer) has no final state:
    the pipeline counts its chunk as not graded, without asking the API."""
    import concurrent.futures
    import uuid

    from prefect.futures import PrefectConcurrentFuture

    from truereward.prefect.pipeline import _outcome

    raised: concurrent.futures.Future[Any] = concurrent.futures.Future()
    error = RuntimeError("Unable to acquire concurrency slots on ['tag:truereward']")
    raised.set_exception(error)
    future = PrefectConcurrentFuture(task_run_id=uuid.uuid4(), wrapped_future=raised)
    assert _outcome(future, value=True) == (False, error)


_TWO_LIFELINES = """
import sys, time, uuid
from truereward.prefect.lifeline import Lifeline, stop_lifeline

first = Lifeline(uuid.uuid4(), grace=5).start()
first.farewell = lambda why: "the first lifeline ended the process: " + why
stop_lifeline(first.flow_run_id)  # its flow run ended: it must never end the process
second = Lifeline(uuid.uuid4(), grace=10).start()
second.farewell = lambda why: "the second lifeline ended the process: " + why
time.sleep(3)  # a health check answered
print("watching", flush=True)
time.sleep(300)
"""


@pytest.mark.slow
def test_a_lifeline_ends_the_process_when_its_api_is_lost_and_never_once_stopped(
    tmp_path: Path,
) -> None:
    """Two lifelines on one server in a process: the first stopped (its flow
    run ended), the second left waiting, as a flow stuck on the API outside
    its pipeline would. Once the server is killed, the second ends the
    process with its farewell and status 75, within its bound; the first,
    whose grace is shorter, says nothing."""
    import os
    import signal
    import subprocess
    import sys

    from tests.support.server import offline_env, start_server, stop_server

    pid, api, _ = start_server(tmp_path / "server")
    try:
        env = offline_env(PREFECT_API_URL=api, PREFECT_HOME=str(tmp_path / "client"))
        process = subprocess.Popen(
            [sys.executable, "-c", _TWO_LIFELINES],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            assert process.stdout.readline() == "watching\n"
            os.killpg(pid, signal.SIGKILL)
            gone = time.monotonic()
            _, errors = process.communicate(timeout=exit_bound(10) + 30)
            took = time.monotonic() - gone
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == EXIT_API_LOST, errors
        assert took <= exit_bound(10), (took, errors)
        assert took >= 10, took  # not before the second's grace
        said = f"the second lifeline ended the process: the Prefect API at {api} was lost"
        assert said in errors and "the first lifeline" not in errors, errors
    finally:
        stop_server(pid)


def test_a_parent_says_it_stops_waiting_for_its_shards() -> None:
    text = render_lost(
        LostReport(
            why=WHY,
            stage="sharding",
            exit_status=75,
            flow="grade-sweep",
            shards=4,
            resume=["prefect deployment run 'grade-sweep/local' -p request='{}' --watch"],
        )
    )
    lines = text.splitlines()
    assert all(line.startswith(("grade-sweep: ", "    ")) for line in lines), text
    assert "grade-sweep: the parent stops waiting for its 4 shards" in text
    assert re.search(r"published \d", text) is None and "no publish was cut" not in text
    assert lines[-2] == "    prefect deployment run 'grade-sweep/local' -p request='{}' --watch"
