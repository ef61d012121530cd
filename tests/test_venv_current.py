"""infra/venv_current.py: infra/venv.sh leaves a current venv alone, and only
a current one."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement

from tests.conftest import ROOT

SCRIPT = ROOT / "infra" / "venv_current.py"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("venv_current", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def current(root: Path, extras: str) -> int:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(root), extras], capture_output=True, check=False
    ).returncode


def clone_of(root: Path, where: Path) -> Path:
    """The two files the check reads, copied."""
    (where / "truereward").mkdir(parents=True)
    shutil.copy(root / "pyproject.toml", where)
    shutil.copy(root / "truereward" / "_version.py", where / "truereward")
    return where


def test_this_clone_installed_with_the_dev_extra_is_current() -> None:
    # The suite runs in the venv infra/test.sh made: the dev extra, editable from ROOT.
    assert current(ROOT, "dev") == 0
    assert current(ROOT, "") == 0
    assert current(ROOT, "prefect,s3") == 0  # dev holds every other extra's requirements


def test_an_unknown_extra_or_another_clone_is_not_current(tmp_path: Path) -> None:
    assert current(ROOT, "nosuch") == 1
    assert current(clone_of(ROOT, tmp_path / "clone"), "dev") == 1  # installed from ROOT


def test_requirements_are_checked_with_versions_extras_and_markers(script: ModuleType) -> None:
    checker = script.Checker()
    assert checker.satisfied(Requirement("pydantic>=2"))
    assert not checker.satisfied(Requirement("pydantic>=99"))
    assert not checker.satisfied(Requirement("no-such-distribution-here"))
    assert checker.satisfied(Requirement("moto[server]>=5"))
    assert checker.satisfied(Requirement('no-such-distribution-here; python_version < "3"'))


@pytest.mark.parametrize("edit", ["version", "entry point"])
def test_a_clone_whose_files_moved_on_is_not_current(
    script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: str
) -> None:
    # Taken as if the installed project came from the clone: only the edit differs.
    real = script.installed_editable_from
    monkeypatch.setattr(script, "installed_editable_from", lambda root, dist: real(ROOT, dist))
    clone = clone_of(ROOT, tmp_path / "clone")
    assert script.current(clone, ["dev"])
    if edit == "version":
        path = clone / "truereward" / "_version.py"
        path.write_text(path.read_text().replace('__version__ = "', '__version__ = "9'))
    else:
        path = clone / "pyproject.toml"
        line = 'rows = "truereward.readers.rows:READER"'
        assert line in path.read_text()
        more = 'more = "truereward.readers.rows:READER"'
        path.write_text(path.read_text().replace(line, f"{line}\n{more}"))
    assert not script.current(clone, ["dev"])
