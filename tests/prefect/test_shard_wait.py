"""grade-sweep's wait for a shard (``flows/grade_sweep.py:_finished``) on the
session's real Prefect server: the event of a final state can come before
the API reads the flow run in that state, and the shard must not be taken
for one that did not complete."""

from __future__ import annotations

import asyncio

from prefect import get_client
from prefect.events import Event
from prefect.events.clients import get_events_client
from prefect.states import Completed, Running

from flows.grade_sweep import _finished


def test_a_final_event_before_the_final_state_is_read_waits_for_the_state(
    prefect_client_settings: str,
) -> None:
    async def scenario() -> str:
        from prefect import flow

        @flow(name="shard-wait")
        def placeholder() -> None:
            """Never run: its flow run stands for a shard's."""

        async with get_client() as client:
            flow_id = await client.create_flow(placeholder)
            created = await client.create_flow_run(placeholder, state=Running())
            assert created.flow_id == flow_id
            waiting = asyncio.create_task(_finished(created.id))
            await asyncio.sleep(2.0)  # the waiter is subscribed
            # What a loaded server did: the final state's event is out,
            # the flow run still reads Running.
            async with get_events_client() as events:
                await events.emit(
                    Event(
                        event="prefect.flow-run.Completed",
                        resource={
                            "prefect.resource.id": f"prefect.flow-run.{created.id}",
                            "prefect.state-type": "COMPLETED",
                            "prefect.state-name": "Completed",
                        },
                    )
                )
            await asyncio.sleep(3.0)
            assert not waiting.done(), "took the shard's Running state for its end"
            await client.set_flow_run_state(created.id, Completed(), force=True)
            finished = await asyncio.wait_for(waiting, timeout=30)
        assert finished.state is not None
        return finished.state.type.value

    assert asyncio.run(scenario()) == "COMPLETED"
