"""infra/check_prose.py: a measurement in code or pyproject comments, a long
module docstring or a broken doc link fails, naming file and line; a bound or
setting passes (docs/design.md, "Prose in code")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import ROOT
from tests.support.scripts import load_script

SCRIPT = ROOT / "infra" / "check_prose.py"


@pytest.fixture(scope="module")
def checker() -> ModuleType:
    return load_script("infra/check_prose.py")


def tree(root: Path, module: str, pyproject: str = "", readme: str = "# r\n") -> Path:
    (root / "truereward").mkdir(parents=True)
    (root / "flows").mkdir()
    (root / "docs").mkdir()
    (root / "docs" / "design.md").write_text("# design\n")
    (root / "truereward" / "mod.py").write_text(module)
    (root / "pyproject.toml").write_text(pyproject)
    (root / "README.md").write_text(readme)
    return root


def problems(checker: ModuleType, root: Path) -> list[str]:
    return [str(problem) for problem in checker.check(root, pending={}, allowed={})]


@pytest.mark.parametrize(
    ("module", "line", "phrase"),
    [
        ('"""Mod."""\n\n# 164 runs/s on two cores\nX = 1\n', 3, "164 runs/s"),
        ('"""Mod.\n\nIt is faster (0.86x the other).\n"""\n', 3, "0.86x"),
        ('"""Mod."""\n\n\ndef f() -> None:\n    """Peaked at 654 MB."""\n', 5, "654 MB"),
        ('"""Mod."""\n# The sweep took\n# 20.8 s with tags.\nX = 1\n', 3, "20.8 s"),
        ('"""Mod."""\n# 73 % of the samples in submit.\nX = 1\n', 2, "73 %"),
        ('"""Mod."""\n# under 300 MB (about 50 MB measured).\nX = 1\n', 2, "50 MB"),
        ('"""Mod."""\n# created 30 s after the first.\nX = 1\n', 2, "30 s"),
    ],
)
def test_a_measurement_fails_naming_file_and_line(
    checker: ModuleType, tmp_path: Path, module: str, line: int, phrase: str
) -> None:
    found = problems(checker, tree(tmp_path, module))
    assert len(found) == 1, found
    assert found[0].startswith(f"truereward/mod.py:{line}: states a measurement ({phrase!r})")


@pytest.mark.parametrize(
    "module",
    [
        '"""Mod."""\n\nMAX_BYTES = 64 * 2**20  # 64 MiB\n',
        '"""Mod."""\n\n#: Files over 64 MiB are refused.\nLIMIT = 64 << 20\n',
        '"""Mod."""\n\n\ndef f(timeout: float = 5) -> None:\n    """Answers within 5 s."""\n',
        '"""Mod."""\n\n# Each regex gets 1 s by default.\nX = 1\n',
        '"""Mod."""\n\n# Read at most 1 MiB per stream; retried after 2 s.\nX = 1\n',
        '"""Mod."""\n\nFMT = "{rate:.0%} passed"  # a format, not prose\n',
        '"""Mod."""\n\nCSS = "svg { max-width: 100%; }"\n',
        '"""Mod."""\n\n# 0x1F is a mask; 2 x 50 MiB is the threshold.\nX = 0x1F\n',
    ],
)
def test_a_bound_or_a_setting_passes(checker: ModuleType, tmp_path: Path, module: str) -> None:
    assert problems(checker, tree(tmp_path, module)) == []


def test_a_measurement_in_a_pyproject_comment_fails(checker: ModuleType, tmp_path: Path) -> None:
    pyproject = '[project]\nname = "x"  # the name\n# orjson: 3.1x faster dumps\n'
    found = problems(checker, tree(tmp_path, '"""Mod."""\n', pyproject))
    assert [p.split(" (")[0] for p in found] == ["pyproject.toml:3: states a measurement"]


def test_a_long_module_docstring_fails_and_one_of_the_limit_passes(
    checker: ModuleType, tmp_path: Path
) -> None:
    limit = checker.MAX_MODULE_DOCSTRING
    at_limit = '"""Mod.\n' + "line\n" * (limit - 2) + '"""\n'
    assert problems(checker, tree(tmp_path / "a", at_limit)) == []
    over = '"""Mod.\n' + "line\n" * (limit - 1) + '"""\n'
    found = problems(checker, tree(tmp_path / "b", over))
    assert len(found) == 1
    assert found[0].startswith(f"truereward/mod.py:1: a module docstring of {limit + 1} lines")


def test_a_link_to_no_file_fails(checker: ModuleType, tmp_path: Path) -> None:
    readme = "# r\n\nSee [design](docs/design.md#design) and\n[plugin](docs/plugin.md).\n"
    module = '"""Mod: docs/design.md explains it; docs/gone.md does not exist."""\n'
    found = problems(checker, tree(tmp_path, module, readme=readme))
    assert found == [
        "truereward/mod.py:1: names docs/gone.md, not there",
        "README.md:4: a link to docs/plugin.md, which is not there",
    ]


def test_a_link_to_no_heading_fails(checker: ModuleType, tmp_path: Path) -> None:
    readme = "# r\n\n[ok](docs/design.md#the-layers-1) [bad](docs/design.md#gone) [self](#r)\n"
    root = tree(tmp_path, '"""Mod."""\n', readme=readme)
    (root / "docs" / "design.md").write_text("# Design\n\n## The layers\n\n## The layers\n")
    assert problems(checker, root) == [
        "README.md:3: a link to docs/design.md#gone, a heading not there"
    ]


def test_the_repository_passes() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(ROOT)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout


def test_allowlist_entries_no_longer_needed_fail(checker: ModuleType, tmp_path: Path) -> None:
    root = tree(tmp_path, '"""Mod."""\n')
    found = [
        str(problem)
        for problem in checker.check(
            root, pending={"truereward/mod.py": 20}, allowed={("truereward/mod.py", "1 MB"): "x"}
        )
    ]
    assert found == [
        "truereward/mod.py:1: no longer needs its PENDING_DOCSTRINGS entry",
        "truereward/mod.py:1: an ALLOWED entry no longer used: '1 MB'",
    ]


def test_a_commands_help_text_is_exempt_from_the_length(
    checker: ModuleType, tmp_path: Path
) -> None:
    long = '"""Cmd.\n\n' + "usage line\n" * 20 + '"""\n'
    help_text = long + "import argparse\nP = argparse.ArgumentParser(description=__doc__)\n"
    assert problems(checker, tree(tmp_path / "a", help_text)) == []
    assert len(problems(checker, tree(tmp_path / "b", long))) == 1
