"""Real test reports, made by running the real tools: pytest's JUnit XML
writer and pytest-json-ctrf (current, and the 0.3.x that Harbor's task
template pins, installed with ``pip install --target``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.installs import install_target

#: A test module with every outcome a report can carry.
SUITE = textwrap.dedent("""
    import pytest

    class TestMath:
        @pytest.mark.parametrize("n", [1, 2])
        def test_param(self, n):
            assert n == 1

        def test_method(self):
            pass

    def test_pass():
        pass

    def test_fail():
        assert 1 == 2, "one is not two"

    @pytest.mark.skip(reason="not today")
    def test_skip():
        pass

    @pytest.mark.xfail
    def test_xfail():
        assert 0

    def test_xfail_imperative():
        pytest.xfail("not yet")

    @pytest.mark.xfail(raises=ZeroDivisionError)
    def test_xfail_raises():
        1 / 0

    def test_skip_imperative():
        pytest.skip("not 'here' \\"now\\"")

    @pytest.mark.xfail
    def test_xpass():
        pass

    @pytest.mark.xfail(strict=True)
    def test_xpass_strict():
        pass

    @pytest.fixture
    def broken():
        raise RuntimeError("setup broke")

    def test_error(broken):
        pass
""")

#: What each node id of SUITE did.
OUTCOMES = {
    "tests/test_suite.py::TestMath::test_param[1]": "passed",
    "tests/test_suite.py::TestMath::test_param[2]": "failed",
    "tests/test_suite.py::TestMath::test_method": "passed",
    "tests/test_suite.py::test_pass": "passed",
    "tests/test_suite.py::test_fail": "failed",
    "tests/test_suite.py::test_skip": "skipped",
    "tests/test_suite.py::test_xfail": "xfail",
    "tests/test_suite.py::test_xfail_imperative": "xfail",
    "tests/test_suite.py::test_xfail_raises": "xfail",
    "tests/test_suite.py::test_skip_imperative": "skipped",
    "tests/test_suite.py::test_xpass": "passed",
    "tests/test_suite.py::test_xpass_strict": "failed",
    "tests/test_suite.py::test_error": "error",
}


def write_suite(where: Path) -> Path:
    """A project with tests/test_suite.py; returns the project root."""
    (where / "tests").mkdir(parents=True, exist_ok=True)
    (where / "tests" / "test_suite.py").write_text(SUITE)
    return where


def run_pytest(project: Path, *args: str, pythonpath: str | None = None) -> None:
    """Run pytest on the project (its exit status is the suite's, ignored)."""
    env = None
    if pythonpath is not None:
        import os

        env = {**os.environ, "PYTHONPATH": pythonpath}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "-o",
            "addopts=",
            *args,
        ],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if result.returncode not in (0, 1):
        raise RuntimeError(
            f"pytest failed to run ({result.returncode}): {result.stderr}{result.stdout[-2000:]}"
        )


def install_legacy_ctrf(where: Path) -> Path:
    """pytest-json-ctrf 0.3.5 in a directory of its own; fails loudly."""
    return install_target("pytest-json-ctrf==0.3.5", where / "ctrf-0.3.5")
