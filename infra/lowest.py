"""The helper of infra/lowest.sh: what to resolve at the lowest versions, and
whether they were had.

    python infra/lowest.py requirements ENV OUT   # the requirements of ENV, one a line
    python infra/lowest.py pins ENV OUT           # name==floor for those ENV holds to account
    python infra/lowest.py floors ENV             # run by the venv: every floor installed?
    python infra/lowest.py imports ENV            # run by the venv: every module imports?

ENV is one of :data:`ENVIRONMENTS`, each made of pyproject.toml's
requirements (the project's and those of the extras it names, as they are
written there): ``uv pip compile --resolution lowest-direct`` takes the
lowest version each of them allows and the newest of everything else that
fits, with ``pins`` as constraints, so that floors which cannot be installed
together fail the resolution, naming them, instead of being quietly lifted.

``floors`` prints every requirement's floor and installed version and exits
1 naming each one ENV holds to account that is not installed at its floor.
``imports`` imports every module of truereward and flows/, and the
top-level modules of the extras' requirements (truereward imports several
only when used: prefect_dask, s3fs, httpx ...; the tests import the dev
extra's), and exits 1 naming those that fail. ``requirements`` and
``pins`` need the standard library alone (they run before any venv has
``packaging``).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent


class Environment(NamedTuple):
    #: Its extras. The dev extra's requirements come without those of the
    #: extras not named (dev repeats every extra's).
    extras: tuple[str, ...]
    #: The requirements whose floors it installs; None: every one.
    held: frozenset[str] | None


#: The prefect extra raises pydantic's floor over the core's, and prefect-aws
#: needs a newer aiobotocore (so botocore) than the s3 extra's floor: no one
#: environment holds every floor. ``core`` holds all but Prefect's (the core,
#: the S3 and fsspec extras, the test tools); ``prefect`` holds Prefect's
#: (prefect, prefect-dask, prefect-aws, and pydantic at the prefect extra's
#: floor), with whatever they lift.
ENVIRONMENTS = {
    "core": Environment(
        ("pytest", "fsspec", "s3", "judge", "checks", "xlsx", "images", "dev"), None
    ),
    "prefect": Environment(
        ("pytest", "fsspec", "s3", "judge", "checks", "xlsx", "images", "prefect", "aws", "dev"),
        frozenset({"prefect", "prefect-dask", "prefect-aws", "pydantic"}),
    ),
}


def _name(line: str) -> str:
    """The canonical project name a requirement line starts with."""
    found = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line)
    if found is None:
        raise ValueError(f"not a requirement: {line!r}")
    return re.sub(r"[-_.]+", "-", found.group(1)).lower()


def _lines(environment: str) -> list[str]:
    """The requirement lines of ``environment`` as pyproject.toml writes them,
    each once, in order."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    chosen = ENVIRONMENTS[environment].extras
    kept = list(project["dependencies"])
    for extra in chosen:
        if extra != "dev":
            kept += [line for line in extras[extra] if line not in kept]
    if "dev" in chosen:
        others = {line for name, lines in extras.items() if name not in chosen for line in lines}
        kept += [line for line in extras["dev"] if line not in kept and line not in others]
    return kept


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version.split("post")[0]))


def floors(environment: str) -> dict[str, str]:
    """The floor of each requirement of ``environment`` that has one (its
    ``>=``; the highest when two lines name the same project)."""
    found: dict[str, str] = {}
    for line in _lines(environment):
        low = re.search(r">=\s*([0-9][^,;\s]*)", line)
        if low is None:
            continue
        name, version = _name(line), low.group(1)
        if name not in found or _release(version) > _release(found[name]):
            found[name] = version
    return found


def held(environment: str) -> dict[str, str]:
    """The floors ``environment`` must install."""
    keep = ENVIRONMENTS[environment].held
    return {name: low for name, low in floors(environment).items() if keep is None or name in keep}


def check_floors(environment: str) -> int:
    from packaging.version import Version

    accountable = held(environment)
    wrong = []
    for name, low in floors(environment).items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = "not installed"
        at_floor = installed != "not installed" and Version(installed) == Version(low)
        lifted = "" if at_floor or name in accountable else "  (lifted here, held in another)"
        print(f"{name:22} floor {low:22} installed {installed}{lifted}")
        if installed == "not installed" or (name in accountable and not at_floor):
            wrong.append(f"{name}>={low}: {installed}")
    if wrong:
        print(f"lowest ({environment}): not installed at its floor:", file=sys.stderr)
        for item in wrong:
            print(f"  {item}", file=sys.stderr)
        return 1
    return 0


def _top_level(name: str) -> list[str]:
    """The importable top-level modules of the installed distribution ``name``."""
    files = metadata.distribution(name).files or []
    found = set()
    for item in files:
        head, *rest = item.parts
        if head.endswith((".dist-info", ".data", ".pth")) or head in ("..", "__pycache__"):
            continue
        if rest == ["__init__.py"] or (not rest and head.endswith(".py")):
            found.add(head.removesuffix(".py"))
    return sorted(found)


def check_imports(environment: str) -> int:
    sys.path.insert(0, str(ROOT))
    import flows
    import truereward

    names = dict.fromkeys(_name(line) for line in _lines(environment))
    modules = [module for name in names for module in _top_level(name)]
    for package in (truereward, flows):
        for found in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not found.name.endswith("__main__"):  # which runs the command line
                modules.append(found.name)
    if "prefect" not in names:  # what needs Prefect is tried where it is installed
        modules = [m for m in modules if not m.startswith(("truereward.prefect", "flows"))]
    failed = []
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as error:  # noqa: BLE001 - any failure to import is the finding
            failed.append(f"{module}: {type(error).__name__}: {error}")
    print(f"imported {len(modules) - len(failed)} of {len(modules)} modules")
    for item in failed:
        print(f"  {item}", file=sys.stderr)
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    match argv:
        case ["requirements", environment, out]:
            Path(out).write_text("".join(f"{line}\n" for line in _lines(environment)))
            return 0
        case ["pins", environment, out]:
            pins = held(environment).items()
            Path(out).write_text("".join(f"{name}=={low}\n" for name, low in pins))
            return 0
        case ["floors", environment]:
            return check_floors(environment)
        case ["imports", environment]:
            return check_imports(environment)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
