"""The repository's scripts (``infra/*.py``), imported as modules to test
their functions."""

from __future__ import annotations

import functools
import importlib.util
import sys
from types import ModuleType

from tests.conftest import ROOT


@functools.cache
def load_script(relative: str) -> ModuleType:
    """The script at ``relative`` (to the repository's root), imported once,
    under its file's stem (dataclasses look their module up in
    ``sys.modules``, so it is registered there)."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module
