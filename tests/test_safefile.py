"""truereward.safefile: reads and directory opens that never follow a final symlink."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from truereward import safefile


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
