"""Publishing to a local directory: files, order, idempotence, conflicts,
symlinks, modes, durability."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest
from pydantic import ValidationError

from truereward import PublishConflict, PublishError, grade_document, publish
from truereward.publishing import PublishDecision
from truereward.verify import verify_published

FILES = ("grade.json", "ctrf.json", "reward.json", "reward.txt")


def gradable(row, reward=1.0):
    return grade_document(
        [row("a", verdict="pass" if reward == 1.0 else "fail"), row("g", "pass_to_pass")]
    )


def ungradable(row):
    return grade_document([row("a"), row("b", verdict="ungradable", code="GRADER_TIMEOUT")])


def snapshot(directory: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every entry's bytes, inode and mtime: what 'touches nothing' compares."""
    out = {}
    for entry in sorted(directory.iterdir()):
        info = entry.lstat()
        data = os.readlink(entry).encode() if entry.is_symlink() else entry.read_bytes()
        out[entry.name] = (data, info.st_ino, info.st_mtime_ns)
    return out


def test_gradable_grade_writes_four_files(row, tmp_path):
    document = gradable(row)
    result = publish(document, tmp_path / "logs")
    assert result.decision is PublishDecision.CREATE
    assert result.written == FILES
    directory = tmp_path / "logs"
    assert sorted(path.name for path in directory.iterdir()) == sorted(FILES)
    assert (directory / "grade.json").read_bytes() == document.to_bytes()
    assert (directory / "reward.txt").read_bytes() == b"1.0\n"
    # Harbor's contract: one key, the same value as reward.txt.
    assert json.loads((directory / "reward.json").read_text()) == {"reward": 1.0}
    assert verify_published(directory)[1] == []


def test_zero_reward_text(row, tmp_path):
    publish(gradable(row, reward=0.0), tmp_path)
    assert (tmp_path / "reward.txt").read_bytes() == b"0.0\n"
    assert json.loads((tmp_path / "reward.json").read_text()) == {"reward": 0.0}


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ([], {"reward": 0.0}),
        (["fix_rate", "guards_hold"], {"reward": 0.0, "fix_rate": 0.0, "guards_hold": 1}),
        (["case_fraction"], {"reward": 0.0, "case_fraction": 0.5}),
    ],
)
def test_reward_keys_add_named_figures_to_reward_json(row, tmp_path, keys, expected):
    rows = [row("a", verdict="fail"), row("g", "pass_to_pass")]
    document = grade_document(rows, publication={"reward_keys": keys})
    publish(document, tmp_path)
    flat = json.loads((tmp_path / "reward.json").read_text())
    assert flat == expected
    assert all(
        isinstance(value, int | float) and not isinstance(value, bool) for value in flat.values()
    )
    assert (tmp_path / "reward.txt").read_bytes() == b"0.0\n"
    assert verify_published(tmp_path)[1] == []
    # A reward.json with other keys than the grade names is a disagreement.
    (tmp_path / "reward.json").write_text(json.dumps({"reward": 0.0, "extra": 1}))
    assert [item.where for item in verify_published(tmp_path)[1]] == ["reward.json"]


def test_every_named_figure_is_a_finite_number(row, tmp_path):
    rows = [row("g", "pass_to_pass"), row("a", verdict="pass")]
    document = grade_document(rows, publication={"reward_keys": ["fix_rate", "case_fraction"]})
    publish(document, tmp_path)
    assert json.loads((tmp_path / "reward.json").read_text()) == {
        "reward": 1.0,
        "fix_rate": 1.0,
        "case_fraction": 1.0,
    }


def test_ungradable_grade_writes_no_reward_file(row, tmp_path):
    result = publish(ungradable(row), tmp_path)
    assert result.written == ("grade.json", "ctrf.json")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["ctrf.json", "grade.json"]


def test_ungradable_grade_removes_stale_reward_files_first(row, tmp_path):
    (tmp_path / "reward.txt").write_text("1.0\n")
    (tmp_path / "reward.json").write_text('{"reward": 1.0}')
    result = publish(ungradable(row), tmp_path)
    assert result.removed == ("reward.txt", "reward.json")
    assert not (tmp_path / "reward.txt").exists() and not (tmp_path / "reward.json").exists()
    assert verify_published(tmp_path)[1] == []


def test_republishing_the_same_grade_writes_nothing(row, tmp_path):
    document = gradable(row)
    publish(document, tmp_path)
    before = snapshot(tmp_path)
    result = publish(grade_document([row("g", "pass_to_pass"), row("a")]), tmp_path)
    assert result.decision is PublishDecision.SAME and not result.changed
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("other", ["gradable", "ungradable"])
def test_a_different_grade_conflicts_and_touches_nothing(row, tmp_path, other):
    first = gradable(row, reward=0.0)
    publish(first, tmp_path)
    before = snapshot(tmp_path)
    second = gradable(row) if other == "gradable" else ungradable(row)
    with pytest.raises(PublishConflict) as caught:
        publish(second, tmp_path)
    assert caught.value.existing == first.digest
    assert caught.value.attempted == second.digest
    assert snapshot(tmp_path) == before


