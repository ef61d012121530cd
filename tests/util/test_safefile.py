"""truereward.util.safefile: reads and directory opens that never follow a final symlink."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from truereward.util import safefile


def test_a_directory_is_opened(tmp_path: Path) -> None:
    fd = safefile.open_directory(str(tmp_path))
    try:
        (tmp_path / "a").write_bytes(b"x")
        assert safefile.read_regular("a", dir_fd=fd) == b"x"
    finally:
        os.close(fd)


def test_a_symlink_to_a_directory_is_not_opened(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(safefile.NotAFile) as caught:
        safefile.open_directory(str(tmp_path / "link"))
    assert caught.value.kind == "a symlink"


def test_a_file_or_nothing_is_not_a_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        safefile.open_directory(str(tmp_path / "file"))
    with pytest.raises(FileNotFoundError):
        safefile.open_directory(str(tmp_path / "absent"))


def test_a_read_is_bounded_and_never_through_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 11)
    (tmp_path / "link").symlink_to(tmp_path / "big")
    with pytest.raises(safefile.TooLarge):
        safefile.read_regular(str(tmp_path / "big"), limit=10)
    with pytest.raises(safefile.NotAFile):
        safefile.read_regular(str(tmp_path / "link"))


def test_inside_follows_every_symlink_below_the_root_and_trusts_the_root_itself(
    tmp_path: Path,
) -> None:
    real = tmp_path / "real-run"
    (real / "logs" / "verifier").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    run = tmp_path / "run"
    run.symlink_to(real)  # the run itself reached through a link: still the run
    (real / "out").symlink_to(tmp_path / "elsewhere")
    (real / "back").symlink_to(real / "logs")
    root = str(run)
    assert safefile.inside(f"{root}/logs/verifier", root)
    assert safefile.inside(root, root) and safefile.inside(f"{root}/", root)
    assert not safefile.inside(f"{root}/out", root)  # a link leading out
    assert not safefile.inside(f"{root}/out/x", root)
    assert safefile.inside(f"{root}/back/verifier", root)  # a link that stays in
    assert not safefile.inside(f"{root}/logs/../..", root)  # '..' resolved, not read as names
    assert not safefile.inside(f"{root}/../elsewhere", root)
    assert safefile.inside(f"{root}/missing/deeper", root)  # nothing there leads out
    assert not safefile.inside(str(tmp_path / "elsewhere"), root)
    assert not safefile.inside(f"{root}-other/logs", root)  # a sibling sharing a prefix


def test_same_file_is_one_existing_file_by_any_path(tmp_path: Path) -> None:
    one, other = tmp_path / "one.json", tmp_path / "other.json"
    one.write_text("{}")
    other.write_text("{}")
    (tmp_path / "link.json").symlink_to(one)
    os.link(one, tmp_path / "hard.json")
    (tmp_path / "dir").mkdir()
    assert safefile.same_file(str(one), str(tmp_path / "link.json"))
    assert safefile.same_file(str(tmp_path / "hard.json"), str(one))
    assert safefile.same_file(str(one), str(tmp_path / "dir" / ".." / "one.json"))
    assert not safefile.same_file(str(one), str(other))  # the same bytes, another file
    assert not safefile.same_file(str(tmp_path / "gone"), str(tmp_path / "gone"))  # no file
    assert not safefile.same_file(str(one), str(tmp_path / "gone"))
    assert not safefile.same_file(str(one), "bad\0name")
