"""A deployed grade-run's outcome, as a caller and an automation see it, on a
real ``prefect server start`` of its own with a real process worker:

- the server's own registration of our block type (the ``prefect.collections``
  entry point);
- ``prefect.deployments.run_deployment(...)`` in a fresh process, then
  ``flow_run.state.result()``: the persisted JSON outcome (the headline and
  its counts), read back there and in a process with another Prefect home;
- the events the flow run emits (one for the sweep with its counts, one per
  run still refused for the grader's reasons, at most ``REFUSED_EVENTS``),
  read from the server's events API;
- the automation of ``infra/automations/notify-grader-refused-sweeps.yaml``,
  created with Prefect's CLI, firing on the sweep's event: its notification
  (a custom webhook block) reaches a listener on loopback.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.conftest import ROOT
from tests.support.deployment import deploy, prefect, worker
from tests.support.server import offline_env, start_server, stop_server
from tests.support.sweeps import make_sweep

AUTOMATION = ROOT / "infra" / "automations" / "notify-grader-refused-sweeps.yaml"

CALLER = """
import json, sys
from prefect.deployments import run_deployment

flow_run = run_deployment(
    "grade-run/local", parameters={"request": json.loads(sys.argv[1])}, timeout=300
)
print(json.dumps({"id": str(flow_run.id), "state": flow_run.state.name,
                  "result": flow_run.state.result()}))
"""

READER = """
import json, sys
from prefect import get_client

with get_client(sync_client=True) as client:
    state = client.read_flow_run(sys.argv[1]).state
print(json.dumps(state.result()))
"""


@contextlib.contextmanager
def listener() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """An HTTP server on loopback that keeps the JSON body of every POST."""
    received: list[dict[str, Any]] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            received.append(json.loads(body))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    finally:
        server.shutdown()
        server.server_close()


def python(env: dict[str, str], script: str, *args: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=400, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def events(api: str, name: str) -> tuple[int, list[dict[str, Any]]]:
    """How many events named ``name`` the server holds, and the first page."""
    response = httpx.post(
        f"{api}/events/filter",
        json={"filter": {"event": {"name": [name]}, "order": "ASC"}, "limit": 50},
        timeout=30,
    )
    response.raise_for_status()
    found = response.json()
    return found["total"], found["events"]


def wait_for(what: str, check: Callable[[], bool], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(1)


@pytest.mark.slow
def test_a_deployed_grade_run_returns_its_outcome_and_its_events_fire_an_automation(
    tmp_path: Path,
) -> None:
    from prefect.blocks.notifications import CustomWebhookNotificationBlock
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from truereward.grading import GradeRunOutcome
    from truereward.prefect.events import REFUSED_EVENTS, RUN_EVENT, SWEEP_EVENT

    pid, api, _ = start_server(tmp_path / "server")
    try:
        env = deploy(api, tmp_path / "client")
        # The server registered our block type itself, found through the
        # `prefect.collections` entry point (nothing registered it here).
        found = httpx.get(f"{api}/block_types/slug/truereward-target", timeout=30)
        assert found.status_code == 200 and found.json()["name"] == "Truereward Target"
        with listener() as (url, received):
            with temporary_settings(updates={PREFECT_API_URL: api}):
                block = CustomWebhookNotificationBlock(
                    name="ops",
                    url=url,
                    json_data={"subject": "{{subject}}", "body": "{{body}}"},
                    allow_private_urls=True,  # the listener is on loopback
                )
                block.save("truereward-ops")
            automation = yaml.safe_load(AUTOMATION.read_text())
            automation["automations"][0]["actions"][0]["block_document_id"] = str(
                block._block_document_id
            )
            (tmp_path / "automation.yaml").write_text(yaml.safe_dump(automation))
            created = prefect(
                env, "automation", "create", "--from-file", str(tmp_path / "automation.yaml")
            )
            assert created.returncode == 0, created.stdout + created.stderr

            # More runs refused for the grader's reasons than events sent.
            refused = REFUSED_EVENTS + 3
            runs: dict[str, Any] = {f"never-{index:03d}": "never" for index in range(refused)}
            runs.update({"ok": "pass", "fails": "fail", "blamed": "missing"})
            sweep = make_sweep(tmp_path / "nightly", runs, cases=2)
            out = tmp_path / "out"
            request = {"sweep": str(sweep), "target": str(out), "max_attempts": 1}
            with worker(env, tmp_path / "worker.log"):
                called = python(env, CALLER, json.dumps(request))

            # The caller reads the outcome: JSON, the headline and its counts.
            assert called["state"] == "Graded with refusals", called
            outcome = GradeRunOutcome.model_validate(called["result"])
            assert outcome.detail is None  # never a line per run
            assert (outcome.state, outcome.sweep, outcome.target) == (
                "Graded with refusals", "nightly", str(out),
            )  # fmt: skip
            summary = outcome.summary
            assert (summary.runs, summary.gradable, summary.ungradable) == (
                refused + 3,
                2,
                refused + 1,
            )
            assert summary.grader_refused == refused and outcome.graded == refused + 3
            assert outcome.published == {"created": refused + 3}
            assert outcome.headline.startswith(f"{refused + 3} runs: 2 gradable")
            assert outcome.report == str(out / "sweep-report.html")
            assert len(json.dumps(called["result"])) < 20_000
            # A process with another Prefect home reads it too (the record
            # names where the result is stored).
            other = offline_env(PREFECT_API_URL=api, PREFECT_HOME=str(tmp_path / "elsewhere"))
            assert python(other, READER, called["id"]) == called["result"]

            # One sweep event with the counts, one event per still-refused
            # run up to the bound, none for the run's own refusal.
            wait_for("sweep event", lambda: events(api, SWEEP_EVENT)[0] == 1)
            _, (graded,) = events(api, SWEEP_EVENT)
            assert graded["resource"]["prefect.resource.id"] == "truereward.sweep.nightly"
            assert graded["resource"]["truereward.grader-refused"] == "true"
            assert graded["payload"]["grader_refused"] == refused
            assert graded["payload"]["refused_events"] == REFUSED_EVENTS
            roles = {item["prefect.resource.role"] for item in graded["related"]}
            assert {"flow-run", "flow", "deployment"} <= roles
            wait_for("run events", lambda: events(api, RUN_EVENT)[0] == REFUSED_EVENTS)
            _, page = events(api, RUN_EVENT)
            first = page[0]
            assert first["resource"]["truereward.run"].startswith("never-")
            assert first["resource"]["truereward.retryable"] == "true"
            assert first["payload"]["codes"] == ["EVIDENCE_UNREADABLE"]
            assert first["related"][0]["prefect.resource.id"] == "truereward.sweep.nightly"

            # The automation fired once, and its notification arrived.
            wait_for("notification", lambda: bool(received))
            (notice,) = received
            assert "sweep nightly has runs refused for the grader's reasons" in notice["subject"]
            assert f"{refused} runs stand refused" in notice["body"], notice
            assert "Graded with refusals" in notice["body"]
            assert events(api, "prefect.automation.action.executed")[0] == 1
    finally:
        stop_server(pid)
