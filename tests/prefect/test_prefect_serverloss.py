"""A grade-run flow run whose Prefect server goes away mid-sweep, on a real
``prefect server start`` of its own (its own PREFECT_HOME, a free port):

- called on the server (``python flows/grade_run.py ...`` with
  ``PREFECT_API_URL``), the server killed (``SIGKILL``) or hung
  (``SIGSTOP``): the flow process exits 75 within the documented bound,
  saying how many runs it published (exactly the grades on disk) and which
  it did not grade, every published set whole (``truereward verify``);
  with the server back (the same database), the command the message
  printed grades the rest, each run exactly once;
- started from the deployment by a process worker, the server killed: the
  flow-run process exits 75 within the bound, the worker logs it; the
  server started again marks the lost flow run Crashed (the zombie
  automation of ``infra/automations/``, with a short window), and the
  printed ``prefect deployment run`` command grades the rest, once each.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import psutil
import pytest
import yaml

from tests.conftest import ROOT
from tests.support.deployment import deploy, prefect, run_deployment, worker
from tests.support.server import offline_env, start_server, stop_server
from tests.support.sweeps import make_sweep, published, quicken
from truereward.grading.shards import shard_of
from truereward.prefect.lifeline import EXIT_API_LOST, exit_bound

pytestmark = [pytest.mark.slow, pytest.mark.longest]

#: The grace period of the flow runs here (the default is 20 s).
GRACE = 8
RUNS = 40
#: Published runs before the server goes away: mid-sweep.
BEFORE = 10
REQUEST = {"concurrency": 2, "chunk_size": 1}
#: What a flow-run process says as it ends for a lost API: its flow and status.
EXIT_SAID = re.compile(r"(grade-sweep|grade-run): exit status (\d+): the Prefect API was lost")


def slow_sweep(root: Path, seconds: float = 0.5) -> Path:
    # One run a chunk, two at a time, each read taking ``seconds``: a sweep of
    # 10 s and more, so the server goes away mid-grading; few runs, since
    # each is three task runs on the server (the suite's CPU).
    runs = {f"run-{index:03d}": ("slow", seconds) for index in range(RUNS)}
    return make_sweep(root / "sweep", runs, cases=2)


def port_of(api: str) -> int:
    found = re.search(r":(\d+)/api$", api)
    assert found, api
    return int(found.group(1))


def wait_published(out: Path, count: int, alive: Any) -> None:
    deadline = time.monotonic() + 180
    while len(list(out.glob("*/reward.txt"))) < count:
        assert alive(), "the flow ended before the server went away"
        assert time.monotonic() < deadline, "nothing published"
        time.sleep(0.05)


def per_shard(runs: Iterable[str]) -> list[int]:
    """How many of ``runs`` (run ids) each shard of a two-shard grade-sweep holds."""
    counts = [0, 0]
    for run in runs:
        counts[shard_of(run, 2)] += 1
    return counts


def shard_counts(out: Path) -> list[int]:
    """Runs with a reward on disk, by shard of a two-shard grade-sweep."""
    return per_shard(path.parent.name for path in out.glob("*/reward.txt"))


def on_disk(out: Path) -> list[str]:
    return sorted(path.parent.name for path in out.glob("*/grade.json"))


def command_line(process: psutil.Process) -> str:
    """The process's command line, or "" once it has exited: a child the
    worker has not reaped yet is a zombie, whose cmdline psutil refuses
    (CI, stop 38: psutil.ZombieProcess while polling for the shards)."""
    try:
        return " ".join(process.cmdline())
    except psutil.Error:  # ZombieProcess, NoSuchProcess, AccessDenied
        return ""


def check_the_message(text: str, out: Path, api: str) -> list[str]:
    """The flow's last words against the target: it names what is on disk.
    Returns the command lines it printed to resume."""
    graded = on_disk(out)
    assert f"grade-run: the Prefect API at {api} was lost: no answer for" in text, text
    assert f"published {len(graded)} of {RUNS} runs (created {len(graded)}); " in text, text
    left = RUNS - len(graded)
    named = re.search(rf"not graded: {left} \(([^)]*)\)", text)
    assert named, text
    names = [name.strip() for name in named.group(1).split(",") if name.strip().startswith("run-")]
    assert names and not set(names) & set(graded), (names, graded)
    assert "no publish was cut" in text
    assert f"grade-run: exit status {EXIT_API_LOST}: the Prefect API was lost." in text
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "run the same request again:" in line)
    return [re.sub(r"^(\s+|\s*or: )", "", line) for line in lines[start + 1 : start + 3]]


def check_whole(out: Path, count: int) -> None:
    """Every run published has its whole set, and ``truereward verify`` agrees."""
    files = published(out)
    assert len(files) == count
    for run, item in files.items():
        assert item["files"] == ["ctrf.json", "grade.json", "reward.json", "reward.txt"], run
    verified = subprocess.run(
        [str(Path(sys.executable).with_name("truereward")), "verify", str(out)],
        env=offline_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert f"{count} runs, {count} consistent, 0 repaired, 0 inconsistent" in verified.stdout


def check_graded_once(out: Path, kept: dict[str, bytes]) -> None:
    files = published(out)
    assert len(files) == RUNS
    for run, item in files.items():
        grade = item["grade"]
        assert grade["gradable"] and grade["run"]["attempt"] == 1 and grade["attempts"] == [], run
    for run, data in kept.items():
        assert (out / run / "grade.json").read_bytes() == data, run  # not graded again
    check_whole(out, RUNS)


def flow_run_states(api: str) -> list[tuple[str, str]]:
    """(state type, state name) of every grade-run flow run, oldest first
    (in this process: a client process a poll cost seconds of CPU)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.sorting import FlowRunSort
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: api}), get_client(sync_client=True) as client:
        runs = client.read_flow_runs(sort=FlowRunSort.EXPECTED_START_TIME_ASC)
    return [
        (run.state.type.value, run.state.name)
        for run in runs
        if run.state is not None and run.name.startswith("grade-run-")
    ]


