"""The agent's trajectory (ATIF): the ``trajectory`` reader, the trajectory
criteria of the ``workspace`` reader, and refusals for a trajectory that is
missing or is not one (never scored)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import truereward as tr
from tests.support.criteria_rows import passed, refused
from truereward.codes import Ungradable
from truereward.criteria.atif import parse
from truereward.criteria.kinds.trajectory_turn_count import TrajectoryTurnCount, score
from truereward.readers import Evidence


def step(number: int, source: str = "agent", *tools: str, **extra: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"step_id": number, "source": source, "message": f"step {number}"}
    if tools:
        found["tool_calls"] = [
            {"tool_call_id": f"{number}-{index}", "function_name": name, "arguments": {}}
            for index, name in enumerate(tools)
        ]
    return found | extra


def trajectory(*steps: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "schema_version": "ATIF-v1.6",
        "agent": {"name": "terminus-2", "version": "2"},
        "steps": list(steps),
        **extra,
    }


SAMPLE = trajectory(
    step(1, "user"),
    step(2, "agent", "bash"),
    step(3, "agent", "bash", "edit_file"),
    step(4, "system"),
    step(5, "agent"),
)


def write(path: Path, value: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return path


def read(evidence: str | Evidence, *options: dict[str, Any]) -> list[Any]:
    spec = [
        {"id": f"c{index}", "kind": "fail_to_pass", "options": option}
        for index, option in enumerate(options)
    ]
    return tr.read("trajectory", evidence, spec)


def test_tool_use_and_turns(tmp_path: Path) -> None:
    path = str(write(tmp_path / "trajectory.json", SAMPLE))
    rows = read(
        path,
        {"criterion": "trajectory_tool_used", "tool_name": "bash", "min_count": 2},
        {"criterion": "trajectory_tool_used", "tool_name": "bash", "min_count": 3},
        {"criterion": "trajectory_tool_used", "tool_name": "Bash"},
        {"criterion": "trajectory_tool_not_used", "tool_name": "web_search"},
        {"criterion": "trajectory_tool_not_used", "tool_name": "edit_file"},
        {"criterion": "trajectory_turn_count", "max_turns": 3},
        {"criterion": "trajectory_turn_count", "max_turns": 2, "min": 0.5},
        {"criterion": "trajectory_turn_count", "equals": 3},
        {"criterion": "trajectory_turn_count", "min_turns": 4},
        {"criterion": "trajectory_turn_count", "max_turns": 2, "decay": False},
    )
    assert [passed(row) for row in rows] == [
        True,
        False,
        False,
        True,
        False,
        True,
        True,
        True,
        False,
        False,
    ]
    assert rows[6].measures["score"] == 0.5
    assert "3 agent turns" in rows[6].why


def test_a_missing_trajectory_is_refused_never_scored(tmp_path: Path) -> None:
    spec = [
        {
            "id": "a",
            "kind": "fail_to_pass",
            "options": {"criterion": "trajectory_turn_count", "max_turns": 5},
        }
    ]
    document = tr.grade_evidence("trajectory", str(tmp_path / "absent.json"), spec)
    assert document.reward is None
    assert [(item.code, item.blame.value) for item in document.refusals] == [
        ("TRAJECTORY_MISSING", "grader")
    ]


BROKEN: dict[str, Any] = {
    "not-json": '{"steps": [',
    "nan": '{"schema_version": "ATIF-v1.6", "agent": {"name": "a"}, "steps": [], "x": NaN}',
    "an-array": [SAMPLE],
    "no-steps": {"schema_version": "ATIF-v1.6", "agent": {"name": "a"}},
    "empty-steps": trajectory(),
    "no-agent": {"schema_version": "ATIF-v1.6", "steps": [step(1)]},
    "bad-version": trajectory(step(1)) | {"schema_version": "1.6"},
    "out-of-order": trajectory(step(1), step(3)),
    "unknown-source": trajectory(step(1, "robot")),
    "tools-on-a-user-step": trajectory(step(1, "user", "bash")),
    "tool-name-not-text": trajectory(
        step(1) | {"tool_calls": [{"tool_call_id": "x", "function_name": 7, "arguments": {}}]}
    ),
    "arguments-not-an-object": trajectory(
        step(1) | {"tool_calls": [{"tool_call_id": "x", "function_name": "a", "arguments": "ls"}]}
    ),
    "step-id-text": trajectory(step(1) | {"step_id": "1"}),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_trajectory_that_is_not_atif_is_refused(tmp_path: Path, name: str) -> None:
    path = str(write(tmp_path / "trajectory.json", BROKEN[name]))
    with pytest.raises(Ungradable) as raised:
        read(path, {"criterion": "trajectory_turn_count", "max_turns": 5})
    assert raised.value.code == "TRAJECTORY_MALFORMED"
    assert raised.value.blame.value == "grader"


def test_a_trajectory_that_is_a_symlink_or_huge_is_refused(tmp_path: Path) -> None:
    real = write(tmp_path / "real.json", SAMPLE)
    os.symlink(real, tmp_path / "link.json")
    with pytest.raises(Ungradable) as raised:
        read(str(tmp_path / "link.json"), {"criterion": "trajectory_turn_count", "max_turns": 5})
    assert raised.value.code == "TRAJECTORY_MALFORMED"
    with (tmp_path / "huge.json").open("wb") as handle:
        handle.truncate(65 << 20)
    with pytest.raises(Ungradable) as raised:
        read(str(tmp_path / "huge.json"), {"criterion": "trajectory_turn_count", "max_turns": 5})
    assert raised.value.code == "TRAJECTORY_MALFORMED"


def test_fields_a_later_atif_may_add_are_left_alone(tmp_path: Path) -> None:
    later = trajectory(
        step(1, "agent", "bash", future_field=1), notes="x", schema_version="ATIF-v2.0"
    )
    rows = read(
        str(write(tmp_path / "t.json", later)),
        {"criterion": "trajectory_tool_used", "tool_name": "bash"},
    )
    assert passed(rows[0])


def test_subagents_are_not_the_agents_tool_use(tmp_path: Path) -> None:
    nested = trajectory(
        step(1, "agent"),
        subagent_trajectories=[trajectory(step(1, "agent", "bash")) | {"trajectory_id": "s"}],
    )
    rows = read(
        str(write(tmp_path / "t.json", nested)),
        {"criterion": "trajectory_tool_not_used", "tool_name": "bash"},
    )
    assert passed(rows[0])


def test_a_workspace_criterion_is_not_the_trajectory_readers(tmp_path: Path) -> None:
    rows = read(str(write(tmp_path / "t.json", SAMPLE)), {"criterion": "file_exists", "path": "x"})
    refused(rows[0], "CASE_INVALID")
    assert "workspace reader" in rows[0].why


def test_the_workspace_reader_reads_a_stored_runs_trajectory(tmp_path: Path) -> None:
    run = tmp_path / "run-1"
    (run / "workspace").mkdir(parents=True)
    write(run / "logs" / "agent" / "trajectory.json", SAMPLE)
    stored = Evidence(url=str(run / "workspace"), root=str(run))
    spec = [
        {
            "id": "a",
            "kind": "fail_to_pass",
            "options": {"criterion": "trajectory_tool_used", "tool_name": "edit_file"},
        },
        {
            "id": "b",
            "kind": "fail_to_pass",
            "options": {"criterion": "trajectory_turn_count", "max_turns": 3},
        },
        {
            "id": "c",
            "kind": "fail_to_pass",
            "options": {
                "criterion": "trajectory_tool_used",
                "tool_name": "bash",
                "path": "/logs/agent/trajectory.json",
            },
        },
    ]
    rows = tr.read("workspace", stored, spec)
    assert passed(rows[0]) and passed(rows[1])
    refused(rows[2], "CASE_INVALID")  # an absolute path over a stored run
    assert [item.path for item in stored.digests] == ["logs/agent/trajectory.json"]  # read once


def test_a_stored_runs_trajectory_cannot_be_another_runs(tmp_path: Path) -> None:
    other = tmp_path / "run-2"
    write(other / "logs" / "agent" / "trajectory.json", SAMPLE)
    run = tmp_path / "run-1"
    (run / "workspace").mkdir(parents=True)
    os.symlink(other / "logs", run / "logs")
    stored = Evidence(url=str(run / "workspace"), root=str(run))
    spec = [
        {
            "id": "a",
            "kind": "fail_to_pass",
            "options": {"criterion": "trajectory_tool_used", "tool_name": "bash"},
        }
    ]
    (row,) = tr.read("workspace", stored, spec)
    refused(row, "TRAJECTORY_MALFORMED")
    assert "outside the run" in row.why


def test_the_workspace_reader_names_its_trajectory(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    path = write(tmp_path / "logs" / "t.json", SAMPLE)
    spec = {
        "cases": [
            {
                "id": "a",
                "kind": "fail_to_pass",
                "options": {"criterion": "trajectory_turn_count", "equals": 3},
            }
        ],
        "options": {"trajectory": str(path)},
    }
    (row,) = tr.read("workspace", str(app), spec)
    assert passed(row)
    spec["options"] = {"trajectory": str(tmp_path / "logs" / "absent.json")}
    (row,) = tr.read("workspace", str(app), spec)
    refused(row, "TRAJECTORY_MISSING")


# --- invariants --------------------------------------------------------------------------------

TOOLS = st.sampled_from(["bash", "edit", "read", "Bash"])


@st.composite
def trajectories(draw: st.DrawFn) -> dict[str, Any]:
    steps = []
    for number in range(1, draw(st.integers(1, 12)) + 1):
        source = draw(st.sampled_from(["user", "agent", "system"]))
        tools = draw(st.lists(TOOLS, max_size=3)) if source == "agent" else []
        steps.append(step(number, source, *tools))
    return trajectory(*steps)


@given(trajectories(), TOOLS)
def test_turns_and_tool_uses_count_what_is_there(document: dict[str, Any], tool: str) -> None:
    parsed = parse(json.dumps(document).encode(), "t")
    assert parsed.turns == sum(item["source"] == "agent" for item in document["steps"])
    assert parsed.tool_uses(tool) == sum(
        call["function_name"] == tool
        for item in document["steps"]
        for call in item.get("tool_calls", [])
    )


@given(st.integers(0, 50), st.integers(0, 200))
def test_the_turn_budget_is_rewardkits_and_never_rises_with_turns(limit: int, turns: int) -> None:
    options = TrajectoryTurnCount(max_turns=limit)
    value = score(options, turns)
    assert 0.0 <= value <= 1.0
    assert score(options, turns + 1) <= value
    if turns <= limit:
        assert value == 1.0
    elif limit:
        assert value == max(0.0, 1.0 - (turns - limit) / limit)  # rewardkit's budget
    assert score(TrajectoryTurnCount(max_turns=limit, decay=False), turns) in (0.0, 1.0)
