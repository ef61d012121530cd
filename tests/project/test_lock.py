"""infra/lock.txt, the exact versions infra/venv.sh installs: one pin per
package in each environment the lock serves, a pin for every requirement
pyproject.toml and infra/lock.in name, and this venv holding the lock's
versions of all the dev extra needs. Offline: the files and the installed
metadata only (docs/install.md)."""

from __future__ import annotations

import functools
import tomllib
from collections import Counter
from importlib import metadata

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT

LOCK = ROOT / "infra" / "lock.txt"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

#: The environments a universal lock for Python 3.11 and newer serves, by the
#: marker values that tell them apart: CPython on Linux, macOS and Windows.
PLATFORMS = {
    "linux": {"sys_platform": "linux", "os_name": "posix", "platform_system": "Linux"},
    "darwin": {"sys_platform": "darwin", "os_name": "posix", "platform_system": "Darwin"},
    "win32": {"sys_platform": "win32", "os_name": "nt", "platform_system": "Windows"},
}
PYTHONS = ("3.11.0", "3.11.7", "3.12.0", "3.13.0", "3.14.0")
ENVIRONMENTS = {
    f"{python} {platform}": {
        **default_environment(),
        **markers,
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "python_full_version": python,
        "python_version": python.rsplit(".", 1)[0],
        "implementation_version": python,
    }
    for python in PYTHONS
    for platform, markers in PLATFORMS.items()
}


@functools.cache
def lock_lines() -> tuple[Requirement, ...]:
    lines = (raw.split("#", 1)[0].strip() for raw in LOCK.read_text().splitlines())
    return tuple(Requirement(line) for line in lines if line)


def pins_in(environment: dict[str, str]) -> list[Requirement]:
    return [r for r in lock_lines() if r.marker is None or r.marker.evaluate(environment)]


def versions_in(environment: dict[str, str]) -> dict[str, str]:
    """The locked version of each package in ``environment``, by canonical name."""
    return {
        canonicalize_name(pin.name): next(iter(pin.specifier)).version
        for pin in pins_in(environment)
    }


def declared_requirements() -> list[str]:
    """Everything the lock must pin: the project's requirements and every
    extra's, the build backend, and the installers of infra/lock.in."""
    project = PYPROJECT["project"]
    extras = project["optional-dependencies"].values()
    tools = (ROOT / "infra" / "lock.in").read_text().splitlines()
    return [
        *project["dependencies"],
        *(line for extra in extras for line in extra),
        *PYPROJECT["build-system"]["requires"],
        *(line.split("#", 1)[0].strip() for line in tools if line.split("#", 1)[0].strip()),
    ]


def test_every_line_is_one_exact_version() -> None:
    lines = lock_lines()
    assert len(lines) > 100  # the whole environment, not the direct requirements alone
    for line in lines:
        assert line.url is None and not line.extras, line
        [specifier] = line.specifier
        assert specifier.operator == "==" and "*" not in specifier.version, line


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_one_pin_per_package_in_each_environment(environment: str) -> None:
    names = Counter(canonicalize_name(pin.name) for pin in pins_in(ENVIRONMENTS[environment]))
    assert [name for name, count in names.items() if count > 1] == []


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_every_declared_requirement_is_pinned_within_its_range(environment: str) -> None:
    values = ENVIRONMENTS[environment]
    locked = versions_in(values)
    unpinned, outside = [], []
    for line in declared_requirements():
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate(values):
            continue
        version = locked.get(canonicalize_name(requirement.name))
        if version is None:
            unpinned.append(line)
        elif not requirement.specifier.contains(version, prereleases=True):
            outside.append(f"{line} (locked: {version})")
    # Either: the lock is stale. Refresh it: bash infra/lock.sh (docs/install.md).
    assert unpinned == []
    assert outside == []


def installed_distributions() -> dict[str, metadata.Distribution]:
    """This environment's distributions by canonical name (the first on the path)."""
    found: dict[str, metadata.Distribution] = {}
    for dist in metadata.distributions():
        found.setdefault(canonicalize_name(dist.metadata["Name"]), dist)
    return found


def needed_by_dev_extra() -> dict[str, metadata.Distribution | None]:
    """Every distribution ``truereward[dev]`` needs here, following the
    installed metadata (requirements, their extras, their markers): None
    for one not installed."""
    installed = installed_distributions()
    found: dict[str, metadata.Distribution | None] = {}
    done: set[tuple[str, str]] = set()
    todo = [("truereward", "dev")]
    while todo:
        name, extra = todo.pop()
        key = canonicalize_name(name)
        dist = found[key] = installed.get(key)
        if dist is None:
            continue
        for wanted in ("", extra) if extra else ("",):
            if (key, wanted) in done:
                continue
            done.add((key, wanted))
            for line in dist.requires or []:
                requirement = Requirement(line)
                if requirement.marker is None or requirement.marker.evaluate({"extra": wanted}):
                    todo.append((requirement.name, ""))
                    todo.extend((requirement.name, more) for more in requirement.extras)
    return found


def test_this_venv_holds_the_locked_version_of_everything_the_dev_extra_needs() -> None:
    # The suite runs in the venv infra/test.sh made (TRUEREWARD_EXTRAS=dev).
    locked = versions_in(default_environment())
    needed = needed_by_dev_extra()
    del needed["truereward"]  # this clone, editable: never locked
    assert len(needed) > 100
    # The installers at theirs too: pip, and uv unless pip installed the venv
    # (TRUEREWARD_INSTALLER=pip).
    installers = {name: installed_distributions().get(name) for name in ("pip", "uv")}
    if installers["uv"] is None:
        del installers["uv"]
    wrong = {}
    for name, dist in {**needed, **installers}.items():
        installed = dist.version if dist is not None else None
        if installed != locked.get(name):
            wrong[name] = f"installed {installed}, locked {locked.get(name)}"
    assert wrong == {}