@pytest.mark.parametrize("how", ["killed", "hung"])
def test_a_flow_that_loses_its_server_ends_in_bounded_time_and_its_rerun_completes(
    tmp_path: Path, how: str
) -> None:
    home = tmp_path / "server"
    pid, api, _ = start_server(home)
    try:
        sweep, out = slow_sweep(tmp_path), tmp_path / "out"
        env = offline_env(
            PREFECT_API_URL=api,
            PREFECT_HOME=str(tmp_path / "client"),
            TRUEREWARD_API_GRACE_SECONDS=str(GRACE),
        )
        flags = [f"--{key.replace('_', '-')}={value}" for key, value in REQUEST.items()]
        command = [sys.executable, "flows/grade_run.py", str(sweep), "--target", str(out), *flags]
        with open(tmp_path / "flow.err", "wb") as errors:
            flow = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=errors
            )
            try:
                wait_published(out, BEFORE, lambda: flow.poll() is None)
                os.killpg(pid, signal.SIGKILL if how == "killed" else signal.SIGSTOP)
                gone = time.monotonic()
                status = flow.wait(timeout=exit_bound(GRACE) + 60)
                took = time.monotonic() - gone
            finally:
                if flow.poll() is None:
                    flow.kill()
        text = (tmp_path / "flow.err").read_text(errors="replace")
        print(f"server {how}: the flow process exited {status} after {took:.1f} s")
        assert status == EXIT_API_LOST, text[-3000:]
        # The bound runs from the server's last answer, which came before this.
        assert took <= exit_bound(GRACE), text[-3000:]
        resume = check_the_message(text, out, api)
        time.sleep(1)  # nothing goes on after the process
        graded = on_disk(out)
        assert BEFORE <= len(graded) < RUNS
        check_whole(out, len(graded))
        kept = {run: (out / run / "grade.json").read_bytes() for run in graded}
        quicken(sweep, 0.05)

        # The server comes back with the same database.
        if how == "killed":
            pid, api, _ = start_server(home, port=port_of(api))
        else:
            os.killpg(pid, signal.SIGCONT)
        (local,) = [line for line in resume if line.startswith("python flows/grade_run.py")]
        again = subprocess.run(
            [sys.executable, *shlex.split(local)[1:]],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-3000:]
        check_graded_once(out, kept)
        # The lost flow run still shows Running (no automation on this
        # server); the rerun ended Graded.
        states = flow_run_states(api)
        assert states == [("RUNNING", "Running"), ("COMPLETED", "Graded")], states
    finally:
        stop_server(pid)


