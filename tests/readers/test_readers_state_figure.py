"""The state and figure readers."""

from __future__ import annotations

import json

import pytest

from truereward import TaskSpec, Ungradable, fold, read
from truereward.readers.state import json_equal


def spec(*cases: tuple[str, str, dict]) -> TaskSpec:
    return TaskSpec.of({"cases": [{"id": i, "kind": k, "options": o} for i, k, o in cases]})


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "workspace"
    (root / "out").mkdir(parents=True)
    (root / "out" / "config.json").write_text(
        json.dumps({"server": {"port": 8080, "hosts": ["a", "b"]}, "debug": None, "ratio": 1})
    )
    (root / "out" / "notes.txt").write_text("hello world\n")
    (root / "out" / "binary.bin").write_bytes(b"\xff\xfe\x00")
    return root


def test_state_expectations(workspace):
    cases = spec(
        (
            "port",
            "fail_to_pass",
            {"path": "out/config.json", "json": [{"pointer": "/server/port", "equals": 8080}]},
        ),
        (
            "hosts",
            "fail_to_pass",
            {"path": "out/config.json", "json": [{"pointer": "/server/hosts/1", "equals": "b"}]},
        ),
        (
            "debug-null-exists",
            "pass_to_pass",
            {"path": "out/config.json", "json": [{"pointer": "/debug", "exists": True}]},
        ),
        (
            "ratio-is-one-point-oh",
            "pass_to_pass",
            {"path": "out/config.json", "json": [{"pointer": "/ratio", "equals": 1.0}]},
        ),
        (
            "wrong-port",
            "fail_to_pass",
            {"path": "out/config.json", "json": [{"pointer": "/server/port", "equals": 80}]},
        ),
        (
            "missing-key",
            "fail_to_pass",
            {"path": "out/config.json", "json": [{"pointer": "/nope", "equals": 1}]},
        ),
        (
            "notes",
            "pass_to_pass",
            {"path": "out/notes.txt", "text": "hello world", "contains": ["hello", "world"]},
        ),
        ("absent-file", "fail_to_pass", {"path": "out/missing.txt"}),
        ("must-be-absent", "pass_to_pass", {"path": "out/missing.txt", "exists": False}),
        ("binary-as-text", "fail_to_pass", {"path": "out/binary.bin", "contains": "x"}),
        (
            "not-json",
            "fail_to_pass",
            {"path": "out/notes.txt", "json": [{"pointer": "/a", "exists": True}]},
        ),
        ("a-directory", "fail_to_pass", {"path": "out"}),
    )
    rows = {row.id: row for row in read("state", str(workspace), cases)}
    verdicts = {key: row.verdict for key, row in rows.items()}
    assert verdicts == {
        "port": "pass",
        "hosts": "pass",
        "debug-null-exists": "pass",
        "ratio-is-one-point-oh": "pass",
        "wrong-port": "fail",
        "missing-key": "fail",
        "notes": "pass",
        "absent-file": "fail",
        "must-be-absent": "pass",
        "binary-as-text": "fail",
        "not-json": "fail",
        "a-directory": "fail",
    }
    assert "expected 80" in rows["wrong-port"].why
    assert "does not exist" in rows["absent-file"].why


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"path": "../escape"}, "path: "),
        ({"path": "/etc/passwd"}, "path: "),
        ({"file": "x"}, "file: "),
        ({"path": "a", "json": [{"pointer": "no-slash", "equals": 1}]}, "json.0.pointer: "),
        ({"path": "a", "json": [{"pointer": "/a", "equals": 1, "exists": True}]}, "json.0: "),
        ({"path": "a", "exists": "yes"}, "exists: "),
        ({"path": "a", "contains": 5}, "contains: "),
        ({"path": "a", "contains": ["x", 3]}, "contains.1: "),
        ({"path": "a", "sha256": 3}, "sha256: "),
    ],
)
def test_invalid_state_options_are_case_invalid(workspace, options, field):
    (row,) = read("state", str(workspace), spec(("c", "fail_to_pass", options)))
    assert row.verdict == "ungradable"
    assert row.code == "CASE_INVALID"
    assert field in row.why


def test_a_symlink_out_of_the_evidence_is_never_followed(workspace, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("root:x:0:0\n")
    (workspace / "out" / "etc").symlink_to(outside)
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    (workspace / "inside.txt").symlink_to(workspace / "out" / "notes.txt")
    (workspace / "out" / "dangling").symlink_to(outside / "nothing")
    cases = spec(
        ("dir-link", "fail_to_pass", {"path": "out/etc/secret.txt", "contains": "root"}),
        ("file-link", "fail_to_pass", {"path": "link.txt"}),
        ("dangling", "pass_to_pass", {"path": "out/dangling", "exists": False}),
        ("inside", "fail_to_pass", {"path": "inside.txt", "text": "hello world"}),
    )
    rows = {row.id: row for row in read("state", str(workspace), cases)}
    for case_id, path in (
        ("dir-link", "out/etc/secret.txt"),
        ("file-link", "link.txt"),
        ("dangling", "out/dangling"),
    ):
        # the run planted the link: its case fails (never a refusal it could hide behind)
        assert rows[case_id].verdict == "fail", rows[case_id].why
        assert path in rows[case_id].why and "not read" in rows[case_id].why
    # Evidence is read without following a final symlink, even one that
    # stays inside: the case fails, saying so.
    assert rows["inside"].verdict == "fail" and "a symlink" in rows["inside"].why


def test_missing_workspace_is_evidence_missing(tmp_path):
    with pytest.raises(Ungradable) as caught:
        read("state", str(tmp_path / "gone"), spec(("c", "fail_to_pass", {"path": "a"})))
    assert caught.value.code == "EVIDENCE_MISSING"


def test_json_equality():
    assert json_equal(1, 1.0)
    assert not json_equal(True, 1)
    assert not json_equal([1, 2], [2, 1])
    assert json_equal({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]})
    assert not json_equal("1", 1)


