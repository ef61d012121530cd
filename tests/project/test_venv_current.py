"""infra/venv_current.py: infra/venv.sh leaves a current venv alone, and only
a current one."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from tests.conftest import ROOT
from tests.support.scripts import load_script

SCRIPT = ROOT / "infra" / "venv_current.py"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return load_script("infra/venv_current.py")


def current(root: Path, extras: str) -> int:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(root), extras], capture_output=True, check=False
    ).returncode


def clone_of(root: Path, where: Path) -> Path:
    """The three files the check reads, copied."""
    (where / "truereward").mkdir(parents=True)
    (where / "infra").mkdir()
    shutil.copy(root / "pyproject.toml", where)
    shutil.copy(root / "truereward" / "_version.py", where / "truereward")
    shutil.copy(root / "infra" / "lock.txt", where / "infra")
    return where


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize("edit", ["version", "entry point", "lock", "installer's lock"])
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
    elif edit in ("lock", "installer's lock"):
        # Another pin for a package the dev extra needs (pydantic, through
        # the project; pip, the installer), all else unchanged.
        name = "pydantic" if edit == "lock" else "pip"
        path = clone / "infra" / "lock.txt"
        line = f"{name}=={metadata.version(name)}\n"
        assert line in path.read_text()
        path.write_text(path.read_text().replace(line, f"{name}==0.0.1\n"))
    else:
        path = clone / "pyproject.toml"
        line = 'rows = "truereward.readers.rows:READER"'
        assert line in path.read_text()
        more = 'more = "truereward.readers.rows:READER"'
        path.write_text(path.read_text().replace(line, f"{line}\n{more}"))
    assert not script.current(clone, ["dev"])


def test_the_lock_is_read_for_this_interpreter_and_platform(
    script: ModuleType, tmp_path: Path
) -> None:
    lock = tmp_path / "lock.txt"
    lock.write_text(
        "# via\n"
        "numpy==1.0 ; python_full_version < '3.11'\n"
        "numpy==2.0 ; python_full_version >= '3.11'\n"
        "    # via scipy\n"
        "pywin32==312 ; sys_platform == 'nosuch'\n"
        "Ruamel.Yaml==0.19.1\n"
    )
    assert {name: str(pin) for name, pin in script.locked_versions(lock).items()} == {
        "numpy": "==2.0",
        "ruamel-yaml": "==0.19.1",
    }
    assert script.locked_versions(tmp_path / "none.txt") == {}


def test_a_requirement_the_lock_does_not_pin_is_said_and_checked_by_its_range(
    script: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    pydantic = metadata.version("pydantic")
    checker = script.Checker({"pydantic": SpecifierSet(f"=={pydantic}")})
    assert checker.satisfied(Requirement("pydantic>=2"))  # pydantic-core: not pinned here
    assert "pins no pydantic-core" in capsys.readouterr().err
    assert not script.Checker({"pydantic": SpecifierSet("==0.0.1")}).satisfied(
        Requirement("pydantic>=0")
    )
