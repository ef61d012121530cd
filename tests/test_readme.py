"""The README's tour runs as written (with the logs directory moved to a temp dir)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT
from truereward import PublishConflict


def test_the_python_tour_runs_and_says_what_it_claims(tmp_path):
    text = (ROOT / "README.md").read_text()
    tour = re.search(r"## A five-minute tour\n\n```python\n(.*?)```", text, re.S)
    assert tour is not None
    code = tour.group(1).replace('"/logs/verifier"', repr(str(tmp_path)))
    claims = re.findall(r"^(.*?)\s+# (\(.*\)|None|'[A-Z_]+'|\[.*\])$", code, re.M)
    namespace: dict = {}
    lines = code.splitlines()
    conflict_line = next(i for i, line in enumerate(lines) if "raises PublishConflict" in line)
    exec(compile("\n".join(lines[:conflict_line]), "README", "exec"), namespace)
    with pytest.raises(PublishConflict):
        exec(lines[conflict_line], namespace)
    exec(compile("\n".join(lines[conflict_line + 1 :]), "README", "exec"), namespace)
    checked = 0
    for expression, expected in claims:
        if expression.strip().startswith(("tr.publish", "#")) or "=" in expression.split("(")[0]:
            continue
        assert repr(eval(expression, namespace)) == expected, expression
        checked += 1
    assert checked >= 4
    assert not (tmp_path / "reward.txt").exists()  # the replacing grade is ungradable
