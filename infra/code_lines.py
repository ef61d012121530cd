"""Code lines of Python trees: lines holding code, not blank, not comments,
not docstrings (docs/design.md, "Code lines").

    .venv/bin/python infra/code_lines.py [--by-package] [PATH ...]

PATH is a directory (every ``*.py`` below it) or a file; the default is
``truereward``. Prints the total, or with ``--by-package`` one line per
directory directly below each PATH, then the total.
"""

from __future__ import annotations

import argparse
import ast
import io
import tokenize
from pathlib import Path

#: Tokens that hold no code: a line with only these is not a code line.
_NOT_CODE = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
}
_HAS_DOCSTRING = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _docstring_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, _HAS_DOCSTRING) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def count_source(source: str) -> int:
    """The code lines of one module's ``source``: lines a code token touches
    (a string spanning lines counts each), less a docstring's lines."""
    code: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in _NOT_CODE:
            code.update(range(token.start[0], token.end[0] + 1))
    return len(code - _docstring_lines(ast.parse(source)))


def count(path: Path) -> int:
    """The code lines of a file, or of every ``*.py`` below a directory."""
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return sum(count_source(file.read_text(encoding="utf-8")) for file in files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("paths", nargs="*", type=Path, default=[Path("truereward")])
    parser.add_argument("--by-package", action="store_true", help="a line per subdirectory")
    args = parser.parse_args(argv)
    total = 0
    for path in args.paths:
        if not (args.by_package and path.is_dir()):
            total += count(path)
            continue
        for part in sorted(item for item in path.iterdir() if item.is_dir()):
            if any(part.rglob("*.py")):
                lines = count(part)
                print(f"{lines:7d} {part}")
                total += lines
        total += sum(count(file) for file in sorted(path.glob("*.py")))  # the modules beside them
    print(f"{total:7d} total")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
