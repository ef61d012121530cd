"""The tests' layout (docs/design.md, "Tests"): a directory under ``tests/``
per package (or top-level module) of ``truereward`` (and ``project`` for
the repository itself),
test modules only there, and every helper two test modules share in
``tests/support/``, never imported from another test module."""

from __future__ import annotations

import ast

from tests.conftest import ROOT

TESTS = ROOT / "tests"
OWN = {"project", "support", "data"}


def test_every_test_directory_is_a_package_or_the_project() -> None:
    packages = {
        path.name if path.is_dir() else path.stem
        for path in (ROOT / "truereward").iterdir()
        if (path / "__init__.py").exists() or path.suffix == ".py"
    }
    found = {path.name for path in TESTS.iterdir() if path.is_dir() and path.name[0] != "."}
    strays = found - packages - OWN - {"__pycache__"}
    assert not strays, f"test directories that mirror no package: {sorted(strays)}"
    loose = sorted(path.name for path in TESTS.glob("test_*.py"))
    assert not loose, f"test modules outside a package's directory: {loose}"


def test_no_test_module_imports_from_another() -> None:
    found = []
    for path in sorted(TESTS.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                last = node.module.rsplit(".", 1)[-1]
                if node.module.startswith("tests.") and last.startswith("test_"):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.module}")
    assert not found, "helpers belong in tests/support/:\n" + "\n".join(found)
