"""Publishing to an object store: the same rules as local directories, with
conditional single-request writes instead of renames.

A :class:`Store` is one backend's primitives over our names under one
prefix (``s3.py``, ``fsspec_store.py``); :func:`publish_objects` is the
protocol for all of them: look, decide, clear then write (``grade.json``
conditionally, the one step that decides a race), repair a SAME set, and
settle after the last write (:func:`settle_listed` for many runs at once).
docs/design.md, "The publishing protocol", gives each step and its costs.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Callable, Collection, Mapping
from typing import Protocol

from ..grade.document import GradeDocument
from ..grade.files import GRADE, NAMES, REWARD_FILES, render
from ..util.exceptions import TruerewardError
from .decide import PublishDecision, sha256_hex
from .errors import PublishConflict, PublishError
from .result import PublishResult

__all__ = [
    "MAX_BODY_BYTES",
    "PreconditionFailed",
    "Store",
    "publish_objects",
    "settle_listed",
    "standing_complete",
]

#: The largest body published in one request: well under s3fs's multipart
#: threshold (2 x 50 MiB), above which If-Match would be ignored.
MAX_BODY_BYTES = 32 << 20

_MD5 = re.compile(r"^[0-9a-f]{32}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class PreconditionFailed(TruerewardError):
    """A conditional write or delete was refused by the store."""


class Store(Protocol):
    """The primitives of one backend over our names under one prefix."""

    #: Where, for messages (``s3://bucket/prefix/run``).
    location: str
    #: Whether objects carry metadata (the digest of their grade).
    has_metadata: bool

    def etags(self) -> dict[str, str]:
        """ETag (unquoted) of each of our names present (one listing)."""

    def etag(self, name: str) -> str | None:
        """The ETag (unquoted) of one object, or None when absent."""

    def read(self, name: str) -> bytes | None:
        """The object's bytes, or None when absent."""

    def create(self, name: str, data: bytes) -> None:
        """Write only if absent; :class:`PreconditionFailed` otherwise."""

    def replace(self, name: str, data: bytes, etag: str) -> None:
        """Write only if the object's ETag is ``etag``; else PreconditionFailed."""

    def put(self, name: str, data: bytes, grade: str | None = None) -> None:
        """Write unconditionally; ``grade``: the sha256 of the grade the
        object belongs to, kept in its metadata where the store has any."""

    def grade_of(self, name: str) -> str | None:
        """The grade digest in the object's metadata (``None``: absent, or
        written without one, or the store keeps no metadata)."""

    def delete(self, name: str, etag: str) -> None:
        """Delete only if the ETag is ``etag``; absent is fine."""


def md5_hex(data: bytes) -> str:
    """The MD5 (hex) of ``data``: the ETag S3 gives a single-request upload."""
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


def _decide(
    store: Store, listed: str | None, ours: bytes, replaces: str | None
) -> tuple[PublishDecision, str | None, str | None]:
    """The decision, the ETag to replace, and the published grade's sha256
    when it had to be read."""
    if listed is None:
        decision = PublishDecision.CREATE if replaces is None else PublishDecision.CONFLICT
        return decision, None, None
    if listed == md5_hex(ours):
        return PublishDecision.SAME, listed, None
    wanted = None if replaces is None else replaces.lower().strip('"')
    if wanted is not None and _MD5.match(wanted) and wanted == listed:
        return PublishDecision.REPLACE, listed, None
    existing = store.read(GRADE)
    if existing is None:  # deleted since the listing
        return PublishDecision.CONFLICT, None, None
    if existing == ours:  # an ETag that is not an MD5 (multipart, KMS)
        return PublishDecision.SAME, listed, sha256_hex(existing)
    digest = sha256_hex(existing)
    if wanted is not None and wanted == digest:
        return PublishDecision.REPLACE, listed, digest
    return PublishDecision.CONFLICT, listed, digest


def _owned(listed: Mapping[str, str], bodies: dict[str, bytes]) -> dict[str, str]:
    """The listed objects this grade may touch: its own names and the
    reward files (never a ``ctrf.json`` that is the evidence)."""
    return {name: tag for name, tag in listed.items() if name in bodies or name in REWARD_FILES}


def stale_metadata(store: Store, bodies: dict[str, bytes], listed: Mapping[str, str]) -> set[str]:
    """The reward objects whose bytes are this grade's but whose metadata
    names another grade (a superseded publisher's late write of the same
    value): one HEAD each. The CTRF view needs none: its bytes name their
    grade, so its ETag tells."""
    if not store.has_metadata:
        return set()
    digest = sha256_hex(bodies[GRADE])
    return {
        name
        for name in REWARD_FILES
        if name in bodies
        and listed.get(name) == md5_hex(bodies[name])
        and store.grade_of(name) != digest
    }


