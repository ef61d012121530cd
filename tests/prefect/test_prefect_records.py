"""truereward.prefect.records: the one adapter over Prefect's private result
record. These tests fail when Prefect moves, renames or reshapes it."""

from __future__ import annotations

from typing import Any

from prefect import flow, task

from truereward.prefect import records


@task
def _answer(value: int) -> dict[str, int]:
    return {"value": value}


@task
def _broken() -> None:
    raise ValueError("the task's own error")


@flow
def _run() -> tuple[Any, Any, Any, Any]:
    done = _answer.submit(41)
    failed = _broken.submit()
    done.wait()
    failed.wait()
    return done.state.data, records.result_of(done.state), failed.state, failed.state.data


def test_a_finished_task_run_holds_the_record_the_adapter_reads(
    prefect_client_settings: str,
) -> None:
    # The private type is where the adapter looks for it ...
    assert records._RECORD is not None
    data, value, failed_state, failed_data = _run()
    # ... a task run's final state holds one in memory ...
    assert isinstance(data, records._RECORD)
    # ... and the adapter reads the value from it, not from the API.
    assert value == {"value": 41}
    assert data.result is not None and data.result == value
    # A failed task run's error comes back the same way, not raised.
    assert isinstance(failed_data, records._RECORD)
    error = records.result_of(failed_state)
    assert isinstance(error, ValueError) and str(error) == "the task's own error"
