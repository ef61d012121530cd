"""Publishing a grade: its four files, atomically and conditionally.

``publish(document, target, *, replaces=None, storage_options=None)`` writes
``grade.json``, ``ctrf.json`` and, when the grade is gradable, ``reward.json``
and ``reward.txt`` (last) to ``target``: a local path, a ``file://`` URL, or
(with the fsspec backend) another fsspec URL.

- **Idempotent**: publishing the same grade again succeeds and writes nothing
  (it only repairs files an interrupted earlier publish left unfinished).
- **Conditional**: publishing a different grade over an existing one raises
  :class:`PublishConflict` and touches no published file, unless
  ``replaces`` is the sha256 (hex) of the published ``grade.json``
  (:attr:`GradeDocument.digest`): that is how a retried, now-gradable grade
  replaces an ungradable one, and how two racing publishers end with exactly
  one winner.
- **No stale reward**: before a new ``grade.json`` is put in place, any
  ``reward.txt``/``reward.json`` at the target is removed, so an ungradable
  grade never stands beside a reward.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ..document import GradeDocument
from .decide import Decision
from .errors import PublishConflict, PublishError
from .result import PublishResult

__all__ = ["Decision", "PublishConflict", "PublishError", "PublishResult", "publish"]

_DIGEST = re.compile(r"^[0-9a-fA-F]{64}$")


def _local_path(target: str | os.PathLike[str]) -> str | None:
    """The local path ``target`` names, or None for another protocol."""
    if not isinstance(target, str):
        return os.fspath(target)
    if "://" not in target:
        return target
    protocol, _, rest = target.partition("://")
    if protocol in ("file", "local"):
        return rest
    return None


def publish(
    document: GradeDocument,
    target: str | os.PathLike[str],
    *,
    replaces: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> PublishResult:
    """Publish ``document`` to ``target``; see the module docstring.

    Raises :class:`PublishConflict` when another grade is published there and
    ``replaces`` does not name it, :class:`PublishError` when the target
    cannot be written, ``ValueError`` for a malformed ``replaces`` and
    ``TypeError`` when ``document`` is not a :class:`GradeDocument`.
    """
    if not isinstance(document, GradeDocument):
        raise TypeError(f"publish() takes a GradeDocument, got {type(document).__name__}")
    if replaces is not None and not _DIGEST.match(replaces):
        raise ValueError(f"replaces must be a sha256 hex digest, got {replaces!r}")
    path = _local_path(target)
    if path is not None:
        from .local import publish_local

        return publish_local(document, path, replaces=replaces)
    protocol = str(target).partition("://")[0]
    raise PublishError(
        f"{target}: publishing to {protocol}:// is not supported by this version "
        "(local directories and file:// URLs are)"
    )