def _repair(
    store: Store,
    bodies: dict[str, bytes],
    listed: Mapping[str, str],
    stale: Collection[str] = (),
) -> PublishResult:
    """Make the objects ``listed`` agree with ``bodies`` (the grade that
    stands); ``stale`` are written again whatever their bytes.
    :class:`PreconditionFailed` when a reward object to delete changed
    since it was listed."""
    listed = _owned(listed, bodies)
    digest = sha256_hex(bodies[GRADE])
    written: list[str] = []
    removed: list[str] = []
    for name in REWARD_FILES:  # the reward objects this grade does not have
        if name not in bodies and name in listed:
            store.delete(name, listed[name])
            removed.append(name)
    for name in bodies:
        if name != GRADE and (name in stale or listed.get(name) != md5_hex(bodies[name])):
            store.put(name, bodies[name], digest)
            written.append(name)
    return PublishResult(
        store.location, digest, PublishDecision.SAME, tuple(written), tuple(removed)
    )


#: At most this many looks (step 1) in one publish: the caller's listing or
#: our first, then one more each time the store refuses what the last one
#: implied.
LOOKS = 3


class _LookAgain(TruerewardError):
    """The store refused what the listing implied: list again (step 1)."""


def publish_objects(
    document: GradeDocument,
    store: Store,
    *,
    replaces: str | None = None,
    listing: Mapping[str, str] | None = None,
    settle: bool = True,
) -> PublishResult:
    """Publish ``document`` through ``store``; see the module docstring.

    ``listing``: the objects present at the prefix, name -> ETag (quoted or
    not; names other than ours are ignored), as the caller listed them;
    ``None`` lists the prefix. ``settle=False`` leaves step 5 of a create
    or a replace to the caller, who looks at many runs' sets at once
    (:func:`settle_listed`); the result then says ``settled=False``."""
    bodies = render(document)
    for name, body in bodies.items():
        if len(body) > MAX_BODY_BYTES:
            raise PublishError(
                f"{store.location}/{name}: {len(body)} bytes is above the "
                f"{MAX_BODY_BYTES >> 20} MiB cap for single-request conditional writes"
            )
    removed: list[str] = []
    for look in range(1, LOOKS + 1):
        if look == 1 and listing is not None:
            listed = {name: str(tag).strip('"') for name, tag in listing.items() if name in NAMES}
        else:
            listed = store.etags()
        try:
            return _publish_listed(
                store,
                bodies,
                listed,
                replaces,
                removed,
                supplied=look == 1 and listing is not None,
                last=look == LOOKS,
                settle=settle,
            )
        except _LookAgain:
            continue
    raise AssertionError("unreachable: the last look raises instead of looking again")


def _publish_listed(
    store: Store,
    bodies: dict[str, bytes],
    listed: dict[str, str],
    replaces: str | None,
    removed: list[str],
    *,
    supplied: bool,
    last: bool,
    settle: bool = True,
) -> PublishResult:
    """Steps 2 to 5 on one look (``listed``; ``supplied``: the caller's).
    Raises :class:`_LookAgain` when the store refuses what ``listed``
    implied, unless this is the ``last`` look: then the refusal is a
    conflict. ``removed`` collects the objects deleted over every look."""
    ours = bodies[GRADE]
    digest = sha256_hex(ours)

    def conflict(existing: str | None) -> PublishConflict:
        # Deleting reward objects by ETag may have removed a winner's
        # identical ones: the set is settled to the grade that stands first.
        if removed:
            _settle(store, bodies)
        return PublishConflict(
            store.location, existing=existing, attempted=digest, replaces=replaces
        )

    decision, etag, existing_digest = _decide(store, listed.get(GRADE), ours, replaces)
    if decision is PublishDecision.CONFLICT:
        if supplied and existing_digest is None:
            raise _LookAgain  # decided on the caller's listing alone: look ourselves
        raise conflict(existing_digest or listed.get(GRADE))
    if decision is PublishDecision.SAME:
        # A caller's listing comes from a pass over many runs, which checks
        # each set by its ETags; the metadata is left to `truereward verify`.
        stale = set() if supplied else stale_metadata(store, bodies, listed)
        try:
            repaired = _repair(store, bodies, listed, stale)
        except PreconditionFailed:
            if not last:
                raise _LookAgain from None
            _settle(store, bodies)  # another writer is at work: make the set agree
            return PublishResult(store.location, digest, PublishDecision.SAME, (), tuple(removed))
        if repaired.written or repaired.removed:
            _settle(store, bodies)
        return PublishResult(
            store.location,
            digest,
            PublishDecision.SAME,
            repaired.written,
            (*removed, *repaired.removed),
        )

    # Step 3: nothing this grade does not own may stand beside it, so the
    # reward objects and the CTRF view under our view's name go first.
    view = next(name for name in bodies if name not in (GRADE, *REWARD_FILES))
    try:
        for name in (*REWARD_FILES, view):
            if name in listed:
                store.delete(name, listed[name])
                if name not in removed:
                    removed.append(name)
    except PreconditionFailed:
        if not last:
            raise _LookAgain from None
        raise conflict(existing_digest or listed.get(GRADE)) from None
    try:
        if decision is PublishDecision.CREATE:
            store.create(GRADE, ours)
        else:
            assert etag is not None
            store.replace(GRADE, ours, etag)
    except PreconditionFailed:
        if not last:
            # Another grade was published first, or this is our own write
            # whose first attempt reached the store: the next look tells.
            raise _LookAgain from None
        current = store.read(GRADE)
        if current != ours:
            raise conflict(None if current is None else sha256_hex(current)) from None
    written = _write_rest(store, bodies)
    if not settle:
        return PublishResult(
            store.location, digest, decision, written, tuple(removed), settled=False
        )
    _settle(store, bodies, created=decision is PublishDecision.CREATE)
    return PublishResult(store.location, digest, decision, written, tuple(removed))