def test_a_deployed_flow_run_that_loses_its_server_exits_is_crashed_and_resumes(
    tmp_path: Path,
) -> None:
    home = tmp_path / "server"
    pid, api, _ = start_server(home)
    try:
        env = deploy(api, tmp_path / "client")
        # Heartbeats every 30 s (Prefect's least) and a copy of the zombie
        # automation waiting 45 s for the next event, to be quick.
        zombies = ROOT / "infra" / "automations" / "crash-unresponsive-flow-runs.yaml"
        automation = yaml.safe_load(zombies.read_text())
        automation["automations"][0]["trigger"]["within"] = 45
        (tmp_path / "zombies.yaml").write_text(yaml.safe_dump(automation))
        created = prefect(
            env, "automation", "create", "--from-file", str(tmp_path / "zombies.yaml")
        )
        assert created.returncode == 0, created.stdout + created.stderr
        env.update(TRUEREWARD_API_GRACE_SECONDS=str(GRACE), PREFECT_FLOWS_HEARTBEAT_FREQUENCY="30")
        sweep, out = slow_sweep(tmp_path), tmp_path / "out"
        request = {"sweep": str(sweep), "target": str(out), **REQUEST}
        log = tmp_path / "worker-1.log"
        with worker(env, log) as first:
            started = run_deployment(env, request, watch=False)
            assert started.returncode == 0, started.stdout + started.stderr
            wait_published(out, BEFORE, lambda: first.poll() is None)
            flow_runs = psutil.Process(first.pid).children(recursive=True)
            assert flow_runs, "no flow-run process under the worker"
            os.killpg(pid, signal.SIGKILL)
            gone = time.monotonic()
            _, alive = psutil.wait_procs(flow_runs, timeout=exit_bound(GRACE) + 60)
            took = time.monotonic() - gone
            deadline = time.monotonic() + 60  # the worker's word on it
            while "Process exited with status code" not in log.read_text(errors="replace"):
                assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
                time.sleep(0.2)
        text = log.read_text(errors="replace")
        print(f"deployed: the flow-run process exited after {took:.1f} s")
        assert not alive, text[-3000:]
        assert took <= exit_bound(GRACE), text[-3000:]
        assert f"Process exited with status code: {EXIT_API_LOST}" in text, text[-3000:]
        resume = check_the_message(text, out, api)
        graded = on_disk(out)
        check_whole(out, len(graded))
        kept = {run: (out / run / "grade.json").read_bytes() for run in graded}
        quicken(sweep, 0.05)

        # Back, with the same database: the lost flow run is marked Crashed.
        pid, api, _ = start_server(home, port=port_of(api))
        deadline = time.monotonic() + 180
        while (states := flow_run_states(api))[0][0] != "CRASHED":
            assert time.monotonic() < deadline, states
            time.sleep(3)
        (command,) = [line for line in resume if line.startswith("prefect deployment run")]
        words = shlex.split(command)
        assert words[:4] == ["prefect", "deployment", "run", "grade-run/local"]
        assert json.loads(words[5].removeprefix("request=")) == request
        with worker(env, tmp_path / "worker-2.log"):
            again = prefect(env, *words[1:], "--watch-timeout", "240")
        assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
        assert "Graded" in again.stdout
        check_graded_once(out, kept)
    finally:
        stop_server(pid)


