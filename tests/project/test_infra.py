"""The deployment files: infra/prefect.yaml, the work-pool templates, the
compose file (checked by ``docker compose config`` where a compose client
exists), the Dockerfile, the main command and its sample sweep."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT
from truereward.grading import GradeRequest, grade_request
from truereward.record.taskspec import TaskSpec

INFRA = ROOT / "infra"
#: Paths that would belong to one machine (this one or a developer's).
MACHINE_PATH = re.compile(
    r"(?<![\w.:/-])/(?:home|root|work|tmp|Users|var/folders|opt/hostedtoolcache)\b"
)


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def test_prefect_yaml_deploys_grade_run_local_on_a_process_pool_without_absolute_paths() -> None:
    text = (INFRA / "prefect.yaml").read_text()
    config = load_yaml(INFRA / "prefect.yaml")
    flows = {"flows/grade_run.py": "grade_run", "flows/grade_sweep.py": "grade_sweep"}
    deployments = {
        (item["entrypoint"].partition(":")[0], item["name"]): item for item in config["deployments"]
    }
    assert {("flows/grade_run.py", name) for name in ("local", "docker", "kubernetes")} <= set(
        deployments
    )
    assert ("flows/grade_sweep.py", "local") in deployments
    for flow_file in flows:
        local = deployments[(flow_file, "local")]
        assert local["work_pool"]["name"] == "truereward-process"
        assert local["enforce_parameter_schema"] is True
    for item in config["deployments"]:
        file, _, attribute = item["entrypoint"].partition(":")
        assert (ROOT / file).is_file() and attribute == flows[file]
        for step in item.get("pull", []):
            for options in step.values():
                assert not str(options.get("directory", ".")).startswith("/")
    assert not re.search(r"(?m)^[^#]*[\s'\"]/[A-Za-z]", text), "an absolute path in prefect.yaml"
    from flows.grade_run import grade_run
    from flows.grade_sweep import grade_sweep

    assert (grade_run.name, grade_sweep.name) == ("grade-run", "grade-sweep")


def test_work_pool_templates_define_every_variable_they_use() -> None:
    for name in ("docker", "kubernetes"):
        template = json.loads((INFRA / "work-pools" / f"{name}.json").read_text())
        used = set(re.findall(r"\{\{\s*(\w+)\s*\}\}", json.dumps(template["job_configuration"])))
        defined = set(template["variables"]["properties"])
        assert used and used <= defined, (name, used - defined)
        assert template["variables"]["properties"]["image"]["default"] == "truereward:local"


def test_the_compose_file_holds_server_postgres_store_and_worker() -> None:
    path = INFRA / "docker-compose.yml"
    text = path.read_text()
    compose = load_yaml(path)
    services = compose["services"]
    assert {"postgres", "prefect-server", "s3", "worker"} <= set(services)
    server = services["prefect-server"]
    assert "postgresql+asyncpg://" in server["environment"]["PREFECT_API_DATABASE_CONNECTION_URL"]
    assert "server" in server["command"]
    worker = services["worker"]
    assert worker["environment"]["PREFECT_API_URL"] == "http://prefect-server:4200/api"
    assert "truereward-process" in " ".join(worker["command"])
    assert set(worker["depends_on"]) >= {"prefect-server"}
    assert (path.parent / worker["build"]["context"] / worker["build"]["dockerfile"]).is_file()
    for service in services.values():
        for dependency in service.get("depends_on", {}):
            assert dependency in services
    # Every variable has a default, so the file works without a .env file.
    assert re.findall(r"(?<!\$)\$\{(\w+)\}", text) == []
    assert not MACHINE_PATH.search(text)


def compose_command() -> list[str] | None:
    """``docker compose`` (v2) when it works here, else ``docker-compose``."""
    if shutil.which("docker"):
        probe = subprocess.run(
            ["docker", "compose", "version"], capture_output=True, text=True, check=False
        )
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def test_docker_compose_config_accepts_the_compose_file() -> None:
    command = compose_command()
    services: set[str] = set()
    if command is not None:
        checked = subprocess.run(
            [*command, "-f", str(INFRA / "docker-compose.yml"), "config", "--services"],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert checked.returncode == 0, checked.stderr
        services = set(checked.stdout.split())
    else:
        # No compose client on this machine: the structural test above is the check.
        services = set(load_yaml(INFRA / "docker-compose.yml")["services"])
    assert {"postgres", "prefect-server", "s3", "worker"} <= services


def test_the_dockerfile_copies_what_exists_and_installs_the_extras() -> None:
    text = (INFRA / "Dockerfile").read_text()
    for source in re.findall(r"^COPY (.+) \S+$", text, re.M):
        for item in source.split():
            assert (ROOT / item).exists(), item
    assert '".[prefect,s3]"' in text
    for path in (INFRA / "Dockerfile", *(INFRA / "work-pools").iterdir()):
        assert not MACHINE_PATH.search(path.read_text()), path


def test_the_main_command_installs_the_prefect_extra_and_grades_the_sample_sweep() -> None:
    text = (INFRA / "demo.sh").read_text()
    assert "TRUEREWARD_EXTRAS=prefect" in text and "venv.sh" in text
    assert "flows/grade_run.py samples/sweep" in text
    assert "unset PREFECT_API_URL" in text  # the embedded ephemeral API


def test_the_sample_sweep_has_every_kind_of_run_and_grades_as_designed(tmp_path: Path) -> None:
    sweep = ROOT / "samples" / "sweep"
    runs = sorted(path.name for path in sweep.iterdir() if path.is_dir())
    assert len(runs) == 30
    for run in runs:
        TaskSpec.load(sweep / run / "task.json")
    waits: list[float] = []
    result = grade_request(
        GradeRequest(sweep=str(sweep), target=str(tmp_path), retry_delay_seconds=0.5),
        sleep=waits.append,
    )
    lines = {line.run: line for line in result.runs}
    assert result.summary.runs == 30
    assert (result.summary.gradable, result.summary.ungradable) == (23, 7)
    assert (
        lines["run-28-store-flaky"].state == "gradable"
        and lines["run-28-store-flaky"].attempts == 2
    )
    assert (
        lines["run-29-store-down"].state == "ungradable"
        and lines["run-29-store-down"].attempts == 3
    )
    assert (
        lines["run-30-reader-crashed"].attempts == 3
        and lines["run-30-reader-crashed"].reward == 1.0
    )
    run_blamed = [line for line in result.runs if line.blame == ["run"]]
    assert len(run_blamed) == 4 and all(line.attempts == 1 for line in run_blamed)
    assert sorted(waits) == [0.5, 0.5, 0.5, 1.0, 1.0]  # backoff doubles
    assert result.state_name == "Graded with refusals"


ZOMBIES = INFRA / "automations" / "crash-unresponsive-flow-runs.yaml"


@pytest.mark.slow
def test_the_zombie_automation_waits_for_every_event_our_flow_runs_end_with() -> None:
    # Prefect's own example expects Completed/Failed/Cancelled/Crashed; our
    # flow runs end in states named otherwise, and their events carry the
    # name: the end of a run that ended "Graded" is an event the trigger counts.
    from prefect.server.events.schemas.automations import EventTrigger
    from prefect.settings import get_current_settings

    from flows.grade_run import NOT_STARTED
    from truereward.grading.report import GRADED, GRADED_WITH_REFUSALS, NOT_PUBLISHED

    (automation,) = load_yaml(ZOMBIES)["automations"]
    trigger = EventTrigger.model_validate(automation["trigger"])
    assert trigger.posture == "Proactive" and trigger.for_each == {"prefect.resource.id"}
    assert trigger.starts_after("prefect.flow-run.heartbeat")
    assert not trigger.starts_after("prefect.flow-run.Running")
    ends = [GRADED, GRADED_WITH_REFUSALS, NOT_PUBLISHED, f"{NOT_STARTED}: sweep: no such directory"]
    ends += ["Shards failed: 1, 3", "Completed", "Failed", "Cancelled", "Crashed"]
    for name in [*ends, "heartbeat", "Running"]:
        assert trigger.expects(f"prefect.flow-run.{name}"), name
    assert not trigger.expects("prefect.task-run.Completed")
    # Longer than two heartbeat intervals of Prefect's default: a live run is never crashed.
    frequency = get_current_settings().flows.heartbeat_frequency
    assert frequency is not None and trigger.within.total_seconds() > 2 * frequency
    (action,) = automation["actions"]
    assert action["type"] == "change-flow-run-state" and action["state"] == "CRASHED"


@pytest.mark.slow
def test_the_zombie_automation_is_created_by_prefects_cli_on_a_real_server(
    prefect_client_settings: str, tmp_path: Path
) -> None:
    from prefect.automations import Automation

    from tests.support.server import PREFECT, offline_env

    env = offline_env(PREFECT_API_URL=prefect_client_settings, PREFECT_HOME=str(tmp_path / "home"))
    created = subprocess.run(
        [PREFECT, "automation", "create", "--from-file", str(ZOMBIES)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert created.returncode == 0, created.stdout + created.stderr
    stored = Automation.read(name="truereward-crash-unresponsive-flow-runs")
    try:
        assert stored.enabled
        assert stored.trigger.model_dump()["within"].total_seconds() == 600
        assert [action.type for action in stored.actions] == ["change-flow-run-state"]
    finally:
        stored.delete()  # the session's server is shared: leave no automation behind