def test_replaces_names_the_grade_it_replaces(row, tmp_path):
    first, second, third = ungradable(row), gradable(row), gradable(row, reward=0.0)
    publish(first, tmp_path)
    result = publish(second, tmp_path, replaces=first.digest)
    assert result.decision is PublishDecision.REPLACE
    assert (tmp_path / "reward.txt").read_text() == "1.0\n"
    publish(third, tmp_path, replaces=second.digest)
    assert (tmp_path / "reward.txt").read_text() == "0.0\n"
    assert verify_published(tmp_path)[1] == []


def test_a_stale_replaces_digest_conflicts_and_changes_nothing(row, tmp_path):
    first, second = ungradable(row), gradable(row)
    publish(first, tmp_path)
    publish(second, tmp_path, replaces=first.digest)
    before = snapshot(tmp_path)
    with pytest.raises(PublishConflict):
        publish(gradable(row, reward=0.0), tmp_path, replaces=first.digest)
    assert snapshot(tmp_path) == before


def test_replaces_with_nothing_published_conflicts(row, tmp_path):
    with pytest.raises(PublishConflict, match="no grade is published"):
        publish(gradable(row), tmp_path, replaces="0" * 64)
    assert list(tmp_path.iterdir()) == []


def test_replacing_gradable_with_ungradable_removes_the_reward(row, tmp_path):
    first = gradable(row)
    publish(first, tmp_path)
    result = publish(ungradable(row), tmp_path, replaces=first.digest)
    # The older grade's CTRF view goes too, before the new grade.json.
    assert result.removed == ("reward.txt", "reward.json", "ctrf.json")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["ctrf.json", "grade.json"]


def test_a_symlink_planted_at_reward_txt_is_replaced_and_its_target_untouched(row, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "reward.txt").symlink_to(outside)
    (logs / "grade.json").symlink_to(outside)
    publish(gradable(row), logs)
    assert outside.read_text() == "precious\n"
    for name in FILES:
        assert not (logs / name).is_symlink()
    assert (logs / "reward.txt").read_text() == "1.0\n"


def test_a_symlink_at_reward_txt_is_removed_for_an_ungradable_grade(row, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "reward.txt").symlink_to(outside)
    publish(ungradable(row), logs)
    assert not os.path.lexists(logs / "reward.txt")
    assert outside.read_text() == "precious\n"


def test_files_are_0644_under_umask_022(row, tmp_path):
    old = os.umask(0o022)
    try:
        publish(gradable(row), tmp_path / "new" / "logs")
    finally:
        os.umask(old)
    for name in FILES:
        assert stat.S_IMODE((tmp_path / "new" / "logs" / name).stat().st_mode) == 0o644


def test_files_respect_a_stricter_umask(row, tmp_path):
    old = os.umask(0o077)
    try:
        publish(gradable(row), tmp_path)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "grade.json").stat().st_mode) == 0o600


def test_stale_temp_files_of_ours_are_cleaned_up(row, tmp_path):
    (tmp_path / ".truereward.grade.json.deadbeef.tmp").write_text("half")
    (tmp_path / ".someone-elses.tmp").write_text("theirs")
    publish(gradable(row), tmp_path)
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == sorted([*FILES, ".someone-elses.tmp"])


def test_republish_repairs_an_interrupted_publish(row, tmp_path):
    document = gradable(row)
    publish(document, tmp_path)
    (tmp_path / "reward.txt").unlink()
    (tmp_path / "ctrf.json").write_text("{}")
    result = publish(document, tmp_path)
    assert result.decision is PublishDecision.SAME
    assert result.written == ("ctrf.json", "reward.txt")
    assert verify_published(tmp_path)[1] == []


def test_files_and_directory_are_fsynced(row, tmp_path, monkeypatch):
    synced: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd):
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    publish(gradable(row), tmp_path)
    directory = str(tmp_path)
    temp_files = [path for path in synced if Path(path).parent == tmp_path]
    assert len(temp_files) == 4  # each body, before its rename
    assert all(Path(path).name.startswith(".truereward.") for path in temp_files)
    # grade.json, the CTRF view and reward.json, one directory fsync that makes
    # all three durable, then reward.txt, and the directory again.
    kinds = ["dir" if path == directory else Path(path).name.split(".")[2] for path in synced]
    assert kinds == ["grade", "ctrf", "reward", "dir", "reward", "dir"], synced


def test_reward_txt_is_written_last(row, tmp_path, monkeypatch):
    order: list[str] = []
    real_replace = os.replace

    def recording_replace(src, dst, **kwargs):
        order.append(os.fspath(dst))
        return real_replace(src, dst, **kwargs)

    monkeypatch.setattr(os, "replace", recording_replace)
    first = ungradable(row)
    publish(first, tmp_path)
    publish(gradable(row), tmp_path, replaces=first.digest)
    assert order[-4:] == ["grade.json", "ctrf.json", "reward.json", "reward.txt"]