def test_sha256_expectation(workspace):
    import hashlib

    digest = hashlib.sha256(b"hello world\n").hexdigest()
    rows = read(
        "state",
        str(workspace),
        spec(
            ("right", "fail_to_pass", {"path": "out/notes.txt", "sha256": digest}),
            ("wrong", "pass_to_pass", {"path": "out/notes.txt", "sha256": "0" * 64}),
        ),
    )
    assert [row.verdict for row in rows] == ["pass", "fail"]


# --- figure -------------------------------------------------------------------------------------


@pytest.fixture
def figures(tmp_path):
    path = tmp_path / "figures.json"
    path.write_text(
        json.dumps(
            {
                "latency_ms": {"p50": 212.5, "p99": 900},
                "throughput": 950,
                "sum": 0.30000000000000004,
                "name": "fast",
            }
        )
    )
    return str(path)


def test_figures_against_thresholds(figures):
    cases = spec(
        (
            "p50",
            "fail_to_pass",
            {"figure": "/latency_ms/p50", "direction": "lower_is_better", "threshold": 250},
        ),
        (
            "p99",
            "fail_to_pass",
            {"figure": "/latency_ms/p99", "direction": "lower_is_better", "threshold": 500},
        ),
        (
            "throughput",
            "pass_to_pass",
            {"figure": "throughput", "direction": "higher_is_better", "threshold": 950},
        ),
        (
            "exact-decimals",
            "pass_to_pass",
            {"figure": "sum", "direction": "lower_is_better", "threshold": 0.3},
        ),
        (
            "absent",
            "fail_to_pass",
            {"figure": "/latency_ms/p75", "direction": "lower_is_better", "threshold": 1},
        ),
    )
    rows = {row.id: row for row in read("figure", figures, cases)}
    assert {key: row.verdict for key, row in rows.items()} == {
        "p50": "pass",
        "p99": "fail",
        "throughput": "pass",
        "exact-decimals": "fail",
        "absent": "fail",
    }
    assert rows["p50"].measures == {"/latency_ms/p50": 212.5}
    assert "the bar is <= 500" in rows["p99"].why
    result = fold(list(rows.values()), case_set=cases)
    assert result.gradable and result.reward == 0.0


def test_a_single_number_file(tmp_path):
    path = tmp_path / "score.txt"
    path.write_text("0.93\n")
    (row,) = read(
        "figure",
        str(path),
        spec(("score", "fail_to_pass", {"direction": "higher_is_better", "threshold": 0.9})),
    )
    assert row.verdict == "pass"


def test_a_figure_that_is_not_a_number_is_malformed_evidence(figures):
    with pytest.raises(Ungradable) as caught:
        read(
            "figure",
            figures,
            spec(
                (
                    "n",
                    "fail_to_pass",
                    {"figure": "name", "direction": "higher_is_better", "threshold": 1},
                )
            ),
        )
    assert caught.value.code == "EVIDENCE_MALFORMED"


@pytest.mark.parametrize(
    "options",
    [
        {"direction": "higher_is_better", "threshold": 1},
        {"figure": "", "direction": "higher_is_better", "threshold": 1},
        {"figure": "x", "direction": "up", "threshold": 1},
    ],
)
def test_a_case_invalid_against_several_figures_refuses_that_case_only(figures, options):
    cases = spec(
        ("no-figure", "pass_to_pass", options),
        (
            "throughput",
            "fail_to_pass",
            {"figure": "throughput", "direction": "higher_is_better", "threshold": 900},
        ),
    )
    rows = {row.id: row for row in read("figure", figures, cases)}
    assert rows["no-figure"].code == "CASE_INVALID"
    assert rows["throughput"].verdict == "pass"


def test_a_json_array_of_figures_needs_a_figure(tmp_path):
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    options = {"direction": "higher_is_better", "threshold": 1}
    (row,) = read("figure", str(path), spec(("c", "fail_to_pass", options)))
    assert row.code == "CASE_INVALID"
    assert "array" in row.why


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"figure": "x", "direction": "up", "threshold": 1}, "direction: "),
        ({"figure": "x", "direction": "lower_is_better", "threshold": "1"}, "threshold: "),
        ({"figure": "x", "direction": "lower_is_better", "threshold": True}, "threshold: "),
        ({"figure": "x", "direction": "lower_is_better"}, "threshold: "),
        ({"figure": 3, "direction": "lower_is_better", "threshold": 1}, "figure: "),
        ({"figure": "x", "direction": "lower_is_better", "threshold": 1, "unit": "ms"}, "unit: "),
    ],
)
def test_invalid_figure_options_are_case_invalid(figures, options, field):
    (row,) = read("figure", figures, spec(("c", "fail_to_pass", options)))
    assert row.code == "CASE_INVALID"
    assert field in row.why
