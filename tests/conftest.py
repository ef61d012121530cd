"""Shared fixtures."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.support.s3server import AtomicMotoServer, client
from tests.support.server import api_cert_file

#: pytester runs the plugin's sessions in process (tests/plugin/test_plugin.py);
#: the Prefect server fixtures serve tests/grading and tests/prefect alike.
pytest_plugins = ["pytester", "tests.support.prefect_fixtures"]

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
# The README's test command and CI: the same examples on every run
# (derandomized), so a property that fails once fails every time, on any
# machine; a failure found elsewhere is kept as an @example in its test.
settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# The API clients of this process too (tests/support/server.py, api_cert_file),
# before Prefect reads its settings.
os.environ.setdefault("PREFECT_API_SSL_CERT_FILE", str(api_cert_file()))

#: The project root, for tests that run the command line or read shipped files.
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def row() -> Callable[..., dict[str, Any]]:
    """Build a row dict: ``row("a", "fail_to_pass", "pass", why=...)``."""

    def make(
        case_id: str, kind: str = "fail_to_pass", verdict: str = "pass", **extra: Any
    ) -> dict[str, Any]:
        built: dict[str, Any] = {"id": case_id, "kind": kind, "verdict": verdict}
        if verdict == "ungradable":
            built["code"] = extra.pop("code", "CASE_NOT_GRADED")
        built.update(extra)
        return built

    return make


# --- a real S3 API on loopback (moto's server) ------------------------------------------------


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """moto's S3 server on 127.0.0.1, a free port, for the whole session,
    answering one request at a time (:class:`AtomicMotoServer`)."""
    server = AtomicMotoServer()
    yield server.start()
    server.stop()


def s3_options(endpoint: str, **config: Any) -> dict[str, Any]:
    """s3fs storage options for a loopback S3 endpoint, dummy credentials."""
    options: dict[str, Any] = {
        "key": "testing",
        "secret": "testing",
        "endpoint_url": endpoint,
        "client_kwargs": {"region_name": "us-east-1"},
    }
    if config:
        options["config_kwargs"] = config
    return options


@pytest.fixture
def s3_client(s3_endpoint: str) -> Any:
    """A boto3 client on the same server, for looking at what was published."""
    return client(s3_endpoint)


@pytest.fixture
def bucket(s3_client: Any, request: pytest.FixtureRequest) -> str:
    """A fresh bucket for one test."""
    import re

    name = "t-" + re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[:50].strip("-")
    name = f"{name}-{os.getpid()}"[:63]
    s3_client.create_bucket(Bucket=name)
    return name


@pytest.fixture
def memory_root() -> Iterator[str]:
    """A fresh ``memory://`` prefix, removed afterwards."""
    import uuid

    import fsspec  # the dev extra installs it: a missing fsspec fails these tests loudly

    root = f"memory://t-{uuid.uuid4().hex}"
    yield root
    fs = fsspec.filesystem("memory")
    if fs.exists(root):
        fs.rm(root, recursive=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The benchmarks' smoke runs (marked ``bench``) only when ``-m`` names
    them (``bash infra/test.sh -m bench``, a CI step of its own): they
    measure nothing here and are most of a run's CPU.

    The tests marked ``longest`` (minutes each) first, each followed by a
    quick one, then the rest in their order. With ``--maxschedchunk 1``
    (infra/test.sh) pytest-xdist hands each worker two tests to begin with
    and then one at a time, so every long test starts at once, on a worker
    of its own, and the short ones fill the others: the suite takes about
    as long as its longest test or its share of the work, not their sum."""
    if "bench" not in (config.option.markexpr or ""):
        benches = [item for item in items if item.get_closest_marker("bench")]
        if benches:
            config.hook.pytest_deselected(items=benches)
            items[:] = [item for item in items if not item.get_closest_marker("bench")]
    longest = [item for item in items if item.get_closest_marker("longest")]
    rest = [item for item in items if not item.get_closest_marker("longest")]
    order: list[pytest.Item] = []
    for index, item in enumerate(longest):
        order.append(item)
        if index < len(rest):
            order.append(rest[index])
    order += rest[len(longest) :]
    items[:] = order
