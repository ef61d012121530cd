"""Stopping grading without cutting a publish (:mod:`truereward.grading.halt`):
a stopped halt lets no run's publish begin, a publish in progress finishes
its whole file set, what each run's publish came to is counted, and a
chunk's outcomes are kept until the pipeline has them."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.sweeps import make_sweep
from truereward.grading import GradeRequest, fold_reading, plan_runs, read_run
from truereward.grading.halt import Halt
from truereward.grading.progress import PublishProgress
from truereward.grading.steps import GradedRun, PublishedRun
from truereward.verify import verify_published

FILES = ["ctrf.json", "grade.json", "reward.json", "reward.txt"]


def graded_runs(root: Path, count: int) -> tuple[list[GradedRun], Path]:
    sweep = make_sweep(root / "sweep", {f"r{index}": "pass" for index in range(count)})
    out = root / "out"
    jobs = plan_runs(GradeRequest(sweep=str(sweep), target=str(out)))
    return [fold_reading(read_run(job)) for job in jobs], out


class StopsAfter(Halt):
    """A halt that stops itself when the ``after``-th run's publish ends, as
    a lost API would between two runs of a chunk."""

    def __init__(self, after: int) -> None:
        super().__init__()
        self.after = after
        self.seen = 0

    def ended(self, chunk: str, published: PublishedRun) -> None:
        super().ended(chunk, published)
        self.seen += 1
        if self.seen == self.after:
            self.stop("lost")


def whole_or_absent(out: Path, runs: list[str]) -> list[str]:
    """The runs published (each checked whole: every file there, and the
    set verified), in order; a run with no directory is absent."""
    present = []
    for run in runs:
        directory = out / run
        if not directory.exists():
            continue
        assert sorted(path.name for path in directory.iterdir()) == FILES, run
        assert verify_published(directory)[1] == [], run
        present.append(run)
    return present


@settings(max_examples=25)
@given(count=st.integers(1, 5), after=st.integers(0, 6))
def test_a_stop_between_runs_publishes_exactly_the_runs_before_it(
    tmp_path_factory: pytest.TempPathFactory, count: int, after: int
) -> None:
    graded, out = graded_runs(tmp_path_factory.mktemp("halt"), count)
    runs = [item.job.run for item in graded]
    halt = StopsAfter(after) if after else Halt()
    if not after:
        halt.stop("lost before the chunk")
    progress = PublishProgress(graded, halt, "chunk")
    assert progress.attempt(last=False) == []
    published = min(after, count)
    assert whole_or_absent(out, runs) == runs[:published]
    assert [item.record.run for item in progress.results()] == runs[:published]
    stopped = halt.why is not None
    assert progress.halted == (runs[published:] if stopped else [])
    assert halt.published() == ({"created": published} if published else {})
    assert sorted(halt.outcomes("chunk")) == runs[:published]
    halt.collected("chunk")
    assert halt.outcomes("chunk") == {}


def test_without_a_halt_every_run_is_published_and_none_is_halted(tmp_path: Path) -> None:
    graded, out = graded_runs(tmp_path, 3)
    progress = PublishProgress(graded)
    assert progress.attempt(last=True) == []
    assert progress.halted == []
    assert [item.decision for item in progress.results()] == ["created"] * 3
    assert whole_or_absent(out, [item.job.run for item in graded]) == ["r0", "r1", "r2"]


def test_a_publish_in_progress_holds_the_stop_until_it_ends() -> None:
    halt = Halt()
    entered, release, finished = threading.Event(), threading.Event(), threading.Event()

    def publisher() -> None:
        with halt.publishing("r1") as allowed:
            assert allowed
            entered.set()
            release.wait(10)
        finished.set()

    thread = threading.Thread(target=publisher)
    thread.start()
    assert entered.wait(10)
    assert halt.stop("the API was lost")
    assert not halt.stop("another reason")  # the first reason stands
    assert halt.why == "the API was lost"
    started = time.monotonic()
    assert halt.wait_idle(0.2) == ["r1"]  # still publishing when the bound passed
    assert time.monotonic() - started >= 0.2
    with halt.publishing("r2") as allowed:  # nothing begins once stopped
        assert not allowed
    release.set()
    assert halt.wait_idle(10) == []
    assert finished.wait(10)
    thread.join(10)


def test_an_idle_halt_waits_for_nothing() -> None:
    halt = Halt()
    started = time.monotonic()
    assert halt.wait_idle(5) == []
    assert time.monotonic() - started < 1
    assert halt.why is None and halt.published() == {}


def test_a_failed_publish_is_an_outcome_and_not_counted_as_published(tmp_path: Path) -> None:
    graded, out = graded_runs(tmp_path, 2)
    out.mkdir()
    (out / "r0").write_text("a file where the run's directory goes")
    halt = Halt()
    progress = PublishProgress(graded, halt, "c")
    assert progress.attempt(last=True) == []
    outcomes = halt.outcomes("c")
    assert outcomes["r0"].failed and outcomes["r1"].decision == "created"
    assert halt.published() == {"created": 1}
