"""Helpers shared by the benchmark scripts: alternating timing and installing
reference packages into a directory of their own."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".bench"


def cached_bytecode_env() -> dict[str, str]:
    """The environment of a timed child process: this one's, with bytecode
    caching on (``PYTHONDONTWRITEBYTECODE`` removed) as on an installed
    package, no analytics. Without it a child in a session that sets the
    variable compiles, on every start, each module that has no current
    ``.pyc``; time one warm-up run before the timed ones."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update(PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1")
    return env


def install_target(spec: str) -> Path:
    """``pip install --no-deps --target`` ``spec`` into .bench/ once; returns the dir."""
    target = CACHE / spec.replace("==", "-")
    if not target.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-deps",
                "--disable-pip-version-check",
                "--target",
                str(target),
                spec,
            ],
            check=True,
        )
    return target


def load_as(package_dir: Path, name: str) -> ModuleType:
    """Import the package in ``package_dir`` under another top-level ``name``,
    so that two versions of one package can run in one process."""
    spec = importlib.util.spec_from_file_location(
        name, package_dir / "__init__.py", submodule_search_locations=[str(package_dir)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def alternate(
    ours: Callable[[], object],
    theirs: Callable[[], object],
    *,
    number: int,
    rounds: int,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[list[float], list[float]]:
    """Time ``number`` calls of each, alternating, ``rounds`` times; per-call
    seconds for each round. ``clock`` is wall time by default;
    ``time.process_time`` (this process's CPU time) is fairer for work that
    is all CPU on a machine shared with other jobs, where wall time also
    counts the time other processes held the CPU."""
    mine: list[float] = []
    other: list[float] = []
    for _ in range(rounds):
        for fn, out in ((ours, mine), (theirs, other)):
            start = clock()
            for _ in range(number):
                fn()
            out.append((clock() - start) / number)
    return mine, other


def ratio_line(
    label: str, mine: list[float], other: list[float], unit: float = 1e6, unit_name: str = "us"
) -> float:
    """Print medians and the throughput ratio (theirs / ours per call); return it."""
    ours_median, theirs_median = statistics.median(mine), statistics.median(other)
    ratio = theirs_median / ours_median
    pairs = sorted(o / m for m, o in zip(mine, other, strict=True))
    print(
        f"{label}: ours {ours_median * unit:.1f} {unit_name}/call, baseline "
        f"{theirs_median * unit:.1f} {unit_name}/call, throughput ratio {ratio:.2f} "
        f"(per-round ratios {pairs[0]:.2f}..{pairs[-1]:.2f})"
    )
    return ratio


# --- generated sweeps and the plain library loop (grade_run.py, plain_loop.py, ...) ---------

#: Cases in each run of a generated sweep.
CASES = 20
SWEEPS = CACHE / "grade-run"


def make_sweep(runs: int, cache: Path = SWEEPS) -> Path:
    """A sweep of ``runs`` runs, generated once into ``cache/sweep-<runs>/``:
    one directory per run with a task spec of 20 cases and its rows (JSONL;
    80 % of runs pass, 15 % fail a fail-to-pass case, 5 % left no evidence)."""
    import json
    import random
    import shutil

    sweep = cache / f"sweep-{runs}"
    if (sweep / ".complete").exists():
        return sweep
    shutil.rmtree(sweep, ignore_errors=True)
    sweep.mkdir(parents=True)
    random.seed(runs)
    cases = {
        f"tests/test_module_{index:02d}.py::test_behaviour": (
            "fail_to_pass" if index < 5 else "pass_to_pass"
        )
        for index in range(CASES)
    }
    spec = json.dumps({"cases": cases, "reader": "rows"})
    for index in range(runs):
        run = sweep / f"run-{index:05d}"
        run.mkdir()
        (run / "task.json").write_text(spec)
        draw = random.random()
        if draw < 0.05:
            continue  # no evidence: EVIDENCE_MISSING
        failing = next(iter(cases)) if draw < 0.20 else None
        (run / "rows.jsonl").write_text(
            "".join(
                json.dumps(
                    {
                        "id": case,
                        "kind": kind,
                        "verdict": "fail" if case == failing else "pass",
                        "measures": {"duration_ms": round(random.uniform(1, 900), 1)},
                    }
                )
                + "\n"
                for case, kind in cases.items()
            )
        )
    (sweep / ".complete").write_text("")
    return sweep


def print_flow_side(call: Callable[[], Any]) -> None:
    """One flow side of a bench: time ``call()`` (a flow called with
    ``return_state=True``), exit unless its state is completed, and print
    the side's JSON line (seconds, runs graded, this process's peak MB)."""
    import json

    start = time.perf_counter()
    state = call()
    seconds = time.perf_counter() - start
    if not state.is_completed():
        raise SystemExit(f"the flow ended {state.name}: {state.message}")
    runs = int(state.result().summary.runs)
    print(json.dumps({"seconds": seconds, "runs": runs, "peak_mb": peak_rss_mb()}))


def run_side(name: str, command: list[str], env: dict[str, str], target: Path) -> dict[str, Any]:
    """Run one side of a bench in a fresh process (``command``, from the
    project root) and return the figures it printed as its last JSON line
    (py-spy may print lines of its own); exit when it failed or when the
    grades published under ``target`` are not one per run it reports.
    ``target`` is removed afterwards."""
    import json
    import shutil

    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{name} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    last = [line for line in done.stdout.splitlines() if line.startswith("{")][-1]
    figures: dict[str, Any] = json.loads(last)
    graded = sum(1 for _ in target.glob("*/grade.json"))
    if graded != figures["runs"]:
        raise SystemExit(f"{name}: {graded} grades published for {figures['runs']} runs")
    shutil.rmtree(target, ignore_errors=True)
    return figures


def run_names(sweep: Path) -> list[str]:
    """The run directories of a generated sweep, sorted."""
    import os

    return sorted(entry.name for entry in os.scandir(sweep) if entry.is_dir())


def plain_loop(sweep: Path, target: Path, runs: list[str] | None = None) -> int:
    """The plain library loop, no Prefect: for each run, ``TaskSpec.load``,
    ``read_with_evidence("rows", ...)``, ``grade_document``, ``publish`` (the
    four files, atomic and durable), one run after another. Returns the
    number of runs graded."""
    from truereward import grade_document, publish
    from truereward.codes import Ungradable
    from truereward.readers import read_with_evidence
    from truereward.record.taskspec import TaskSpec

    graded = 0
    for run in run_names(sweep) if runs is None else runs:
        spec = TaskSpec.load(sweep / run / "task.json")
        info = {"id": run, "sweep": sweep.name}
        try:
            reading = read_with_evidence("rows", str(sweep / run / "rows.jsonl"), spec)
        except Ungradable as error:  # a refusal: the document says so
            document = grade_document([], run=info, refusals=[error])
        else:
            document = grade_document(
                reading.rows, case_set=spec, run=info, evidence=reading.evidence
            )
        publish(document, target / run)
        graded += 1
    return graded


# --- processes: memory, real components ------------------------------------------------------


def peak_rss_mb(pid: int | str = "self") -> float:
    """The peak resident memory (VmHWM) of process ``pid``, in MB; 0 when it
    is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class CpuMeter:
    """CPU seconds spent while the block runs: by the whole machine
    (``busy``: user, nice, system, irq and softirq time over every core;
    idle, I/O wait and time stolen by the hypervisor left out) and by each
    named process with its reaped children
    (``seconds[name]``: a worker's flow-run processes count once they have
    ended and been reaped, so the block's end waits up to ``settle`` seconds
    for the named processes' children to go, after the machine's figures
    are taken). ``cores`` is ``busy`` over the block's wall time: how many of
    the machine's cores were at work on average."""

    def __init__(self, pids: Mapping[str, int], settle: float = 15.0) -> None:
        self.pids, self.settle = dict(pids), settle
        self.seconds: dict[str, float] = {}
        self.busy = self.cores = self.wall = 0.0

    @staticmethod
    def _machine() -> float:
        import psutil

        times = psutil.cpu_times()
        busy = ("user", "nice", "system", "irq", "softirq")
        return sum(getattr(times, name, 0.0) for name in busy)

    @staticmethod
    def _process(pid: int) -> float:
        import psutil

        try:
            times = psutil.Process(pid).cpu_times()
        except psutil.NoSuchProcess:
            return 0.0
        return times.user + times.system + times.children_user + times.children_system

    def __enter__(self) -> CpuMeter:
        self._start = {name: self._process(pid) for name, pid in self.pids.items()}
        self._busy, self._wall = self._machine(), time.perf_counter()
        return self

    def __exit__(self, *_: object) -> None:
        self.wall = time.perf_counter() - self._wall
        self.busy = self._machine() - self._busy
        self.cores = self.busy / self.wall if self.wall else 0.0
        import psutil

        deadline = time.monotonic() + self.settle
        for pid in self.pids.values():
            with contextlib.suppress(psutil.NoSuchProcess):
                process = psutil.Process(pid)
                while process.children() and time.monotonic() < deadline:
                    time.sleep(0.1)
        self.seconds = {
            name: self._process(pid) - self._start[name] for name, pid in self.pids.items()
        }


class PeakSampler:
    """Samples the peak resident memory (VmHWM) of processes in a thread,
    every ``interval`` seconds: of ``pids``, and of every descendant of
    ``family`` (a worker's flow-run processes). ``peaks`` maps each pid seen
    to its largest VmHWM; a process is sampled until it exits, and VmHWM is
    a high-water mark, so only a peak in its last ``interval`` can be
    missed."""

    def __init__(
        self, pids: Iterable[int] = (), family: Iterable[int] = (), interval: float = 0.2
    ) -> None:
        import threading

        self.pids, self.family, self.interval = list(pids), list(family), interval
        self.peaks: dict[int, float] = {}
        self.commands: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        import psutil

        watched = set(self.pids)
        for pid in self.family:
            try:
                watched |= {child.pid for child in psutil.Process(pid).children(recursive=True)}
            except psutil.NoSuchProcess:
                continue
        for pid in watched:
            peak = peak_rss_mb(pid)
            if peak:
                self.peaks[pid] = max(peak, self.peaks.get(pid, 0.0))
                if pid not in self.commands:
                    try:
                        self.commands[pid] = " ".join(psutil.Process(pid).cmdline())[:200]
                    except psutil.Error:
                        self.commands[pid] = "?"

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> PeakSampler:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


def offline_env(**extra: str) -> dict[str, str]:
    """The environment of the Prefect and Dask processes a bench starts (the
    tests' own: no analytics, no configured server unless given)."""
    sys.path.insert(0, str(ROOT))
    from tests.support.server import offline_env as env

    return env(**extra)


# --- profiles: py-spy (sampling, every thread, any process) ----------------------------------

PY_SPY = Path(sys.executable).with_name("py-spy")


def py_spy_command(output: Path, *, idle: bool = False, rate: int = 67) -> list[str]:
    """The prefix that runs a command under ``py-spy record`` (collapsed
    stacks into ``output``); py-spy must be installed in the venv
    (``.venv/bin/pip install py-spy``)."""
    if not PY_SPY.exists():
        raise SystemExit(f"--profile needs py-spy: {PY_SPY.parent}/pip install py-spy")
    command = [str(PY_SPY), "record", "--format", "raw", "-o", str(output), "--rate", str(rate)]
    command += ["--nonblocking"]
    if idle:
        command.append("--idle")
    return [*command, "--"]


def _frame_name(frame: str) -> str:
    """``function (file:line)`` -> ``function (short/file)``."""
    name, _, where = frame.partition(" (")
    path = where.rsplit(":", 1)[0]
    for marker in ("site-packages/", "lib/python3", f"{ROOT}/"):
        if marker in path:
            path = path.split(marker, 1)[1]
    return f"{name} ({path})"


def profile_summary(path: Path, *, top: int = 20, title: str = "profile") -> dict[str, float]:
    """Print where the samples of a py-spy raw profile go: the frames with
    the most own samples, and the share of samples under each of our and
    Prefect's functions (inclusive); returns the inclusive shares."""
    own: dict[str, int] = {}
    inclusive: dict[str, int] = {}
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        total += count
        frames = [_frame_name(frame) for frame in stack.split(";")]
        own[frames[-1]] = own.get(frames[-1], 0) + count
        for name in set(frames):
            inclusive[name] = inclusive.get(name, 0) + count
    if not total:
        print(f"{title}: no samples in {path}")
        return {}
    shares = {name: count / total for name, count in inclusive.items()}
    print(f"{title}: {total} samples ({path})")
    print("  own samples:")
    for name, count in sorted(own.items(), key=lambda item: -item[1])[:top]:
        print(f"    {count / total * 100:5.1f} %  {name}")
    print("  inclusive (truereward, flows, prefect, pydantic, httpx, ssl, pickle):")
    keep = ("truereward/", "flows/", "prefect/", "pydantic", "httpx", "ssl", "pickle", "certifi")
    shown = [item for item in shares.items() if any(key in item[0] for key in keep)]
    for name, share in sorted(shown, key=lambda item: -item[1])[: top + 10]:
        print(f"    {share * 100:5.1f} %  {name}")
    return shares


# --- a Prefect server, the deployments, process workers (the tests' own starters) ------------


class Deployed:
    """A ``prefect server start`` of its own (SQLite under ``home``), the
    ``truereward-process`` work pool and every ``local`` deployment of
    infra/prefect.yaml (``grade-run/local``, ``grade-sweep/local``), deployed
    from the project root, as the README does. ``env`` is a client's
    environment; ``queues`` are extra work queues made on the pool;
    ``database_url`` puts the server's database elsewhere than SQLite (see
    :func:`postgres`)."""

    def __init__(
        self, home: Path, queues: Iterable[str] = (), database_url: str | None = None
    ) -> None:
        self.home, self.queues, self.database_url = home, list(queues), database_url
        self.pid = 0
        self.url = ""
        self.env: dict[str, str] = {}

    def __enter__(self) -> Deployed:
        import shutil

        sys.path.insert(0, str(ROOT))
        from tests.support.deployment import POOL, prefect
        from tests.support.server import start_server

        shutil.rmtree(self.home, ignore_errors=True)
        self.pid, self.url, _ = start_server(self.home / "server", self.database_url)
        self.env = offline_env(
            PREFECT_API_URL=self.url,
            PREFECT_HOME=str(self.home / "client"),
            PREFECT_WORKER_QUERY_SECONDS="1",
            PREFECT_CLI_PROMPT="false",
            COLUMNS="1000",
        )
        try:
            steps = [("work-pool", "create", POOL, "--type", "process", "--overwrite")]
            steps += [("work-queue", "create", queue, "--pool", POOL) for queue in self.queues]
            steps += [("--no-prompt", "deploy", "--prefect-file", "infra/prefect.yaml")]
            steps[-1] += ("--name", "local")
            for step in steps:
                done = prefect(self.env, *step)
                if done.returncode != 0:
                    raise SystemExit(f"prefect {' '.join(step)}:\n{done.stdout}{done.stderr}")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *_: object) -> None:
        from tests.support.server import stop_server

        stop_server(self.pid)

    def worker(self, log: Path, *more: str) -> Any:
        """A process worker on the pool in the project root (a context
        manager; the worker and its flow runs are killed at the end)."""
        from tests.support.deployment import worker

        return worker(self.env, log, *more)

    def client_settings(self) -> Any:
        """Settings for a Prefect client of this server, in this process."""
        from prefect.settings import PREFECT_API_URL, temporary_settings

        return temporary_settings(updates={PREFECT_API_URL: self.url})


def wait_for_workers(deployed: Deployed, names: Iterable[str], timeout: float = 120.0) -> None:
    """Until the workers ``names`` (``prefect worker start --name``) have
    sent a heartbeat to the pool."""
    from prefect.client.orchestration import get_client

    sys.path.insert(0, str(ROOT))
    from tests.support.deployment import POOL

    deadline = time.monotonic() + timeout
    with deployed.client_settings(), get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            online = {item.name for item in client.read_workers_for_work_pool(POOL)}
            if set(names) <= online:
                return
            time.sleep(0.5)
    raise SystemExit(f"workers {sorted(names)} did not come online in {timeout:.0f} s")


@contextlib.contextmanager
def postgres(home: Path) -> Iterator[str]:
    """A throwaway PostgreSQL cluster under ``home`` on a free loopback port
    (Debian's ``postgresql`` package: ``initdb`` and ``pg_ctl`` from
    ``/usr/lib/postgresql/<version>/bin``, or on ``PATH``), stopped at the
    end; yields the Prefect database URL (``postgresql+asyncpg://...``).
    PostgreSQL refuses to run as root, so under root the cluster runs as the
    ``postgres`` user (``runuser``). Raises ``SystemExit`` naming what is
    missing when PostgreSQL is not installed."""
    import glob
    import os
    import shutil

    sys.path.insert(0, str(ROOT))
    from tests.support.server import free_port

    # On PATH, or where Debian's package puts it (its versioned directory).
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    initdb = shutil.which("initdb") or (found[-1] if found else None)
    if initdb is None:
        raise SystemExit("PostgreSQL is not installed (apt-get install postgresql): no initdb")
    bindir = Path(initdb).resolve().parent  # beside it: pg_ctl, createdb
    as_user: list[str] = []
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    if os.geteuid() == 0:
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(home, "postgres")
    data, port = home / "data", free_port()
    run = [*as_user, str(bindir / "initdb"), "-D", str(data), "-U", "prefect", "--auth=trust"]
    subprocess.run(run, check=True, capture_output=True)
    # TCP on loopback only: no Unix socket, whose path has a length limit.
    options = f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''"
    ctl = [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-l", str(home / "log")]
    subprocess.run([*ctl, "-o", options, "-w", "start"], check=True, capture_output=True)
    try:
        create = [*as_user, str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port)]
        subprocess.run([*create, "-U", "prefect", "prefect"], check=True, capture_output=True)
        yield f"postgresql+asyncpg://prefect@127.0.0.1:{port}/prefect"
    finally:
        subprocess.run([*ctl, "-m", "fast", "-w", "stop"], check=False, capture_output=True)
