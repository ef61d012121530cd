"""Starting a grading session in a local logs directory.

A verifier grades a run in its logs directory (``/logs/verifier``), where
files may already stand: a grade and reward files of an earlier session, or
files the graded agent planted there before the verifier ran. None of them
may become this session's reward, and a session that dies before it
publishes (pytest-timeout's thread method, ``kill -9``) must leave no reward
at all. So before any test runs, :func:`begin_session`:

- removes ``reward.txt`` and ``reward.json`` (as Harbor does before it runs
  a verifier), so a session that never publishes leaves no reward file for
  anyone to read;
- sets the standing ``grade.json`` aside as ``grade.previous.json``
  (replacing an older one): it is kept, never taken for this session's
  grade, and ``truereward verify`` says that a session began and did not
  publish when it finds it without a ``grade.json``.

Nothing standing under these names is followed or opened. A reward file
that is a directory is moved aside to a name nothing stands under
(``.reward.txt.set-aside``, else ``.reward.txt.set-aside.2``, ...); a
directory standing as ``grade.previous.json`` (where ``rename`` could not
put the grade) is moved aside the same way first; a ``ctrf.json`` or
``grade-ctrf.json`` that is not a regular file (a directory, a symlink, a
FIFO) is moved aside too, so neither pytest-json-ctrf nor the publisher
writes through it or fails on it (a regular one is left, to be replaced).
What the graded agent left under these names never stops the session from
publishing its grade.

The directory itself must be a real directory: a symlink is refused
(:class:`~truereward.publishing.errors.PublishError`). A directory that does
not exist yet is left for the publisher to create.
"""

from __future__ import annotations

import errno
import os
import stat

from .. import safefile
from ..files import CTRF, GRADE, GRADE_CTRF, PREVIOUS_GRADE, REWARD_FILES
from .errors import PublishError

__all__ = ["begin_session"]


def _lstat(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _free_name(dir_fd: int, base: str) -> str:
    """``base``, else ``base.2``, ``base.3``, ...: the first name nothing stands under."""
    for number in range(1, 1000):
        name = base if number == 1 else f"{base}.{number}"
        if _lstat(dir_fd, name) is None:
            return name
    raise OSError(errno.EEXIST, f"no free name for {base}")


def _move_aside(dir_fd: int, name: str) -> str:
    aside = _free_name(dir_fd, f".{name}.set-aside")
    os.replace(name, aside, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    return aside


def begin_session(directory: str) -> list[str]:
    """Prepare ``directory`` for a grading session (module docstring).
    Returns what was done, one line each, for the session's log."""
    try:
        dir_fd = safefile.open_directory(directory)
    except FileNotFoundError:
        return []
    except (safefile.NotAFile, NotADirectoryError):
        raise PublishError(f"{directory}: the logs directory is not a directory") from None
    except OSError as error:
        raise PublishError(f"{directory}: {error.strerror or error}") from error
    done: list[str] = []
    try:
        for name in REWARD_FILES:
            info = _lstat(dir_fd, name)
            if info is None:
                continue
            if stat.S_ISDIR(info.st_mode):
                done.append(f"moved the directory {name} aside to {_move_aside(dir_fd, name)}")
            else:
                os.unlink(name, dir_fd=dir_fd)
                done.append(f"removed {name}")
        for name in (CTRF, GRADE_CTRF):
            info = _lstat(dir_fd, name)
            if info is not None and not stat.S_ISREG(info.st_mode):
                aside = _move_aside(dir_fd, name)
                done.append(f"moved {name}, not a regular file, aside to {aside}")
        grade = _lstat(dir_fd, GRADE)
        if grade is not None:
            previous = _lstat(dir_fd, PREVIOUS_GRADE)
            if previous is not None and (
                stat.S_ISDIR(previous.st_mode) or stat.S_ISDIR(grade.st_mode)
            ):
                # rename() puts neither a directory over a file nor a file over a directory.
                aside = _move_aside(dir_fd, PREVIOUS_GRADE)
                done.append(f"moved the {PREVIOUS_GRADE} that stood aside to {aside}")
            os.replace(GRADE, PREVIOUS_GRADE, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            done.append(f"set the standing {GRADE} aside as {PREVIOUS_GRADE}")
        if done:
            os.fsync(dir_fd)
    except OSError as error:
        raise PublishError(f"{directory}: {error.strerror or error}") from error
    finally:
        os.close(dir_fd)
    return done
