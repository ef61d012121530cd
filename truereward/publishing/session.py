"""Starting a grading session in a local logs directory.

:func:`begin_session` removes the reward files and sets a standing
``grade.json`` aside as ``grade.previous.json`` before any test runs, so
neither an earlier session's grade nor a file the graded agent planted can
become this session's reward, and a session that dies before it publishes
leaves none. docs/design.md, "The publishing protocol" (a session in a logs
directory), gives the rules.
"""

from __future__ import annotations

import errno
import os
import stat

from ..grade.files import CTRF, GRADE, GRADE_CTRF, PREVIOUS_GRADE, REWARD_FILES
from ..util import safefile
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
