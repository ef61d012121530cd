"""Publishing a grade: its files, atomically and conditionally.

:func:`publish` writes ``grade.json``, its CTRF view and, when the grade is
gradable, the reward files to a local path (:mod:`.local`), ``s3://``
(:mod:`.s3`) or another fsspec URL (:mod:`.fsspec_store`), with the same
semantics everywhere (:mod:`.objects` for stores): idempotent, conditional
(a different grade replaces only the one ``replaces`` names), and never a
reward beside another grade. docs/design.md, "The publishing protocol".
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..grade.document import MAX_DOCUMENT_BYTES, GradeDocument
from ..util import safefile, urls
from ..util.lazy import lazy_names
from ..util.target import Target
from .decide import PublishDecision
from .errors import BadStorageOptions, PublishConflict, PublishError
from .result import PublishResult

if TYPE_CHECKING:
    from .objects import Store

__all__ = [
    "BadStorageOptions",
    "PublishConflict",
    "PublishDecision",
    "PublishError",
    "PublishResult",
    "Target",
    "as_target",
    "open_store",
    "publish",
]

# Renamed so that each name means one thing across the package.
__getattr__ = lazy_names(__name__, {}, globals(), {"Decision": "PublishDecision"})[0]

_DIGEST = re.compile(r"^\"?([0-9a-fA-F]{64}|[0-9a-fA-F]{32})\"?$")

#: Protocols served by the S3 store (conditional PUTs through s3fs).
S3_PROTOCOLS = frozenset({"s3", "s3a"})


def as_target(
    target: str | os.PathLike[str] | Target,
    storage_options: Mapping[str, Any] | None = None,
    unconditional: bool = False,
) -> Target:
    """A :class:`Target` from a path, a URL or a Target (whose options are
    merged with ``storage_options``, the latter winning)."""
    if isinstance(target, Target):
        if not storage_options and not unconditional:
            return target
        return Target(
            url=target.url,
            storage_options={**target.options(), **(storage_options or {})},
            unconditional=target.unconditional or unconditional,
        )
    return Target(
        url=os.fspath(target),
        storage_options=dict(storage_options or {}),
        unconditional=unconditional,
    )


def publish(
    document: GradeDocument,
    target: str | os.PathLike[str] | Target,
    *,
    replaces: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
    unconditional: bool = False,
    keep_replaced: bool = False,
    listing: Mapping[str, str] | None = None,
    settle: bool = True,
) -> PublishResult:
    """Publish ``document`` to ``target``; see the module docstring.

    ``target`` is a local path, a ``file://`` URL, an ``s3://bucket/prefix``
    URL, any other fsspec URL, or a :class:`Target`. ``replaces`` is the
    sha256 of the published ``grade.json`` this grade replaces (on object
    stores its ETag works too). ``keep_replaced``: the grade it replaces is
    kept beside the new one as ``grade.previous.json`` (replacing an older
    one there), so a replacement the caller did not ask for by name loses
    nothing. ``unconditional`` allows publishing to a backend that cannot
    write conditionally. ``listing``: on an object store, the objects the
    caller found at the target (name -> ETag), used instead of a listing of
    its own (:mod:`.objects`); a local directory is always looked at under
    its lock, so it is ignored there. ``settle=False``: on an object store,
    the caller takes the last step of the protocol itself, for many runs at
    once (``PublishResult.settled`` then says whether it is left to do).

    Raises :class:`PublishConflict` when another grade is published there and
    ``replaces`` does not name it, :class:`PublishError` when the target
    cannot be written or the document is larger than
    :data:`~truereward.grade.document.MAX_DOCUMENT_BYTES` (nothing is written),
    ``ValueError`` for a malformed ``replaces`` and ``TypeError`` when
    ``document`` is not a :class:`GradeDocument`.
    """
    if not isinstance(document, GradeDocument):
        raise TypeError(f"publish() takes a GradeDocument, got {type(document).__name__}")
    if replaces is not None and not _DIGEST.match(replaces):
        raise ValueError(f"replaces must be a sha256 hex digest (or an ETag), got {replaces!r}")
    if len(document.to_bytes()) > MAX_DOCUMENT_BYTES:
        # Never a grade its readers refuse; truereward.grade.document.publishable
        # gives the refusal the graders publish instead.
        raise PublishError(
            f"{os.fspath(target) if not isinstance(target, Target) else target.url}: "
            f"the grade is {len(document.to_bytes())} bytes, more than the "
            f"{MAX_DOCUMENT_BYTES} bytes a grade document may have; nothing is published"
        )
    url: str = ""
    local: str | None = None
    resolved: Target | None = None
    if not isinstance(target, Target) and not storage_options and not unconditional:
        # A plain local path (a verifier's logs directory, a sweep's run)
        # needs no Target: building one cost more than rendering reward.json.
        url = os.fspath(target)
        local = urls.local_or_none(url) if url else None
    if local is None:
        resolved = as_target(target, storage_options, unconditional)
        url = resolved.url
        local = resolved.path if resolved.is_local else None
    _spares_evidence(document, url, local)
    if local is not None:
        if replaces is not None and len(replaces.strip('"')) != 64:
            raise ValueError("replaces on a local target must be the sha256 of grade.json")
        from .local import publish_local

        return publish_local(document, local, replaces=replaces, keep_replaced=keep_replaced)
    from .objects import publish_objects

    assert resolved is not None  # not local: resolved above
    store = open_store(resolved)
    kept = _keep(store, replaces) if keep_replaced and replaces is not None else None
    result = publish_objects(document, store, replaces=replaces, listing=listing, settle=settle)
    if kept is not None and result.decision is PublishDecision.REPLACE:
        return dataclasses.replace(result, kept=kept)
    return result


def _keep(store: Store, replaces: str) -> str | None:
    """Set the ``grade.json`` that ``replaces`` names aside as
    ``grade.previous.json`` before it is replaced; its name, or ``None``
    when what stands is not that grade (publishing will then refuse)."""
    import hashlib

    from ..grade.files import GRADE, PREVIOUS_GRADE

    data = store.read(GRADE)
    if data is None:
        return None
    wanted = replaces.strip('"').lower()
    if wanted not in (
        hashlib.sha256(data).hexdigest(),
        hashlib.md5(data, usedforsecurity=False).hexdigest(),
    ):
        return None
    store.put(PREVIOUS_GRADE, data)
    return PREVIOUS_GRADE


def _spares_evidence(document: GradeDocument, url: str, local: str | None) -> None:
    """Refuse to publish over a file the grade was read from.

    A run's own ``logs/verifier`` is both a common target and where a
    verifier leaves its reports. A grade read from the ``ctrf.json`` there
    publishes its CTRF view as ``grade-ctrf.json`` (``publication.ctrf``,
    chosen by whoever built the document: :func:`truereward.grade.files.ctrf_view_for`);
    one that would still overwrite a file it was read from is refused, and
    the evidence kept."""
    from ..grade.files import GRADE, REWARD_FILES

    if not document.evidence:
        return
    names = (GRADE, document.publication.ctrf, *REWARD_FILES)
    if local is not None:
        read = [
            path
            for path in (urls.local_or_none(item.path) for item in document.evidence)
            if path is not None
        ]
        ours = [os.path.join(local, name) for name in names]
        clash = sorted(
            mine for mine in ours if any(safefile.same_file(mine, path) for path in read)
        )
    else:
        mapped = {urls.join(url, name) for name in names}
        clash = sorted({item.path for item in document.evidence} & mapped)
    if clash:
        raise PublishError(
            f"{url}: publishing would overwrite {clash[0]}, the evidence this grade "
            "was read from; publish elsewhere (a target of its own) or keep the evidence "
            "under another name"
        )


def open_store(target: Target) -> Store:
    """The object store behind a non-local target."""
    if target.protocol in S3_PROTOCOLS:
        try:
            from .s3 import S3Store
        except ImportError as error:
            raise PublishError(
                f"{target.url}: publishing to S3 needs s3fs (pip install 'truereward[s3]')"
            ) from error
        return S3Store(target.url, target.options())
    try:
        from .fsspec_store import FsspecStore
    except ImportError as error:
        raise PublishError(
            f"{target.url}: publishing to {target.protocol}:// needs fsspec "
            "(pip install 'truereward[fsspec]')"
        ) from error
    return FsspecStore(target.url, target.options(), unconditional=target.unconditional)
