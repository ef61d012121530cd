"""Shared fixtures."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

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
