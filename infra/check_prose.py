"""Prose where readers look for it: the rules of docs/design.md, "Prose in code".

    .venv/bin/python infra/check_prose.py [ROOT]

Fails (exit 1, one ``file:line: why`` a problem) when a module docstring of
``truereward/`` or ``flows/`` is longer than :data:`MAX_MODULE_DOCSTRING`
lines, when a comment or docstring there (or a comment of ``pyproject.toml``)
states a measurement, or when a relative link of README.md or docs/, or a
``docs/*.md`` a module names, points at no file. What counts as a
measurement, and what as a bound, is :func:`measurements`.
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: The longest module docstring, in lines from its opening quotes to its
#: closing ones: a few lines saying what the module is for and which doc
#: explains it. Specifications belong in docs/.
MAX_MODULE_DOCSTRING = 12

#: Modules whose docstring is still longer than the rule allows, each with
#: the length it may not exceed. An entry that is no longer needed fails the
#: check, so this list only shrinks. What stands: ``truereward/evaluate/``,
#: whose future issue 30 ("Decide evaluate") settles on another branch (its
#: modules built on or removed); docs/evaluate.md holds its rules already.
PENDING_DOCSTRINGS: dict[str, int] = {
    "truereward/evaluate/__init__.py": 22,
    "truereward/evaluate/composite.py": 24,
    "truereward/evaluate/dataset.py": 13,
    "truereward/evaluate/distribution.py": 14,
    "truereward/evaluate/experiment.py": 25,
    "truereward/evaluate/report.py": 23,
    "truereward/evaluate/suite.py": 14,
    "truereward/evaluate/summary.py": 20,
}

#: Phrases the measurement rule flags that are not measurements, each with
#: the file it is in and why it stands. An entry that no longer matches fails.
ALLOWED: dict[tuple[str, str], str] = {}

PACKAGES = ("truereward", "flows")

_NUMBER = r"(?<![\w.:$-])(\d[\d,]*(?:\.\d+)?)"
# A rate (runs/s, requests a second), a ratio (0.86x, 12x), a share (73 %):
# figures of a machine at work, never a bound a reader relies on.
_RATE = re.compile(_NUMBER + r"\s?(?:[A-Za-z]+/s\b|/s\b|[A-Za-z]+ (?:a|per) second\b)")
_RATIO = re.compile(_NUMBER + r"[x×](?![\w])")
_SHARE = re.compile(_NUMBER + r"\s?%")
# An amount of memory or time: a measurement unless the words around it
# state it as a bound or a setting.
_AMOUNT = re.compile(
    _NUMBER + r"\s?(?:[KMGT]i?B|kB|bytes|ms|µs|ns|s|secs?|seconds?|minutes?|hours?)(?![\w/])"
)
_BOUND_WORDS = frozenset(
    [
        "default",
        "defaults",
        "limit",
        "limits",
        "most",
        "up",
        "within",
        "over",
        "above",
        "under",
        "below",
        "beyond",
        "exceeds",
        "exceeding",
        "larger",
        "smaller",
        "more",
        "less",
        "than",
        "cap",
        "capped",
        "max",
        "maximum",
        "bound",
        "bounded",
        "bounds",
        "budget",
        "threshold",
        "timeout",
        "timeouts",
        "after",
        "every",
        "deadline",
        "least",
        "allow",
        "allows",
        "allowed",
    ]
)
# After the amount, only a word that names a setting makes it one ("1 s by
# default"); "30 s after the first" is a measurement.
_SETTING_WORDS = frozenset(
    [
        "default",
        "defaults",
        "limit",
        "limits",
        "timeout",
        "timeouts",
        "bound",
        "budget",
        "cap",
        "deadline",
        "max",
        "maximum",
        "threshold",
    ]
)
_OBSERVED_WORDS = frozenset(
    [
        "measured",
        "measures",
        "took",
        "takes",
        "peak",
        "peaked",
        "peaks",
        "about",
        "around",
        "roughly",
        "waited",
        "spent",
        "against",
        "faster",
        "slower",
    ]
)
_WORDS_BEFORE = 3
_WORDS_AFTER = 3


@dataclass(frozen=True)
class Problem:
    path: str
    line: int
    why: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.why}"


@dataclass(frozen=True)
class Prose:
    """A run of prose: a docstring, or consecutive comment lines joined."""

    text: str
    first_line: int
    #: A comment after code on its line: an amount there is that code's value
    #: (``LIMIT = 64 << 20  # 64 MiB``), a setting.
    trailing: bool = False

    def line_of(self, offset: int) -> int:
        return self.first_line + self.text.count("\n", 0, offset)


def _words(text: str) -> list[str]:
    return [w.strip("()[]{},.;:`'\"*").lower() for w in text.split()]


def measurements(prose: Prose) -> Iterator[tuple[int, str]]:
    """Each measurement the prose states: (line, the phrase).

    A rate, a ratio or a share is always one. An amount in a comment after
    code on its line is that code's value, a setting. Any other amount of memory or time is
    one unless one of the three words before it states a bound or setting
    (``default``, ``at most``, ``limit``, ``timeout``, ``over``, ``after``...;
    :data:`_BOUND_WORDS`) or one of the three after it names a setting
    (``by default``, ``timeout``...; :data:`_SETTING_WORDS`), and then still
    one when a word before it says it was observed (``took``, ``peak``,
    ``about``...; :data:`_OBSERVED_WORDS`) or the word after it is
    ``measured``.
    """
    seen: set[int] = set()
    for pattern in (_RATE, _RATIO, _SHARE):
        for match in pattern.finditer(prose.text):
            seen.add(match.start())
            yield prose.line_of(match.start()), " ".join(match.group(0).split())
    for match in _AMOUNT.finditer(prose.text if not prose.trailing else ""):
        if match.start() in seen:
            continue
        before = _words(prose.text[: match.start()])[-_WORDS_BEFORE:]
        after = _words(prose.text[match.end() :])[:_WORDS_AFTER]
        stated = set(before) & _BOUND_WORDS or set(after) & _SETTING_WORDS
        observed = set(before) & _OBSERVED_WORDS or after[:1] == ["measured"]
        if stated and not observed:
            continue
        yield prose.line_of(match.start()), " ".join(match.group(0).split())


def python_prose(source: str) -> Iterator[Prose]:
    """The comments (consecutive lines joined) and docstrings of a module."""
    block: list[str] = []
    start = last = 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and token.line[: token.start[1]].strip():
            yield Prose(token.string.lstrip("#:").strip(), token.start[0], trailing=True)
        elif token.type == tokenize.COMMENT:
            row = token.start[0]
            if block and row != last + 1:
                yield Prose("\n".join(block), start)
                block = []
            if not block:
                start = row
            block.append(token.string.lstrip("#:").strip())
            last = row
    if block:
        yield Prose("\n".join(block), start)
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            yield Prose(node.value.value, node.lineno)


def toml_prose(source: str) -> Iterator[Prose]:
    """The comments of a TOML file, one a line (a ``#`` inside a string is
    not one: the lines that hold strings with ``#`` are a few URLs)."""
    for number, line in enumerate(source.splitlines(), 1):
        code, hash_, comment = line.partition("#")
        if hash_ and code.count('"') % 2 == 0:
            yield Prose(comment, number, trailing=bool(code.strip()))


def module_docstring_lines(source: str) -> tuple[int, int] | None:
    """(first line, length in lines) of a module's docstring, or None."""
    module = ast.parse(source)
    if ast.get_docstring(module, clean=False) is None:
        return None
    node = module.body[0]
    end = node.end_lineno or node.lineno
    return node.lineno, end - node.lineno + 1


_LINK = re.compile(r"\]\(([^)\s]+)\)")
_DOC_NAME = re.compile(r"docs/[\w-]+\.md")


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of a markdown file: lower case,
    punctuation dropped, spaces as hyphens, ``-1``, ``-2``... on repeats."""
    seen: dict[str, int] = {}
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip().lower()
        slug = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        if count:
            seen[f"{slug}-{count}"] = 1
    return set(seen)


def broken_links(root: Path, path: Path) -> Iterator[Problem]:
    """Relative links of a markdown file that point at no file, or at no
    heading of a markdown file."""
    text = path.read_text(encoding="utf-8")
    name = path.relative_to(root).as_posix()
    for match in _LINK.finditer(text):
        target, _, anchor = match.group(1).partition("#")
        if "://" in target or target.startswith("mailto:"):
            continue
        line = text.count("\n", 0, match.start()) + 1
        linked = path.parent / target if target else path
        if not linked.exists():
            yield Problem(name, line, f"a link to {target}, which is not there")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            yield Problem(name, line, f"a link to {match.group(1)}, a heading not there")


def check(
    root: Path,
    pending: dict[str, int] = PENDING_DOCSTRINGS,
    allowed: dict[tuple[str, str], str] = ALLOWED,
) -> list[Problem]:
    """Every problem of the tree at ``root``, with these allowlists."""
    problems: list[Problem] = []
    used_allowed: set[tuple[str, str]] = set()
    used_pending: set[str] = set()
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            name = path.relative_to(root).as_posix()
            source = path.read_text(encoding="utf-8")
            span = module_docstring_lines(source)
            # A command's docstring is its --help text (argparse's description):
            # that is where its users read it, so its length is the help's.
            if span is not None and "description=__doc__" not in source:
                first, length = span
                limit = pending.get(name, MAX_MODULE_DOCSTRING)
                if name in pending:
                    used_pending.add(name)
                    if length <= MAX_MODULE_DOCSTRING:
                        problems.append(
                            Problem(name, first, "no longer needs its PENDING_DOCSTRINGS entry")
                        )
                if length > limit:
                    problems.append(
                        Problem(
                            name,
                            first,
                            f"a module docstring of {length} lines (at most {limit}:"
                            " say what the module is for and point to the doc that explains it)",
                        )
                    )
            for prose in python_prose(source):
                problems.extend(_measured(name, prose, allowed, used_allowed))
                for doc in _DOC_NAME.findall(prose.text):
                    if not (root / doc).is_file():
                        problems.append(Problem(name, prose.first_line, f"names {doc}, not there"))
    pyproject = root / "pyproject.toml"
    for prose in toml_prose(pyproject.read_text(encoding="utf-8")):
        problems.extend(_measured("pyproject.toml", prose, allowed, used_allowed))
    for markdown in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        problems.extend(broken_links(root, markdown))
    for name in sorted(set(pending) - used_pending):
        problems.append(Problem(name, 1, "a PENDING_DOCSTRINGS entry for no module docstring"))
    for name, phrase in sorted(set(allowed) - used_allowed):
        problems.append(Problem(name, 1, f"an ALLOWED entry no longer used: {phrase!r}"))
    return problems


def _measured(
    name: str, prose: Prose, allowed: dict[tuple[str, str], str], used: set[tuple[str, str]]
) -> Iterator[Problem]:
    for line, phrase in measurements(prose):
        if (name, phrase) in allowed:
            used.add((name, phrase))
            continue
        yield Problem(
            name,
            line,
            f"states a measurement ({phrase!r}): figures go to docs/scale.md with the"
            " command that produces them, their history to commit messages",
        )


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    problems = check(root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem(s): docs/design.md, 'Prose in code', says the rules")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
