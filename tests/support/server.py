"""One real ``prefect server start`` for the test session, shared by the
pytest-xdist workers.

The first worker that needs it starts the server (SQLite in a Prefect home of
its own, a free port on loopback, analytics off) in a process group of its
own and records it in a state file beside a lock; the others reuse it; the
last one done stops it. A server that does not answer ``/api/health`` in
time fails the test loudly, with the end of its log.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

#: Seconds a fresh server may take to answer (migrations on a new database;
#: about 10 s on an idle machine, more on a busy one).
START_TIMEOUT = 180.0

PREFECT = str(Path(sys.executable).with_name("prefect"))


def api_cert_file() -> Path:
    """One CA certificate (the first of certifi's bundle) in a file of its
    own, for ``PREFECT_API_SSL_CERT_FILE``.

    Every Prefect client builds a TLS context for its API, loading that file
    (certifi's whole bundle by default) even when the API is plain HTTP on
    loopback, as it is here (docs/install.md, "How long the suite takes").
    The tests' APIs use no TLS, so one certificate serves; every other HTTPS
    client (pip, botocore) keeps its own."""
    path = Path(tempfile.gettempdir()) / "truereward-tests-api-ca.pem"
    if not path.exists():
        import certifi

        bundle = Path(certifi.where()).read_text()
        end = "-----END CERTIFICATE-----"
        scratch = path.with_suffix(f".{os.getpid()}")
        scratch.write_text(bundle[: bundle.index(end) + len(end)] + "\n")
        os.replace(scratch, path)  # whole or absent, whoever writes it
    return path


def offline_env(**extra: str) -> dict[str, str]:
    """The environment for Prefect processes of the tests: no analytics, no
    configured server unless given, and a small CA file for the API clients
    (:func:`api_cert_file`)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PREFECT_")}
    env.update(
        PREFECT_API_SSL_CERT_FILE=str(api_cert_file()),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        DO_NOT_TRACK="1",
        PREFECT_SERVER_LOGGING_LEVEL="WARNING",
        # An ephemeral API on a loaded machine can take longer than Prefect's default to start.
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="180",
    )
    env.update(extra)
    return env


def free_port() -> int:
    """A port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def healthy(url: str, timeout: float = 2.0) -> bool:
    """Whether the API at ``url`` (``http://.../api``) answers its health check."""
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=timeout) as response:
            return bool(response.status == 200)
    except OSError:
        return False


#: Registers the block types a server registers as it starts (Prefect's own
#: and its installed collections': prefect-aws, prefect-dask and truereward's
#: block here) into the database of ``PREFECT_HOME``.
_REGISTER_BLOCKS = """
import asyncio
import prefect.plugins
from prefect.server.database import provide_database_interface
from prefect.server.models.block_registration import run_block_auto_registration

async def main():
    prefect.plugins.load_prefect_collections()
    async with await provide_database_interface().session() as session:
        await run_block_auto_registration(session=session)
        await session.commit()

asyncio.run(main())
"""

#: The environment of a Prefect process whose home holds a copy of
#: :func:`migrated_database` (a server, or a flow's ephemeral API): it skips
#: the block registration, done once into the template. Loading the
#: collections and writing their block types at every start was CPU the
#: suite can spare (docs/install.md, "Figures").
SEEDED_SETTINGS = {
    "PREFECT_SERVER_REGISTER_BLOCKS_ON_START": "false",
    "PREFECT_SERVER_MEMOIZE_BLOCK_AUTO_REGISTRATION": "false",
}


def _template_key() -> str:
    """Prefect's version and its installed collections' (their block types
    are in the template; truereward's own is one, whose version does not
    change with its source, so each collection's module is hashed too): a
    change to either makes a new template."""
    key = [f"prefect-{importlib.metadata.version('prefect')}"]
    for point in importlib.metadata.entry_points(group="prefect.collections"):
        spec = importlib.util.find_spec(point.value)
        origin = Path(spec.origin) if spec is not None and spec.origin else None
        digest = hashlib.sha256(origin.read_bytes()).hexdigest()[:8] if origin else "-"
        version = point.dist.version if point.dist is not None else "-"
        key.append(f"{point.name}-{version}-{digest}")
    return "+".join(sorted(key))


def migrated_database() -> Path:
    """An empty Prefect database with every migration applied and the block
    types registered, made once per Prefect version and collections
    (:func:`_template_key`; ``prefect server database upgrade`` and
    :data:`_REGISTER_BLOCKS` in a scratch home) under the system's temp
    directory, and reused: a new server's home gets a copy
    (:func:`start_server`; :data:`SEEDED_SETTINGS` skip the
    registration there). Migrating a new database is most of a server's
    first start. The copy is made with SQLite's backup API (one consistent
    file, whatever the journal mode) and moved into place whole, so a
    process that sees the file sees it complete, and two that make it at
    once keep one."""
    cache = Path(tempfile.gettempdir()) / f"truereward-{_template_key()}-database"
    database = cache / "prefect.db"
    if database.exists():
        return database
    scratch = Path(tempfile.mkdtemp(prefix=f"{cache.name}-", dir=cache.parent))
    try:
        env = offline_env(PREFECT_HOME=str(scratch / "home"))
        for command in (
            [PREFECT, "server", "database", "upgrade", "--yes"],
            [sys.executable, "-c", _REGISTER_BLOCKS],
        ):
            done = subprocess.run(
                command,
                env=env,
                capture_output=True,
                text=True,
                timeout=START_TIMEOUT,
                stdin=subprocess.DEVNULL,
                check=False,
            )
            if done.returncode != 0:
                raise RuntimeError(
                    f"making the template database failed ({command[1:3]}):\n"
                    f"{done.stdout}{done.stderr}"
                )
        (scratch / "template").mkdir()
        source = contextlib.closing(sqlite3.connect(scratch / "home" / "prefect.db"))
        copy = contextlib.closing(sqlite3.connect(scratch / "template" / "prefect.db"))
        with source as reading, copy as writing:
            reading.backup(writing)
        with contextlib.suppress(OSError):  # another process put its own in place first
            os.rename(scratch / "template", cache)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return database


def seeded_home(path: Path) -> Path:
    """A Prefect home (made if absent) whose database is migrated already,
    a copy of :func:`migrated_database`: a server or an ephemeral API
    started in it skips the migrations, most of a first start, and with
    :data:`SEEDED_SETTINGS` in its environment the block registration too."""
    path.mkdir(parents=True, exist_ok=True)
    if not (path / "prefect.db").exists():
        shutil.copyfile(migrated_database(), path / "prefect.db")
    return path


def start_server(
    home: Path, database_url: str | None = None, port: int | None = None
) -> tuple[int, str, Path]:
    """Start ``prefect server start`` in ``home`` (a copy of
    :func:`migrated_database` when the home has no database yet); returns
    (pid, API URL, log file). ``database_url`` (``postgresql+asyncpg://...``)
    puts the server's database there instead, migrated by the server as it
    starts. ``port``: the port to serve on (a server started again where
    its clients expect it), else a free one."""
    home.mkdir(parents=True, exist_ok=True)
    extra: dict[str, str] = {}
    if database_url is not None:
        extra["PREFECT_API_DATABASE_CONNECTION_URL"] = database_url
    else:
        seeded_home(home)
        extra.update(SEEDED_SETTINGS)
    port = free_port() if port is None else port
    log = home / "server.log"
    with open(log, "ab") as output:
        process = subprocess.Popen(
            [PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port), "--no-ui"],
            env=offline_env(PREFECT_HOME=str(home), **extra),
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}/api"
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        if healthy(url):
            return process.pid, url, log
        time.sleep(0.5)
    stop_server(process.pid)
    tail = log.read_text(errors="replace")[-3000:]
    raise RuntimeError(f"prefect server did not become healthy at {url}; its log ends:\n{tail}")


def stop_server(pid: int) -> None:
    """Stop the server's process group (SIGTERM, then SIGKILL)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def shared_server(root: Path) -> Iterator[str]:
    """The API URL of the session's server (see the module docstring)."""
    lock, state = root / "prefect-server.lock", root / "prefect-server.json"
    with _locked(lock):
        info = json.loads(state.read_text()) if state.exists() else None
        if info is None or not healthy(info["url"]):
            pid, url, _ = start_server(root / "prefect-server-home")
            info = {"pid": pid, "url": url, "users": 0}
        info["users"] += 1
        state.write_text(json.dumps(info))
    try:
        yield str(info["url"])
    finally:
        with _locked(lock):
            current = json.loads(state.read_text())
            current["users"] -= 1
            if current["users"] <= 0:
                stop_server(int(current["pid"]))
                state.unlink()
            else:
                state.write_text(json.dumps(current))
