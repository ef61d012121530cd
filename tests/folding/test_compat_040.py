"""Compatibility with the published truereward 0.4.0.

The real package is installed (``pip install --target``) into a directory of
its own and run in a separate process, talking JSON lines over a pipe. Rows it
writes must load here unchanged, and on valid rows its fold and ours agree on
the reward, gradability and refusal codes. The deliberate differences are
documented in the README ("Differences from truereward 0.4.0") and tested in
``test_deliberate_differences``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support import strategies as gen
from tests.support.installs import install_target
from truereward import CaseResult, fold

LEGACY_VERSION = "0.4.0"

#: The ungradable codes 0.4.0 knows (its closed list).
LEGACY_CODES = ("CASE_INVALID", "CASE_NOT_PREPARED", "CASE_NOT_GRADED")

SERVER = textwrap.dedent("""
    import json, sys
    import truereward
    from truereward import CaseResult
    from truereward.session import Session
    assert truereward.__version__ == "0.4.0", truereward.__version__
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "rows":
            out = [CaseResult(**kwargs).to_row() for kwargs in request["cases"]]
        elif request["op"] == "rawfold":
            out = truereward.fold(request["rows"])
        elif request["op"] == "from_row":
            out = CaseResult.from_row(request["row"]).to_row()
        else:
            session = Session()
            for row in request["rows"]:
                session.add(row)
            doc = session.document()
            out = {"gradable": doc["gradable"], "reward": doc["reward"],
                   "codes": sorted(item["code"] for item in doc["ungradable"]),
                   "guards_hold": doc["guards_hold"]}
        print(json.dumps(out), flush=True)
""")


class Legacy:
    """A running truereward 0.4.0 answering requests."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process

    def ask(self, request: dict[str, Any]) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, "truereward 0.4.0 stopped answering"
        return json.loads(line)


@pytest.fixture(scope="module")
def legacy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Legacy]:
    target = tmp_path_factory.mktemp("truereward-040")
    install_target(f"truereward=={LEGACY_VERSION}", target)
    process = subprocess.Popen(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(target)!r})\n" + SERVER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    yield Legacy(process)
    assert process.stdin is not None
    process.stdin.close()
    process.wait(timeout=10)


@pytest.mark.slow
def test_rows_written_by_040_load_unchanged(legacy):
    cases = [
        {"id": "tests/test_a.py::test_one", "kind": "fail_to_pass", "verdict": "pass"},
        {
            "id": "guard",
            "kind": "pass_to_pass",
            "verdict": "fail",
            "why": "assert 1 == 2",
            "observations": [{"name": "exit", "verdict": "nonzero", "why": "1"}],
            "measures": {"ms": 12.5, "bytes": 1024},
            "duration_s": 1.23456,
        },
        {
            "id": "c",
            "kind": "fail_to_pass",
            "verdict": "ungradable",
            "code": "CASE_NOT_GRADED",
            "why": "reader crashed",
            "containment": {"sandbox": "gvisor", "net": False},
        },
        {
            "id": "d",
            "kind": "pass_to_pass",
            "verdict": "pass",
            "checks": [{"check": "determinism", "holds": False, "why": "differs"}],
        },
    ]
    rows = legacy.ask({"op": "rows", "cases": cases})
    for row in rows:
        loaded = CaseResult.from_row(row)
        again = loaded.to_row()
        assert set(again) == set(row)
        assert again == row  # the same values (1024 == 1024.0)


legacy_rows = st.lists(
    gen.rows(ids=gen.small_ids).map(
        lambda row: (
            {**row, "code": LEGACY_CODES[hash(row["code"]) % len(LEGACY_CODES)]}
            if row["verdict"] == "ungradable"
            else row
        )
    ),
    max_size=10,
    unique_by=lambda row: row["id"],
)


@pytest.mark.slow
@given(legacy_rows)
def test_fold_agrees_with_040_on_valid_rows(legacy, rows):
    theirs = legacy.ask({"op": "fold", "rows": rows})
    ours = fold(rows)
    assert ours.gradable == theirs["gradable"]
    assert ours.reward == theirs["reward"]
    assert sorted(item.code for item in ours.refusals) == theirs["codes"]
    assert ours.guards_hold == theirs["guards_hold"]


def full(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "code": "",
        "why": "",
        "observations": [],
        "measures": {},
        "checks": [],
        "containment": None,
        "duration_s": 0.0,
        **row,
    }


def test_deliberate_differences(legacy, row):
    # Duplicate ids: 0.4.0's fold counts both rows and grades the run; ours refuses it.
    duplicates = [full(row("a")), full(row("a", verdict="fail"))]
    assert legacy.ask({"op": "rawfold", "rows": duplicates})["gradable"] is True
    assert [item.code for item in fold(duplicates).refusals] == ["CASE_INVALID"]
    # fix_rate is not gated by the guards here (0.4.0 reports 0.0 when a guard fails) ...
    broken_guard = [full(row("a")), full(row("g", "pass_to_pass", verdict="fail"))]
    assert legacy.ask({"op": "rawfold", "rows": broken_guard})["fix_rate"] == 0.0
    assert fold(broken_guard).fix_rate == 1.0
    # ... and None when there is no graded fail-to-pass case (0.4.0 reports 0.0).
    guards_only = [full(row("g", "pass_to_pass"))]
    assert legacy.ask({"op": "rawfold", "rows": guards_only})["fix_rate"] == 0.0
    assert fold(guards_only).fix_rate is None
    # NaN is rejected everywhere; 0.4.0 accepts it in measures.
    nan_text = '{"id": "a", "kind": "fail_to_pass", "verdict": "pass", "measures": {"x": NaN}}'
    assert legacy.ask({"op": "from_row", "row": json.loads(nan_text)})["id"] == "a"
    with pytest.raises(ValueError, match="finite"):
        CaseResult.from_row(json.loads(nan_text))
