"""docs/calibrate.md says what the code does: its example log gives the
Markdown it shows, and its Python examples give the values it claims."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT
from truereward.calibrate import UnsupportedQuestion, parse_log
from truereward.cli import main

DOC = (ROOT / "docs" / "calibrate.md").read_text()


def block(after: str, language: str) -> str:
    found = re.search(re.escape(after) + r".*?```" + language + r"\n(.*?)```", DOC, re.S)
    assert found is not None, after
    return found.group(1)


def test_the_example_log_prints_the_documented_markdown(tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    log.write_text(block("## The calibration log", "json"))
    assert parse_log(log.read_text()).questions["relevant"].total == 4
    # The doc runs it as "log.jsonl" from the current directory.
    assert main(["calibrate", "score", str(log)]) == 0
    printed = capsys.readouterr().out.replace(str(log), "log.jsonl")
    assert printed == block("`score` on the example above prints:", "")


def test_the_python_examples_hold():
    namespace: dict = {}
    first = block("## Questions, answers, decisions", "python")
    lines = first.splitlines()
    region_line = next(i for i, line in enumerate(lines) if "raises UnsupportedQuestion" in line)
    exec("\n".join(lines[:region_line]), namespace)
    with pytest.raises(UnsupportedQuestion):
        exec(lines[region_line].split("#")[0], namespace)
    second = block("## Scoring collected answers: `score`", "python")
    exec(second, namespace)
    checked = 0
    for expression, claim in re.findall(r"^(\S.*?)\s+# (.*)$", first + second, re.M):
        if "raises" in claim or "=" in expression.split("(")[0]:
            continue
        value = eval(expression, namespace)
        # "VALUE: why" -> VALUE (a colon inside a dict is followed by a value, not a word).
        shown = re.split(r": (?=[a-z])", claim, maxsplit=1)[0].strip()
        if "..." in shown:
            assert repr(value).startswith(shown.split("...")[0]), expression
        else:
            assert repr(value) == shown, expression
        checked += 1
    assert checked >= 7