def test_file_url_targets(row, tmp_path):
    publish(gradable(row), f"file://{tmp_path}/x")
    assert (tmp_path / "x" / "reward.txt").exists()


def test_target_that_is_a_file_is_an_error(row, tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(PublishError, match="not a directory"):
        publish(gradable(row), tmp_path / "f")


@pytest.mark.parametrize("where", ["under-a-file", "proc"])
def test_unwritable_target_is_a_publish_error(row, tmp_path, where):
    (tmp_path / "f").write_text("")
    # /proc refuses new directories even to root, so this holds whoever runs it.
    target = tmp_path / "f" / "logs" if where == "under-a-file" else Path("/proc/truereward-x")
    with pytest.raises(PublishError):
        publish(gradable(row), target)


def test_malformed_replaces_is_a_value_error(row, tmp_path):
    with pytest.raises(ValueError, match="sha256"):
        publish(gradable(row), tmp_path, replaces="abc")


def test_racing_threads_have_exactly_one_winner(row, tmp_path):
    documents = [
        grade_document(
            [row("a", verdict="pass" if i % 2 else "fail"), row(f"g{i}", "pass_to_pass")]
        )
        for i in range(16)
    ]
    outcomes: list[object] = [None] * len(documents)
    start = threading.Barrier(len(documents))

    def run(index):
        start.wait()
        try:
            outcomes[index] = publish(documents[index], tmp_path)
        except PublishConflict as error:
            outcomes[index] = error

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(documents))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [i for i, outcome in enumerate(outcomes) if not isinstance(outcome, PublishConflict)]
    assert len(winners) == 1
    assert (tmp_path / "grade.json").read_bytes() == documents[winners[0]].to_bytes()
    assert verify_published(tmp_path)[1] == []


def test_a_document_cannot_be_changed_after_it_is_built_so_what_is_published_was_validated(
    tmp_path,
):
    # Rows and documents are immutable all the way down (truereward.util.frozen),
    # so publish need not read its own bytes back and fold them again.
    from truereward import CaseResult, grade_document, publish
    from truereward.verify import verify_published

    row = CaseResult(
        id="a",
        kind="fail_to_pass",
        verdict="pass",
        measures={"ms": 1.0},
        observations=[{"name": "n", "verdict": "ok"}],
        containment={"nested": [{"x": 1}]},
    )
    document = grade_document([row])
    attempts = [
        lambda: row.measures.__setitem__("ms", float("nan")),
        lambda: row.measures.update(ms=2.0),
        lambda: row.containment["nested"][0].__setitem__("x", 2),
        lambda: document.detail.append(row),
        lambda: document.refusals.append(None),
        lambda: document.failed.fail_to_pass.append("a"),
        lambda: document.cases.fail_to_pass.__setattr__("passed", 5),
        lambda: document.detail[0].observations.append(None),
    ]
    for attempt in attempts:
        with pytest.raises((TypeError, AttributeError, ValidationError)):
            attempt()
    publish(document, tmp_path / "run")
    stored, found = verify_published(tmp_path / "run")
    assert found == [] and stored == document and stored.detail[0].measures == {"ms": 1.0}


def test_publishing_over_the_evidence_it_was_read_from_is_refused(tmp_path):
    import json

    from truereward import PublishError, publish
    from truereward.readers import grade_evidence

    logs = tmp_path / "run" / "logs" / "verifier"
    logs.mkdir(parents=True)
    report = {
        "reportFormat": "CTRF",
        "specVersion": "1.0.0",
        "results": {
            "tool": {"name": "pytest"},
            "summary": {
                "tests": 1,
                "passed": 1,
                "failed": 0,
                "skipped": 0,
                "pending": 0,
                "other": 0,
                "start": 0,
                "stop": 1,
            },
            "tests": [{"name": "tests/test_a.py::test_a", "status": "passed", "duration": 1}],
        },
    }
    evidence = logs / "ctrf.json"
    evidence.write_text(json.dumps(report))
    before = evidence.read_bytes()
    document = grade_evidence(
        "ctrf", str(evidence), [{"id": "tests/test_a.py::test_a", "kind": "fail_to_pass"}]
    )
    assert document.reward == 1.0 and document.evidence
    with pytest.raises(PublishError, match=r"would overwrite .*ctrf\.json, the evidence"):
        publish(document, logs)
    assert evidence.read_bytes() == before
    assert sorted(path.name for path in logs.iterdir()) == ["ctrf.json"]
    publish(document, tmp_path / "elsewhere")  # a target of its own is fine
    assert (tmp_path / "elsewhere" / "reward.txt").read_text() == "1.0\n"
