"""Whether this interpreter's environment already holds what infra/venv.sh
would install, so that the script can leave it alone.

    .venv/bin/python infra/venv_current.py ROOT [EXTRAS]

Exit 0 when the project at ROOT is installed editable from ROOT, with the
version and entry points its files declare now, and every requirement of the
project and of the named extras (comma-separated) is installed at a version
its specifier accepts and at the version ROOT/infra/lock.txt pins for it (for
this interpreter and platform), following the extras and requirements of
those requirements in turn; the installers too: pip at its locked version,
and uv, when the venv has it, at its own. Exit 1 otherwise (then venv.sh
installs): a lock that pins another version of anything the venv needs makes
it install again, while a change elsewhere in the lock (a package of an extra
not asked for, a line for another platform) leaves the venv alone. A
requirement the lock does not pin is checked against its specifier alone,
with a word on stderr: the lock is stale (bash infra/lock.sh).

Reinstalling an editable project that is already current is not free: the
installer removes it and puts it back, and a process starting in between
cannot import it.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

try:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import SpecifierSet
    from packaging.utils import canonicalize_name
except ImportError:  # a venv without packaging still has pip's copy
    from pip._vendor.packaging.requirements import InvalidRequirement, Requirement
    from pip._vendor.packaging.specifiers import SpecifierSet
    from pip._vendor.packaging.utils import canonicalize_name

LOCK = Path("infra") / "lock.txt"

#: Installed by infra/venv.sh beside the project, at the versions the lock pins.
INSTALLERS = ("pip", "uv")


def locked_versions(lock: Path) -> dict[str, SpecifierSet]:
    """Each package's pin (``==version``) in ``lock``, a requirements file
    written by ``uv pip compile``, for this interpreter and platform: lines
    whose marker does not hold here are left out. No lock, no pins."""
    try:
        text = lock.read_text()
    except FileNotFoundError:
        return {}
    pins: dict[str, SpecifierSet] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if requirement.marker is None or requirement.marker.evaluate():
            pins[canonicalize_name(requirement.name)] = requirement.specifier
    return pins


def installed_editable_from(root: Path, dist: metadata.Distribution) -> bool:
    """Whether ``dist`` was installed with ``pip install -e`` from ``root``."""
    text = dist.read_text("direct_url.json")
    if not text:
        return False
    direct = json.loads(text)
    editable = bool(direct.get("dir_info", {}).get("editable"))
    return editable and direct.get("url") == root.as_uri()


def declared_entry_points(project: dict[str, Any]) -> set[tuple[str, str, str]]:
    """(group, name, value) of every entry point and script ``pyproject.toml`` declares."""
    declared = {
        ("console_scripts", name, value) for name, value in project.get("scripts", {}).items()
    }
    for group, items in project.get("entry-points", {}).items():
        declared |= {(group, name, value) for name, value in items.items()}
    return declared


class Checker:
    """Requirements checked against the environment, each (name, extra) once."""

    def __init__(self, locked: dict[str, SpecifierSet] | None = None) -> None:
        self.seen: set[tuple[str, str]] = set()
        self.locked = locked or {}
        self.unlocked: set[str] = set()  # needed, not pinned: said once each

    def satisfied(self, requirement: Requirement, extra: str = "") -> bool:
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            return True
        try:
            dist = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            return False
        if not requirement.specifier.contains(dist.version, prereleases=True):
            return False
        if not self.at_locked_version(dist):
            return False
        return all(
            self.dependencies_satisfied(dist, wanted) for wanted in ("", *requirement.extras)
        )

    def at_locked_version(self, dist: metadata.Distribution) -> bool:
        if not self.locked:
            return True
        name = canonicalize_name(dist.metadata["Name"])
        pin = self.locked.get(name)
        if pin is None:
            if name not in self.unlocked:
                self.unlocked.add(name)
                stale = f"{LOCK} pins no {name}: refresh it (bash infra/lock.sh)"
                print(f"infra/venv_current.py: {stale}", file=sys.stderr)
            return True
        return pin.contains(dist.version, prereleases=True)

    def dependencies_satisfied(self, dist: metadata.Distribution, extra: str) -> bool:
        key = (canonicalize_name(dist.metadata["Name"]), extra)
        if key in self.seen:
            return True
        self.seen.add(key)
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None and extra:
                continue  # a base requirement, checked with extra ""
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
                continue
            if not self.satisfied(requirement, extra):
                return False
        return True


def current(root: Path, extras: list[str]) -> bool:
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    try:
        dist = metadata.distribution(project["name"])
    except metadata.PackageNotFoundError:
        return False
    if not installed_editable_from(root, dist):
        return False
    version = re.search(
        r'^__version__ = "([^"]+)"', (root / "truereward" / "_version.py").read_text(), re.M
    )
    if version is None or dist.version != version.group(1):
        return False
    if {(ep.group, ep.name, ep.value) for ep in dist.entry_points} != declared_entry_points(
        project
    ):
        return False
    optional = project.get("optional-dependencies", {})
    if any(extra not in optional for extra in extras):
        return False
    lines = [*project.get("dependencies", []), *(line for e in extras for line in optional[e])]
    checker = Checker(locked_versions(root / LOCK))
    if not all(checker.satisfied(Requirement(line)) for line in lines):
        return False
    return all(installer_current(checker, name) for name in INSTALLERS)


def installer_current(checker: Checker, name: str) -> bool:
    """pip, at its locked version; uv, when installed, at its own (a venv
    that pip installed has none, and needs none)."""
    if name not in checker.locked:
        return True
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return name != "pip"
    return checker.at_locked_version(dist)


def main(argv: list[str]) -> int:
    root = Path(argv[1]).resolve()
    extras = [extra.strip() for extra in (argv[2] if len(argv) > 2 else "").split(",")]
    try:
        return 0 if current(root, [extra for extra in extras if extra]) else 1
    except Exception:  # noqa: BLE001 - anything unexpected: let pip decide
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
