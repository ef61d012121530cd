"""The workspace's files, read the way a hostile workspace cannot abuse.

:class:`WorkspaceFiles` resolves a relative path inside the workspace (a
link that leads out fails its criterion, never read) and opens it one
directory at a time without following links; an absolute path is read in a
live workspace only. Every read is bounded and recorded in the grade's
evidence; what it finds is a fact or the run's failure, an I/O error the
grader's. docs/criteria.md and docs/hostile.md, "A workspace and its
criteria", give the rules.
"""

from __future__ import annotations

import errno
import hashlib
import os
from typing import Any, Protocol

from ..codes import Ungradable
from ..grade.document import EvidenceDigest
from ..util import safefile
from ..util.strictjson import StrictJSONError, loads
from .codes import WORKSPACE_MISSING
from .kind import Failure

__all__ = ["EvidenceLike", "WorkspaceFiles", "as_text"]

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class EvidenceLike(Protocol):
    """What :class:`WorkspaceFiles` needs of :class:`truereward.readers.Evidence`."""

    root: str | None
    digests: list[EvidenceDigest]
    max_bytes: int

    @property
    def is_local(self) -> bool: ...

    def location(self, relative: str | None = None) -> str: ...

    def describe(self, relative: str | None = None) -> str: ...

    def exists(self, relative: str | None = None) -> bool: ...

    def is_dir(self, relative: str | None = None) -> bool: ...

    def read_bytes(self, relative: str | None = None) -> bytes: ...

    def refuse_outside(self, path: str, where: str) -> None: ...


