"""Module paths from before truereward's root was grouped into packages
(``truereward.cases`` is now ``truereward.record.cases``): importing an old
path gives the module at its new one, with a ``DeprecationWarning``. An
alias, not a copy: classes keep their identity and old pickles still load.
Type checkers do not see the old paths; code should import the new ones.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from types import FrameType, ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

__all__ = ["MOVED", "install"]

#: Old name under ``truereward`` -> its module's path under ``truereward`` now.
MOVED = {
    "atomic": "util.atomic",
    "bounded": "grade.bounded",
    "bridge_codes": "codes.bridge",
    "cases": "record.cases",
    "caseset": "record.caseset",
    "check_codes": "codes.checks",
    "ctrfreport": "grade.ctrfreport",
    "document": "grade.document",
    "exceptions": "util.exceptions",
    "fetch": "util.fetch",
    "files": "grade.files",
    "frozen": "util.frozen",
    "jsonvalues": "util.jsonvalues",
    "lazy": "util.lazy",
    "ledger": "grade.ledger",
    "readback": "grade.readback",
    "refusal": "record.refusal",
    "registry": "util.registry",
    "safefile": "util.safefile",
    "score_codes": "codes.scores",
    "scoring": "record.scoring",
    "segments": "util.segments",
    "strictjson": "util.strictjson",
    "target": "util.target",
    "taskspec": "record.taskspec",
    "trust": "grade.trust",
    "urls": "util.urls",
    "validation": "record.validation",
    "versions": "grade.versions",
}

_PACKAGE = __name__.rpartition(".")[0].rpartition(".")[0]


class _Alias:
    """Loads an old path as the module at its new one."""

    def __init__(self, new: str) -> None:
        self._new = new
        self._spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self._new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import machinery gave the module the alias's spec; the module
        # keeps its own (its relative imports resolve from it).
        module.__spec__ = self._spec


class _Finder:
    """Finds ``truereward.<old name>`` after the package's own finders did not."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        parent, _, name = fullname.rpartition(".")
        if parent != _PACKAGE or name not in MOVED:
            return None
        new = f"{_PACKAGE}.{MOVED[name]}"
        warnings.warn(
            f"{fullname} is deprecated; import {new}",
            DeprecationWarning,
            stacklevel=_caller_level(),
        )
        # A loader by its methods: importlib.abc is not imported for the type.
        return importlib.machinery.ModuleSpec(fullname, cast("Loader", _Alias(new)))


def _caller_level() -> int:
    """The stack level of the first frame outside the import machinery and
    the package's ``__init__`` (whose ``__getattr__`` imports old names).
    ``warnings`` itself skips the frozen importlib frames when it counts."""
    inside = {__file__, importlib.__file__, sys.modules[_PACKAGE].__file__}
    frame: FrameType | None = sys._getframe(2)
    level = 2
    while frame is not None:
        name = frame.f_code.co_filename
        if name in inside:
            level += 1
        elif not name.startswith("<frozen importlib"):
            break
        frame = frame.f_back
    return level


def install() -> None:
    """Let old paths import (once per process; after the regular finders)."""
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.append(_Finder())
