"""Fixtures of the grading and Prefect tests (a real Prefect server for the
session), registered for the whole suite by ``tests/conftest.py``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .server import shared_server


@pytest.fixture(scope="session")
def prefect_api(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Iterator[str]:
    """The API URL of a real ``prefect server start`` shared by the session
    (and its xdist workers)."""
    base = tmp_path_factory.getbasetemp()
    root = base if worker_id == "master" else base.parent
    with shared_server(root) as url:
        yield url


@pytest.fixture
def prefect_client_settings(prefect_api: str, tmp_path: Path) -> Iterator[str]:
    """This process talks to the session's server (not the ephemeral API)
    while the test runs."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: prefect_api}):
        yield prefect_api
        # Send the test's flow and task logs while the server is still there.
        from prefect.logging.handlers import APILogHandler

        APILogHandler().flush()