def as_text(data: bytes, shown: str, *, universal: bool = True) -> str:
    """``data`` as Python's text mode reads a file: UTF-8 (a leading BOM
    dropped), universal newlines (``\\r\\n`` and ``\\r`` become ``\\n``;
    left as they are when not ``universal``). Bytes that are not UTF-8 are
    the run's failure."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise Failure(f"{shown} is not UTF-8 text (byte {error.start})") from None
    if universal and "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


class WorkspaceFiles:
    """The files of one workspace (module docstring). ``live``: the
    workspace is the environment a verifier runs in (absolute paths,
    commands and HTTP allowed), not a stored copy of a sweep's run."""

    def __init__(self, evidence: EvidenceLike, *, live: bool) -> None:
        self.evidence = evidence
        self.live = live
        self._root: str | None = None
        self._seen: set[tuple[str, str]] = set()

    # --- the workspace itself -----------------------------------------------------------------

    def check(self) -> None:
        """``WORKSPACE_MISSING`` when the workspace is not a directory (or
        absent); ``EVIDENCE_MALFORMED`` when a stored run's workspace is a
        symlink or leads out of the run."""
        evidence = self.evidence
        where = evidence.describe()
        if not evidence.exists():
            raise Ungradable(WORKSPACE_MISSING, f"{where}: the workspace is not there")
        if evidence.is_local:
            location = evidence.location()
            if not self.live and os.path.islink(location):
                raise Ungradable(
                    "EVIDENCE_MALFORMED",
                    f"{where}: a symlink: a stored run's workspace is read without following links",
                )
            evidence.refuse_outside(location, where)
            if not os.path.isdir(location):
                raise Ungradable(WORKSPACE_MISSING, f"{where}: not a directory")
            self._root = os.path.realpath(location)
        elif not evidence.is_dir():
            raise Ungradable(WORKSPACE_MISSING, f"{where}: not a directory")

    @property
    def root(self) -> str:
        """The workspace's real path (local workspaces, after :meth:`check`)."""
        if self._root is None:
            raise RuntimeError("the workspace is not local, or was not checked")
        return self._root

    # --- one path -----------------------------------------------------------------------------

    def shown(self, path: str) -> str:
        """How messages and digests name ``path``."""
        return path if path.startswith("/") else self.evidence.describe(path)

    def _absolute_allowed(self, path: str) -> None:
        if path.startswith("/") and not self.live:
            raise Ungradable(
                "CASE_INVALID",
                f"{path}: an absolute path names a file of a live environment; over a stored "
                "run only paths inside the workspace are read",
            )

    def resolve(self, path: str) -> tuple[str, list[str] | None]:
        """The real path of local ``path`` and, for a workspace path, its
        components below the workspace (``None`` for an absolute path).
        :class:`~.kind.Failure` when a workspace path leads out of it."""
        self._absolute_allowed(path)
        if path.startswith("/"):
            return os.path.realpath(path), None
        root = self.root
        resolved = os.path.realpath(os.path.join(root, path))
        if not safefile.inside(resolved, root):
            raise Failure(
                f"{self.shown(path)} leads out of the workspace through a symlink "
                f"(to {resolved}); it is not read"
            )
        below = os.path.relpath(resolved, root)
        return resolved, [] if below == "." else below.split(os.sep)

    def exists(self, path: str) -> bool:
        """Whether ``path`` exists (a file, a directory, anything; a link is
        followed as far as it stays inside)."""
        if not self.evidence.is_local:
            self._absolute_allowed(path)
            return self.evidence.exists(path)
        resolved, _ = self.resolve(path)
        return os.path.exists(resolved)

    def directory(self, path: str | None) -> str:
        """The real path of the workspace directory ``path`` (the workspace
        itself for ``None``), for a command's working directory: it must
        exist and be a directory (:class:`~.kind.Failure` otherwise), and
        stay inside the workspace."""
        if path is None:
            return self.root
        if path.startswith("/"):
            raise Ungradable("CASE_INVALID", f"cwd {path!r}: a directory inside the workspace")
        resolved, _ = self.resolve(path)
        if not os.path.isdir(resolved):
            raise Failure(f"{self.shown(path)} is not a directory of the workspace")
        return resolved

    def read(self, path: str, *, limit: int | None = None) -> bytes | None:
        """The bytes of the file ``path``, or ``None`` when it is absent
        (module docstring for the rest)."""
        bound = min(limit or self.evidence.max_bytes, self.evidence.max_bytes)
        shown = self.shown(path)
        if not self.evidence.is_local:
            self._absolute_allowed(path)
            try:
                data = self.evidence.read_bytes(path)
            except Ungradable as refusal:
                if refusal.code == "EVIDENCE_MISSING":
                    return None
                if refusal.code == "EVIDENCE_MALFORMED":
                    raise Failure(refusal.why) from None
                raise
            if len(data) > bound:
                raise Failure(f"{shown}: {len(data)} bytes is more than the {bound} bytes read")
            return data
        resolved, parts = self.resolve(path)
        try:
            data = self._read_local(resolved, parts, bound)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except safefile.NotAFile as error:
            raise Failure(f"{shown}: {error.kind}, not a regular file") from None
        except safefile.TooLarge as error:
            raise Failure(
                f"{shown}: {error.size} bytes is more than the {bound} bytes read"
            ) from None
        except PermissionError as error:
            raise Failure(f"{shown}: not readable by the verifier ({error.strerror})") from None
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise Failure(f"{shown}: changed into a symlink while it was read") from None
            raise Ungradable("EVIDENCE_UNREADABLE", f"{shown}: {error.strerror or error}") from None
        self._record(shown, data)
        return data

    def need(self, path: str, *, limit: int | None = None) -> bytes:
        """:meth:`read`, but an absent file is the run's failure ("does not exist")."""
        data = self.read(path, limit=limit)
        if data is None:
            raise Failure(f"{self.shown(path)} does not exist")
        return data

    def text(self, path: str, *, limit: int | None = None) -> str:
        """The file's text (:func:`as_text`); absent as :meth:`need`."""
        return as_text(self.need(path, limit=limit), self.shown(path))

    def json(self, path: str) -> Any:
        """The file's strict JSON; absent as :meth:`need`, not JSON the run's failure."""
        try:
            return loads(self.need(path))
        except StrictJSONError as error:
            raise Failure(f"{self.shown(path)} is not JSON: {error}") from None

    def _read_local(self, resolved: str, parts: list[str] | None, limit: int) -> bytes:
        if parts is None:
            return safefile.read_regular(resolved, limit=limit)
        if not parts:
            raise safefile.NotAFile(resolved, "a directory")
        fd = safefile.open_directory(self.root)
        try:
            for part in parts[:-1]:
                inner = os.open(part, _DIRECTORY_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = inner
            return safefile.read_regular(parts[-1], limit=limit, dir_fd=fd)
        finally:
            os.close(fd)

    def _record(self, shown: str, data: bytes) -> None:
        digest = hashlib.sha256(data).hexdigest()
        if (shown, digest) not in self._seen:
            self._seen.add((shown, digest))
            self.evidence.digests.append(EvidenceDigest(path=shown, sha256=digest, size=len(data)))
