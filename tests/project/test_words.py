"""The words of README.md, the docs and the help texts agree with what the
commands print: the ``schema_version`` a fold writes, the shared refusal codes
``truereward codes`` lists (and how many the README says there are), and
every subcommand argparse knows, named in the help above it and in the README
(and ``docs/sweeps.md`` for ``sweep``). Each number or name is taken from a
real command, never written down twice in the test."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
GLOSSARY = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
SWEEPS_DOC = (ROOT / "docs" / "sweeps.md").read_text(encoding="utf-8")

NUMBER_WORDS = {
    word: value
    for value, word in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}


def truereward(*args: str, cwd: Path = ROOT) -> str:
    """What ``truereward ARGS`` prints (it must exit 0)."""
    done = subprocess.run(
        [sys.executable, "-m", "truereward", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_schema_version_the_readme_and_glossary_name_is_the_one_a_fold_writes(
    tmp_path: Path,
) -> None:
    from truereward.grade.versions import READ_VERSIONS, SCORING_VERSION

    run = ROOT / "samples" / "runs" / "all-pass"
    logs = tmp_path / "logs"
    truereward(
        "fold", str(run / "rows.jsonl"), "--case-set", str(run / "task.json"), "--logs", str(logs)
    )
    written = json.loads((logs / "grade.json").read_bytes())["schema_version"]
    named = re.findall(r"`schema_version` (\d+)", README)
    assert named and set(named) == {str(written)}, named
    assert f"`schema_version` {written}, or {SCORING_VERSION} when it carries" in README

    schema = json.loads(truereward("schema", "grade"))["properties"]["schema_version"]
    assert schema["default"] == written and schema["enum"] == list(READ_VERSIONS)
    read = ", ".join(str(version) for version in READ_VERSIONS[:-1])
    assert (
        f"{written} written ({SCORING_VERSION} for a grade with a scoring), "
        f"{read} and {READ_VERSIONS[-1]} read" in GLOSSARY
    )


def test_the_readmes_code_table_and_count_are_the_shared_codes_truereward_codes_prints() -> None:
    listed = json.loads(truereward("codes", "--json"))
    shared = {item["code"]: item for item in listed if item["shared"]}
    assert len(listed) > len(shared)  # the installed readers declare codes of their own

    section = README.split("## Refusal codes", 1)[1].split("\n## ", 1)[0]
    table = {
        row.group(1): (row.group(2), row.group(3))
        for row in re.finditer(r"^\| `([A-Z_]+)` \| (run|grader) \| (yes|no) \|", section, re.M)
    }
    assert table == {
        code: (item["blame"], "yes" if item["retry"] else "no") for code, item in shared.items()
    }
    counted = re.search(r"The shared codes are the spec's (\w+),", README)
    assert counted, "the README no longer says how many shared codes there are"
    assert NUMBER_WORDS[counted.group(1)] == len(shared)


def subparsers_of(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommands argparse knows under ``parser``, by name (none for a
    command without actions)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def subcommands() -> dict[str, list[str]]:
    """Each command of ``truereward`` with its actions, from the parser itself."""
    from truereward.cli import _parser

    return {name: list(subparsers_of(sub)) for name, sub in subparsers_of(_parser()).items()}


def help_lines(text: str) -> dict[str, str]:
    """The one-line help of each subcommand in an argparse ``--help`` text
    (a name too long for its column has its help on the next line)."""
    listed = text.split("positional arguments:", 1)[1].split("\noptions:", 1)[0]
    found: dict[str, str] = {}
    name = ""
    for line in listed.splitlines()[2:]:
        entry = re.match(r"^    (\S+)(?:\s{2,}(.*))?$", line)
        if entry:
            name = entry.group(1)
            found[name] = entry.group(2) or ""
        elif name and line.strip():
            found[name] = f"{found[name]} {line.strip()}".strip()
    return found


def test_every_subcommand_argparse_knows_is_named_in_the_help_above_it_and_the_readme() -> None:
    commands = subcommands()
    assert {"summary", "retries", "report", "compare", "stability"} <= set(commands["sweep"])
    top = help_lines(truereward("--help"))
    assert set(top) == set(commands)
    for command, actions in commands.items():
        assert re.search(rf"`truereward {command}\b", README), command
        if not actions:
            continue
        text = truereward(command, "--help")
        assert set(help_lines(text)) == set(actions), command
        description = text.split("positional arguments:", 1)[0]
        for action in actions:
            assert re.search(rf"\b{action}\b", top[command]), (command, action, top[command])
            assert re.search(rf"\b{action}\b", description), (command, action)
            assert re.search(rf"\b{command} (?:[a-z]+\|)*{action}\b", README), (command, action)
    for action in commands["sweep"]:
        assert f"truereward sweep {action} " in SWEEPS_DOC, action


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\npositional arguments:\n  COMMAND\n    one       the first\n"
         "    stability\n              flaky runs\n              across sweeps\n\noptions:\n",
         {"one": "the first", "stability": "flaky runs across sweeps"}),
    ],
)  # fmt: skip
def test_help_lines_reads_argparses_layout(text: str, expected: dict[str, str]) -> None:
    assert help_lines(text) == expected
