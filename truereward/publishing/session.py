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

Anything standing under one of those names that is not a regular file (a
directory, a FIFO, a symlink) is moved aside as well, never followed or
opened. The directory itself must be a real directory: a symlink is refused
(:class:`~truereward.publishing.errors.PublishError`). A directory that does
not exist yet is left for the publisher to create.
"""

from __future__ import annotations

import errno
import os
import stat

from ..files import GRADE, PREVIOUS_GRADE, REWARD_FILES
from .errors import PublishError

__all__ = ["begin_session"]


def _lstat(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def begin_session(directory: str) -> list[str]:
    """Prepare ``directory`` for a grading session (module docstring).
    Returns what was done, one line each, for the session's log."""
    try:
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return []
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise PublishError(f"{directory}: the logs directory is not a directory") from None
        raise PublishError(f"{directory}: {error.strerror or error}") from error
    done: list[str] = []
    try:
        for name in REWARD_FILES:
            info = _lstat(dir_fd, name)
            if info is None:
                continue
            if stat.S_ISDIR(info.st_mode):
                aside = f".{name}.set-aside"
                os.replace(name, aside, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                done.append(f"moved the directory {name} aside to {aside}")
            else:
                os.unlink(name, dir_fd=dir_fd)
                done.append(f"removed {name}")
        if _lstat(dir_fd, GRADE) is not None:
            # A directory squatting grade.previous.json makes this an OSError.
            os.replace(GRADE, PREVIOUS_GRADE, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            done.append(f"set the standing {GRADE} aside as {PREVIOUS_GRADE}")
        if done:
            os.fsync(dir_fd)
    except OSError as error:
        raise PublishError(f"{directory}: {error.strerror or error}") from error
    finally:
        os.close(dir_fd)
    return done
