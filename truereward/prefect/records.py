"""The one place truereward touches a private Prefect type: the result
record a finished task run's state holds in memory."""

from __future__ import annotations

from typing import Any

from prefect.client.schemas.objects import State

try:
    from prefect._internal.result_records import ResultRecord as _Record
except ImportError:  # Prefect moved it: State.result() serves, slower
    _RECORD: type[Any] | None = None
else:
    _RECORD = _Record

__all__ = ["result_of"]


def result_of(state: State[Any]) -> Any:
    """What the task run of the final ``state`` returned or raised: from the
    result record the state holds in memory when it holds one (no call into
    Prefect's async machinery, which costs the flow's one thread), else from
    ``State.result(raise_on_failure=False)``."""
    data = state.data
    if _RECORD is not None and isinstance(data, _RECORD):
        return data.result
    return state.result(raise_on_failure=False)
