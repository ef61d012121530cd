"""Publishing into a local directory: atomic, durable, conditional.

Every file is whole or absent (a temporary file, ``fsync``, ``os.replace``
or ``os.link``, the directory ``fsync``-ed), publishers of one directory
hold its ``flock``, nothing planted under our names is opened or written
through, and the order (reward files cleared first, ``reward.txt`` last)
keeps the set consistent at every instant. docs/design.md, "The publishing
protocol", says each rule and why.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import secrets
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..grade.document import GradeDocument
from ..grade.files import GRADE, NAMES, PREVIOUS_GRADE, REWARD_FILES, REWARD_TXT, render
from ..util import safefile
from .decide import PublishDecision, decide, sha256_hex
from .errors import PublishConflict, PublishError
from .result import PublishResult

__all__ = ["TEMP_PATTERN", "publish_local"]

#: Names of our temporary files; anything matching in a target directory is
#: ours and stale once we hold the directory lock.
TEMP_PATTERN = re.compile(r"^\.truereward\..+\.tmp$")
#: What something planted under one of our names is renamed to (a prefix).
SET_ASIDE_PREFIX = ".set-aside."

#: The largest existing file read back for comparison; anything larger cannot
#: be a grade we wrote, and compares as different.
_READ_LIMIT = 256 << 20

_ABSENT = object()


def _fsync_dir(dir_fd: int) -> None:
    try:
        os.fsync(dir_fd)
    except OSError as error:  # some file systems cannot fsync a directory
        if error.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise


def _ensure_directory(path: str) -> None:
    """Create ``path`` and missing parents, fsyncing each parent so the new
    entries are durable."""
    try:
        if stat.S_ISDIR(os.stat(path).st_mode):
            return  # the usual case: one stat
    except FileNotFoundError:
        pass
    missing: list[Path] = []
    probe = Path(path)
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory)
        except FileExistsError:
            continue
        parent_fd = os.open(directory.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            _fsync_dir(parent_fd)
        finally:
            os.close(parent_fd)
    if not os.path.isdir(path):
        raise PublishError(f"{path}: the target exists and is not a directory")


@contextmanager
def _locked_directory(path: str) -> Iterator[int]:
    """An fd on ``path``, exclusively flock-ed for the duration. The target
    directory itself must not be a symlink: nothing is written through one."""
    try:
        dir_fd = safefile.open_directory(path)
    except safefile.NotAFile:
        raise PublishError(
            f"{path}: the target directory is a symlink; nothing is written through one"
        ) from None
    try:
        fcntl.flock(dir_fd, fcntl.LOCK_EX)
        yield dir_fd
    finally:
        os.close(dir_fd)  # releases the lock


def _read(dir_fd: int, name: str) -> bytes | object | None:
    """The bytes of regular file ``name``; ``None`` when absent; ``_ABSENT``
    when the name is taken by anything else (a symlink, which we replace and
    never follow; a FIFO, which is never opened for reading;
    :func:`_tidy` has moved directories and devices away).
    A file too large to be ours compares different from any body of ours."""
    try:
        return safefile.read_regular(name, limit=_READ_LIMIT, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except safefile.NotAFile:
        return _ABSENT
    except safefile.TooLarge:
        return b"\0"


def _tidy(dir_fd: int, names: Iterable[str]) -> set[str]:
    """One listing of the (locked) directory, acted on: anything under one
    of our ``names``, or under our temporary-file pattern, that is neither a
    regular file nor a symlink (a directory, a FIFO, a device planted there),
    or is a ``grade.json`` larger than any grade (:data:`safefile.LIMIT`),
    is moved aside so publishing can go on (renamed, never deleted: nothing
    that stood there is lost; the directory is fsynced when something was);
    then our temporary files left by a killed publisher are removed. Returns
    the ``names`` present (regular files or symlinks): a name not in the
    listing is not opened, stat-ed or unlinked afterwards (a fresh directory
    costs one ``listdir``). A name a writer outside our lock creates after
    the listing is found where it matters: creating ``grade.json`` with
    ``os.link`` fails on it (a conflict), and the other names are replaced."""
    wanted = frozenset(names)
    present: set[str] = set()
    temps: list[str] = []
    moved = False
    for entry in os.listdir(dir_fd):
        temp = TEMP_PATTERN.match(entry) is not None
        if not temp and entry not in wanted:
            continue
        try:
            info = os.stat(entry, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        mode = info.st_mode
        # A grade.json too large to be a grade (verify reads none larger)
        # could only be compared by reading it: moved aside like a squatter,
        # so it cannot block a publish.
        too_large = entry == GRADE and stat.S_ISREG(mode) and info.st_size > safefile.LIMIT
        if (stat.S_ISREG(mode) and not too_large) or stat.S_ISLNK(mode):
            if temp:
                temps.append(entry)
            else:
                present.add(entry)
            continue
        aside = f"{SET_ASIDE_PREFIX}{entry.lstrip('.')}.{secrets.token_hex(4)}"
        os.replace(entry, aside, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        moved = True
    if moved:
        _fsync_dir(dir_fd)
    for entry in temps:  # regular files or symlinks: squatters were moved aside
        _remove(dir_fd, entry)
    return present


def _write_temp(dir_fd: int, name: str, data: bytes, token: str) -> str:
    """Write and fsync ``data`` to a new temporary file for ``name``; its
    name. ``token`` is the publish's random part of the name (one per
    publish: each of our names is written at most once in one)."""
    temp = f".truereward.{name}.{token}.tmp"
    fd = os.open(
        temp,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
        0o666,
        dir_fd=dir_fd,
    )
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(temp, dir_fd=dir_fd)
        raise
    os.close(fd)
    return temp


def _replace(dir_fd: int, name: str, data: bytes, token: str) -> None:
    """Put ``data`` at ``name`` atomically (replacing a file or symlink)."""
    temp = _write_temp(dir_fd, name, data, token)
    try:
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        os.unlink(temp, dir_fd=dir_fd)
        raise


def _create(dir_fd: int, name: str, data: bytes, token: str) -> bool:
    """Create ``name`` with ``data`` only if the name is free; False if taken."""
    temp = _write_temp(dir_fd, name, data, token)
    try:
        os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError:
        return False
    finally:
        os.unlink(temp, dir_fd=dir_fd)
    return True


def _remove(dir_fd: int, name: str) -> bool:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return False
    return True


def _repair(
    dir_fd: int, bodies: dict[str, bytes], present: set[str], token: str
) -> tuple[list[str], list[str]]:
    """The grade is already published: make the other files match it, in the
    safe order (``present``: the names :func:`_tidy` found). Usually writes
    nothing."""
    written: list[str] = []
    removed: list[str] = []
    # Reward files this grade does not have (all of them beside a refusal;
    # a details file beside a grade without a declared scoring).
    for name in REWARD_FILES:
        if name not in bodies and name in present and _remove(dir_fd, name):
            removed.append(name)
    if removed:
        _fsync_dir(dir_fd)
    for name in bodies:
        if name != GRADE and (name not in present or _read(dir_fd, name) != bodies[name]):
            if name == REWARD_TXT and written:
                _fsync_dir(dir_fd)  # the files before it are durable first
            _replace(dir_fd, name, bodies[name], token)
            written.append(name)
    if written:
        _fsync_dir(dir_fd)
    return written, removed


def publish_local(
    document: GradeDocument,
    directory: str | os.PathLike[str],
    *,
    replaces: str | None = None,
    keep_replaced: bool = False,
) -> PublishResult:
    """Publish ``document`` into ``directory`` (created if missing).

    See :func:`truereward.publish` for the semantics of ``replaces`` and
    ``keep_replaced`` and the module docstring for the guarantees. Raises
    :class:`PublishConflict` (and touches nothing) when another grade is
    published there, and :class:`PublishError` on I/O errors.
    """
    path = os.fspath(directory)
    bodies = render(document)
    ours = bodies[GRADE]
    digest = document.digest  # sha256 of ours, computed once per document
    token = secrets.token_hex(8)
    try:
        _ensure_directory(path)
        with _locked_directory(path) as dir_fd:
            present = _tidy(dir_fd, (*NAMES, PREVIOUS_GRADE) if keep_replaced else NAMES)
            existing = _read(dir_fd, GRADE) if GRADE in present else None
            decision = decide(existing if isinstance(existing, bytes) else None, ours, replaces)
            if decision is PublishDecision.CREATE and existing is _ABSENT:
                decision = PublishDecision.REPLACE  # a symlink squats the name: replace it
            if decision is PublishDecision.CONFLICT:
                raise PublishConflict(
                    path,
                    existing=sha256_hex(existing) if isinstance(existing, bytes) else None,
                    attempted=digest,
                    replaces=replaces,
                )
            if decision is PublishDecision.SAME:
                written, removed = _repair(dir_fd, bodies, present, token)
                return PublishResult(path, digest, decision, tuple(written), tuple(removed))

            # The reward files, and our CTRF view of the grade being replaced,
            # go first: a publish killed after grade.json then shows an
            # incomplete set, never an older grade's files beside a new grade.
            kept = None
            if (
                keep_replaced
                and decision is PublishDecision.REPLACE
                and isinstance(existing, bytes)
            ):
                _replace(dir_fd, PREVIOUS_GRADE, existing, token)
                kept = PREVIOUS_GRADE
            view = document.publication.ctrf
            removed = [
                name for name in (*REWARD_FILES, view) if name in present and _remove(dir_fd, name)
            ]
            if removed or kept:
                _fsync_dir(dir_fd)
            if decision is PublishDecision.CREATE:
                if not _create(dir_fd, GRADE, ours, token):
                    # Someone outside our lock created it meanwhile.
                    raced = _read(dir_fd, GRADE)
                    raise PublishConflict(
                        path,
                        existing=sha256_hex(raced) if isinstance(raced, bytes) else None,
                        attempted=digest,
                        replaces=replaces,
                    )
            else:
                _replace(dir_fd, GRADE, ours, token)
            written = [GRADE]
            for name in bodies:  # the CTRF view and reward.json; reward.txt last
                if name not in (GRADE, REWARD_TXT):
                    _replace(dir_fd, name, bodies[name], token)
                    written.append(name)
            # One directory fsync for the three: each file is whole (written
            # and fsynced before its rename); what must be durable before
            # reward.txt appears is all of them, not their order.
            _fsync_dir(dir_fd)
            if REWARD_TXT in bodies:
                _replace(dir_fd, REWARD_TXT, bodies[REWARD_TXT], token)
                _fsync_dir(dir_fd)
                written.append(REWARD_TXT)
            return PublishResult(path, digest, decision, tuple(written), tuple(removed), kept)
    except PublishError:
        raise
    except OSError as error:
        raise PublishError(f"{path}: {error.strerror or error}") from error
