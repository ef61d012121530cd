"""infra/code_lines.py: code lines are those a code token touches; blank
lines, comments and docstrings (module, class, function) are not code; a
string that is not a docstring counts every line it spans."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import ROOT
from tests.support.scripts import load_script


@pytest.fixture(scope="module")
def lines() -> ModuleType:
    return load_script("infra/code_lines.py")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("", 0),
        ("x = 1\n\n\ny = 2\n", 2),
        ('"""Module.\n\nMore.\n"""\n# a comment\nx = 1  # after code\n', 1),
        ('class A:\n    """Doc\n    on two lines."""\n\n    x = 1\n', 2),
        ('def f() -> str:\n    """Doc."""\n    return """not a\ndocstring"""\n', 3),
        ('async def g() -> None:\n    """Doc."""\n', 1),
        ("x = (\n    1,\n    # inside\n    2,\n)\n", 4),
        ('x = 1\n"""a string statement after code is not a docstring"""\n', 2),
    ],
)
def test_count_source(lines: ModuleType, source: str, expected: int) -> None:
    assert lines.count_source(source) == expected


def test_the_command_counts_a_tree_by_package_and_in_total(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "a").mkdir(parents=True)
    (tmp_path / "pkg" / "b").mkdir()
    (tmp_path / "pkg" / "a" / "m.py").write_text('"""Doc."""\nx = 1\ny = 2\n')
    (tmp_path / "pkg" / "b" / "n.py").write_text("# only a comment\nz = 3\n")
    (tmp_path / "pkg" / "top.py").write_text("w = 4\n")
    (tmp_path / "pkg" / "empty").mkdir()
    ran = subprocess.run(
        [sys.executable, str(ROOT / "infra" / "code_lines.py"), "--by-package", "pkg"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert ran.stdout.split("\n") == [
        f"{2:7d} {Path('pkg', 'a')}",
        f"{1:7d} {Path('pkg', 'b')}",
        f"{4:7d} total",
        "",
    ]