def test_a_grade_sweep_that_loses_its_server_ends_with_its_shards_and_resumes(
    tmp_path: Path,
) -> None:
    """grade-sweep/local, two shards on one process worker: the server
    killed mid-sweep, the parent and both shards exit 75 within the bound,
    the parent naming the grade-sweep command and each shard what it
    published; that command, once the server is back, grades the rest."""
    home = tmp_path / "server"
    pid, api, _ = start_server(home)
    try:
        env = deploy(api, tmp_path / "client")
        env["TRUEREWARD_API_GRACE_SECONDS"] = str(GRACE)
        # Both shards must still be grading when the server goes away. On a
        # busy machine one shard's first task runs can lag the other's by
        # seconds: at 1 s a read, the 17-run shard ended before the 23-run
        # one had published 5 runs (CI), and never lost its API. At 4 s a
        # read a shard takes over 30 s, and the rerun reads quickly
        # (quicken, once the server is gone).
        sweep, out = slow_sweep(tmp_path, seconds=4.0), tmp_path / "out"
        request = {"sweep": str(sweep), "target": str(out), "shards": 2, **REQUEST}
        log = tmp_path / "worker-1.log"
        with worker(env, log) as first:
            started = run_deployment(env, request, watch=False, deployment="grade-sweep/local")
            assert started.returncode == 0, started.stdout + started.stderr

            def engines() -> list[psutil.Process]:
                return [
                    child
                    for child in psutil.Process(first.pid).children(recursive=True)
                    if "prefect.engine" in command_line(child)
                ]

            deadline = time.monotonic() + 180
            while len(engines()) < 3:  # the parent and both shards run
                assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
                time.sleep(0.2)
            # Both shards past Prefect's own start-up (a shard still in the
            # engine's begin_run is Prefect's client retrying, not our lifeline).
            deadline = time.monotonic() + 180
            while min(shard_counts(out)) < 2:
                assert first.poll() is None, "the flow ended before the server went away"
                assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
                time.sleep(0.05)
            flow_runs, before = engines(), shard_counts(out)
            os.killpg(pid, signal.SIGKILL)
            gone = time.monotonic()
            # A shard that had published all its runs may have ended already,
            # and then never loses its API: the scenario's timing, not a fault.
            sizes = per_shard(path.name for path in sweep.iterdir())
            assert all(done < size for done, size in zip(before, sizes, strict=True)), before
            _, alive = psutil.wait_procs(flow_runs, timeout=exit_bound(GRACE) + 60)
            took = time.monotonic() - gone
            # Each flow-run process says its exit status itself; the worker relays
            # their output, and, itself retrying the lost API, may relay it late.
            deadline = time.monotonic() + 240
            while len(said := EXIT_SAID.findall(text := log.read_text(errors="replace"))) < 3:
                exits = re.findall(r"Process exited with status code: \d+", text)
                assert time.monotonic() < deadline, (said, exits, alive, took)
                time.sleep(0.2)
        text = log.read_text(errors="replace")
        print(f"grade-sweep: its three flow-run processes exited within {took:.1f} s")
        assert not alive and took <= exit_bound(GRACE), text[-3000:]
        statuses = sorted(EXIT_SAID.findall(text))
        expected = [("grade-run", str(EXIT_API_LOST))] * 2 + [("grade-sweep", str(EXIT_API_LOST))]
        assert statuses == expected, (statuses, text[-3000:])
        assert f"grade-sweep: the Prefect API at {api} was lost" in text, text[-3000:]
        assert "grade-sweep: the parent stops waiting for its 2 shards" in text
        graded = on_disk(out)
        said = re.findall(r"grade-run: published (\d+) of (\d+) runs", text)
        assert len(said) == 2 and sum(int(count) for count, _ in said) == len(graded), said
        assert sum(int(planned) for _, planned in said) == RUNS
        check_whole(out, len(graded))
        kept = {run: (out / run / "grade.json").read_bytes() for run in graded}
        quicken(sweep, 0.05)
        (command,) = re.findall(
            r"^    (prefect deployment run 'grade-sweep/local' .*)$", text, re.M
        )
        words = shlex.split(command)
        assert json.loads(words[5].removeprefix("request=")) == request

        pid, api, _ = start_server(home, port=port_of(api))
        with worker(env, tmp_path / "worker-2.log"):
            again = prefect(env, *words[1:], "--watch-timeout", "240")
        assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
        assert "Graded" in again.stdout
        check_graded_once(out, kept)
    finally:
        stop_server(pid)
