"""truereward.util.exceptions: one root for every exception class the package
defines, and one error for a name no registry knows."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import truereward
from truereward.codes import lookup
from truereward.criteria.registry import get_criterion
from truereward.folding import get_scheme
from truereward.readers import get_reader
from truereward.util.exceptions import TruerewardError, UnknownName


def _modules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.walk_packages(truereward.__path__, prefix="truereward.")
        # The rewardkit probe runs alone in a task's interpreter: it imports
        # nothing of the package, so its one exception cannot share the root.
        if info.name not in ("truereward.__main__", "truereward.readers.rewardkit_probe")
    )


def test_every_exception_class_of_the_package_derives_from_the_root() -> None:
    defined: list[type[BaseException]] = []
    strays: list[str] = []
    for name in _modules():
        module = importlib.import_module(name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            # Errors only: an interrupt (the CLI's SIGTERM as KeyboardInterrupt) is not one.
            if value.__module__ != name or not issubclass(value, Exception):
                continue
            defined.append(value)
            if not issubclass(value, TruerewardError):
                strays.append(f"{name}.{value.__qualname__}")
    assert not strays, f"exception classes outside TruerewardError: {strays}"
    # The walk found the package's exceptions, not an empty list that passes.
    assert len(defined) > 30
    assert UnknownName in defined


@pytest.mark.parametrize(
    ("find", "kind"),
    [
        (get_reader, "reader"),
        (get_scheme, "scheme"),
        (lookup, "refusal code"),
        (get_criterion, "criterion"),
    ],
)
def test_every_registry_refuses_an_unknown_name_with_the_one_error(find: object, kind: str) -> None:
    assert callable(find)
    with pytest.raises(UnknownName) as caught:
        find("no-such-name")
    error = caught.value
    assert (error.kind, error.name) == (kind, "no-such-name")
    assert "no-such-name" in str(error)
    # Callers of the earlier errors catch it still.
    assert isinstance(error, LookupError)
    assert isinstance(error, ValueError)
    assert isinstance(error, TruerewardError)


def test_the_root_is_exported_from_the_package() -> None:
    assert truereward.TruerewardError is TruerewardError
    assert "TruerewardError" in truereward.__all__
