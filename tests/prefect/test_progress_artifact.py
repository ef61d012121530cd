"""A grade-run flow run's progress artifact, on a real Prefect server: it
moves while the sweep grades (runs published of the runs planned) and ends
at every run."""

from __future__ import annotations

import contextvars
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.sweeps import make_sweep, run_flow

RUNS = 2000


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_client_settings")
def test_the_progress_artifact_moves_while_a_large_sweep_grades(tmp_path: Path) -> None:
    from prefect import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from truereward.grading import GradeRequest
    from truereward.prefect.artifacts import artifact_key

    sweep = make_sweep(tmp_path / "sweep", {f"r{i:04d}": "pass" for i in range(RUNS)}, cases=1)
    request = {"sweep": str(sweep), "target": str(tmp_path / "out")}
    key = artifact_key(GradeRequest.model_validate(request), None, "progress")
    ended: list[Any] = []
    flow = threading.Thread(
        target=contextvars.copy_context().run,  # this thread's API settings
        args=(lambda: ended.append(run_flow(**request)),),
        daemon=True,
    )
    flow.start()
    seen: list[tuple[float, str]] = []
    with get_client(sync_client=True) as client:
        while True:
            running = flow.is_alive()
            found = client.read_artifacts(
                artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key]))
            )
            if found:
                value = (float(found[0].data), found[0].description or "")  # type: ignore[arg-type]
                if not seen or seen[-1] != value:
                    seen.append(value)
            if not running:
                break
            time.sleep(0.25)
    flow.join()
    assert ended and ended[0].is_completed(), ended
    values = [value for value, _ in seen]
    assert values == sorted(values), seen  # it only grows
    assert values[-1] == 100.0 and seen[-1][1] == f"{RUNS} of {RUNS} runs published", seen
    moving = [value for value in values if 0 < value < 100]
    # Read back mid-sweep at two values or more, growing: it moved while the
    # sweep graded. Not three: at one update a second (PROGRESS_SECONDS), a
    # quiet machine grades the sweep within a few updates.
    assert len(moving) >= 2, seen
    for value, said in seen:
        done = int(said.split(" ", 1)[0])
        assert value == pytest.approx(100 * done / RUNS), (value, said)