def _complete(listed: Mapping[str, str], bodies: dict[str, bytes]) -> bool:
    """True when the listed objects this grade may touch are exactly
    ``bodies`` (by MD5 ETag)."""
    listed = _owned(listed, bodies)
    return set(listed) == set(bodies) and all(
        listed[name] == md5_hex(body) for name, body in bodies.items()
    )


#: At most this many repairs in one settle step. Each is written only after
#: seeing the set disagree with the grade that stands, and is followed by
#: another look; a repair more is needed only when the grade changed again
#: meanwhile.
SETTLE_ROUNDS = 4


def _settle(store: Store, bodies: dict[str, bytes], *, created: bool = False) -> None:
    """Step 5: make the set agree with the ``grade.json`` that stands now.

    After a replace, one listing: the superseded publisher's late file may
    have landed between our look and our last write. After a create
    (``created``) no grade stood before ours, so no earlier publisher has
    files to land late, and one HEAD of ``grade.json`` tells whether ours
    still stands (a replacer naming it may have published while we wrote).
    A repair writes what a grade read a moment ago asks for; a newer grade
    may have been published (and settled) in between, so every repair is
    followed by another look, and the last writer is always the last to
    look."""
    if created and store.etag(GRADE) == md5_hex(bodies[GRADE]):
        return
    for round_number in range(SETTLE_ROUNDS + 1):
        listed = store.etags()
        if _complete(listed, bodies):
            return
        current = store.read(GRADE)
        if current is None:
            return  # nobody deletes a grade; nothing here to settle against
        if current != bodies[GRADE]:
            try:
                bodies = render(GradeDocument.from_bytes(current))
            except ValueError:
                return  # not a grade document of ours: never rewrite around it
            if _complete(listed, bodies):
                return
        if round_number == SETTLE_ROUNDS:
            return  # the grade keeps changing: its latest publisher looks last
        # A refused conditional delete: another publisher is writing now;
        # the next round looks again.
        with contextlib.suppress(PreconditionFailed):
            _repair(store, bodies, listed)


def _write_rest(store: Store, bodies: dict[str, bytes]) -> tuple[str, ...]:
    """After ``grade.json``: the other files of the set, sent together
    where the store can (each a request of its own, in flight at once)."""
    digest = sha256_hex(bodies[GRADE])
    rest = {name: body for name, body in bodies.items() if name != GRADE}
    put_all = getattr(store, "put_all", None)
    if put_all is not None:
        put_all(rest, digest)
    else:
        for name, body in rest.items():  # render's order: reward.txt last
            store.put(name, body, digest)
    return (GRADE, *rest)


def standing_complete(document: GradeDocument, listed: Mapping[str, str]) -> bool:
    """Whether ``listed`` (name -> ETag) shows ``document``'s whole set
    standing: its ``grade.json`` and every file beside it of the right bytes,
    and nothing it does not own (publishing it again would write nothing)."""
    bodies = render(document)
    listed = {name: str(tag).strip('"') for name, tag in listed.items() if name in NAMES}
    return listed.get(GRADE) == md5_hex(bodies[GRADE]) and _complete(listed, bodies)


def settle_listed(
    store: Callable[[], Store],
    document: GradeDocument,
    listed: Mapping[str, str],
    *,
    created: bool,
) -> bool:
    """Step 5 for a set published with ``settle=False``, given a listing
    of its objects taken after its last write (a caller's listing of many
    runs at once): nothing more when the set is complete and its
    ``grade.json`` ours; else the settle step as a publish would have done
    it (module docstring), through the store ``store()`` opens. Returns
    whether the store was asked anything more."""
    if standing_complete(document, listed):
        return False
    _settle(store(), render(document), created=created)
    return True
