"""Publishing to an object store: the same rules as local directories, with
conditional single-request writes instead of renames.

A :class:`Store` is one backend's handful of primitives over our names
under one prefix (``s3.py`` for S3, ``fsspec_store.py`` for other fsspec
filesystems). :func:`publish_objects` is the protocol, the same for all:

0. A gradable grade published without ``replaces`` first tries the step
   that decides a race, writing ``grade.json`` with ``If-None-Match: *``.
   When that succeeds no grade was published, and ``ctrf.json``,
   ``reward.json`` and ``reward.txt`` follow (then step 5). Reward objects
   some other writer left there (with no grade beside them) are
   overwritten, not deleted first: the publishing rule
   (``docs/design.md``, "From evidence to published reward") deletes
   first only before an ungradable grade, and ``reward.txt`` is
   still the last write. When the create is refused, the protocol below
   runs from step 1 (a republish of the same grade then costs that refused
   PUT and one listing).
1. One listing of the prefix gives the ETag of each of our objects
   present.
2. :func:`~truereward.publishing.decide.decide` on the published
   ``grade.json``: SAME when its ETag is the MD5 of our bytes (or its bytes
   are ours), REPLACE when ``replaces`` names it (its sha256, read back, or
   its ETag), CREATE when there is none, else CONFLICT, which raises
   :class:`PublishConflict` before anything is touched.
3. CREATE/REPLACE: the stale ``reward.txt`` and ``reward.json`` the listing
   showed are deleted, each conditionally on the ETag listed (a changed
   object means another publisher is at work: conflict); then ``grade.json``
   is written with ``If-None-Match: *`` (create) or ``If-Match: <etag>``
   (replace), the one step that decides a race; then ``ctrf.json``,
   ``reward.json`` and ``reward.txt`` last.
4. SAME: nothing is written, except what an interrupted earlier publish left
   unfinished, or a superseded publisher's late write left behind: objects
   whose ETag is not the MD5 of their expected body, reward objects beside
   an ungradable grade, and reward objects of the right bytes whose metadata
   names another grade (one HEAD each of ``reward.txt`` and ``reward.json``:
   a republish costs the refused PUT, a listing and those HEADs).

Every object after ``grade.json`` carries, in its metadata
(``x-amz-meta-truereward-grade`` on S3), the sha256 of the grade it belongs
to: a reader of ``reward.txt`` alone can check it names the ``grade.json``
that stands, and ``truereward verify`` does.
5. Settle: the files after ``grade.json`` are plain PUTs, so a publisher
   that replaced our grade (naming it in ``replaces``) while we were still
   writing can see our late ``ctrf.json`` or reward objects land beside its
   grade. So after our last write we look again: after a step-0 create, one
   HEAD of ``grade.json`` (is ours still the grade?); after a decision
   taken on a listing, a listing (a late file may have landed between that
   listing and our ``grade.json`` write). When the set is not the one the
   standing ``grade.json`` describes, we read that grade and rewrite the set
   from it (reward objects beside a refusal are deleted). Whoever writes
   last also checks last, so the set ends consistent. A fresh gradable run
   costs four PUTs and a HEAD (five requests), a fresh ungradable run two
   listings and two PUTs.

A conditional write that fails after a retry of our own request (the first
attempt reached the store but its answer was lost) is recognised by reading
``grade.json`` back: if it holds our bytes, the write was ours.

Bodies are sent in single requests from memory; a body above
:data:`MAX_BODY_BYTES` is refused (multipart uploads would ignore
``If-Match``).

A publisher that loses the race after deleting stale reward objects (a
conditional delete cannot tell the winner's identical bytes from the stale
ones) settles the set to the winning grade before it raises
:class:`PublishConflict`.

Known limit: between a late write of a superseded publisher and that
publisher's next look (step 5), its file can stand beside the newer grade
for the length of a request or two, and stays there if that process dies in
between; publishing again at the target repairs it. A settle step gives up
after :data:`SETTLE_ROUNDS` rounds of a grade that keeps changing under it.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Collection
from typing import Protocol

from ..document import GradeDocument
from ..files import GRADE, REWARD_FILES, REWARD_TXT, render
from .decide import Decision, sha256_hex
from .errors import PublishConflict, PublishError
from .result import PublishResult

__all__ = ["MAX_BODY_BYTES", "PreconditionFailed", "Store", "publish_objects"]

#: The largest body published in one request: well under s3fs's multipart
#: threshold (2 x 50 MiB), above which If-Match would be ignored.
MAX_BODY_BYTES = 32 << 20

_MD5 = re.compile(r"^[0-9a-f]{32}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class PreconditionFailed(Exception):
    """A conditional write or delete was refused by the store."""


class Store(Protocol):
    """The primitives of one backend over our names under one prefix."""

    #: Where, for messages (``s3://bucket/prefix/run``).
    location: str
    #: Whether objects carry metadata (the digest of their grade).
    has_metadata: bool

    def etags(self) -> dict[str, str]:
        """ETag (unquoted) of each of the four names present."""

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
) -> tuple[Decision, str | None, str | None]:
    """The decision, the ETag to replace, and the published grade's sha256
    when it had to be read."""
    if listed is None:
        return (Decision.CREATE if replaces is None else Decision.CONFLICT), None, None
    if listed == md5_hex(ours):
        return Decision.SAME, listed, None
    wanted = None if replaces is None else replaces.lower().strip('"')
    if wanted is not None and _MD5.match(wanted) and wanted == listed:
        return Decision.REPLACE, listed, None
    existing = store.read(GRADE)
    if existing is None:  # deleted since the listing
        return Decision.CONFLICT, None, None
    if existing == ours:  # an ETag that is not an MD5 (multipart, KMS)
        return Decision.SAME, listed, sha256_hex(existing)
    digest = sha256_hex(existing)
    if wanted is not None and wanted == digest:
        return Decision.REPLACE, listed, digest
    return Decision.CONFLICT, listed, digest


def _owned(listed: dict[str, str], bodies: dict[str, bytes]) -> dict[str, str]:
    """The listed objects this grade may touch: its own names and the
    reward files (never a ``ctrf.json`` that is the evidence)."""
    return {name: tag for name, tag in listed.items() if name in bodies or name in REWARD_FILES}


def stale_metadata(store: Store, bodies: dict[str, bytes], listed: dict[str, str]) -> set[str]:
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
    listed: dict[str, str],
    stale: Collection[str] = (),
) -> PublishResult:
    """Make the objects ``listed`` agree with ``bodies`` (the grade that
    stands); ``stale`` are written again whatever their bytes."""
    listed = _owned(listed, bodies)
    digest = sha256_hex(bodies[GRADE])
    written: list[str] = []
    removed: list[str] = []
    if REWARD_TXT not in bodies:
        for name in REWARD_FILES:
            if name in listed:
                store.delete(name, listed[name])
                removed.append(name)
    for name in bodies:
        if name != GRADE and (name in stale or listed.get(name) != md5_hex(bodies[name])):
            store.put(name, bodies[name], digest)
            written.append(name)
    return PublishResult(
        store.location, sha256_hex(bodies[GRADE]), Decision.SAME, tuple(written), tuple(removed)
    )


def publish_objects(
    document: GradeDocument, store: Store, *, replaces: str | None = None
) -> PublishResult:
    """Publish ``document`` through ``store``; see the module docstring."""
    bodies = render(document)
    for name, body in bodies.items():
        if len(body) > MAX_BODY_BYTES:
            raise PublishError(
                f"{store.location}/{name}: {len(body)} bytes is above the "
                f"{MAX_BODY_BYTES >> 20} MiB cap for single-request conditional writes"
            )
    ours = bodies[GRADE]
    digest = sha256_hex(ours)
    if replaces is None and REWARD_TXT in bodies and _created(store, ours):
        written = _write_rest(store, bodies)
        _settle(store, bodies, listed_before=False)
        return PublishResult(store.location, digest, Decision.CREATE, written, ())
    listed = store.etags()
    decision, etag, existing_digest = _decide(store, listed.get(GRADE), ours, replaces)
    if decision is Decision.CONFLICT:
        raise PublishConflict(
            store.location,
            existing=existing_digest or listed.get(GRADE),
            attempted=digest,
            replaces=replaces,
        )
    if decision is Decision.SAME:
        repaired = _repair(store, bodies, listed, stale_metadata(store, bodies, listed))
        if repaired.written or repaired.removed:
            _settle(store, bodies)
        return repaired

    removed: list[str] = []
    try:
        for name in REWARD_FILES:
            if name in listed:
                store.delete(name, listed[name])
                removed.append(name)
    except PreconditionFailed:
        _restore(store, bodies, removed)
        raise PublishConflict(
            store.location,
            existing=existing_digest or listed.get(GRADE),
            attempted=digest,
            replaces=replaces,
        ) from None
    try:
        if decision is Decision.CREATE:
            store.create(GRADE, ours)
        else:
            assert etag is not None
            store.replace(GRADE, ours, etag)
    except PreconditionFailed:
        current = store.read(GRADE)
        if current != ours:  # another publisher won; our own retried write is not a conflict
            _restore(store, bodies, removed)
            raise PublishConflict(
                store.location,
                existing=None if current is None else sha256_hex(current),
                attempted=digest,
                replaces=replaces,
            ) from None
    written = _write_rest(store, bodies)
    _settle(store, bodies)
    return PublishResult(store.location, digest, decision, written, tuple(removed))


def _complete(listed: dict[str, str], bodies: dict[str, bytes]) -> bool:
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


def _settle(store: Store, bodies: dict[str, bytes], *, listed_before: bool = True) -> None:
    """Step 5: make the set agree with the ``grade.json`` that stands now.

    ``listed_before``: our decision rested on a listing, and a superseded
    publisher's late file may have landed between that listing and our
    ``grade.json`` write, where its own check could not see our grade yet:
    so we list. After an unlisted create (step 0) no grade stood before
    ours, so no earlier publisher has files to land late, and one HEAD of
    ``grade.json`` tells whether ours still stands.

    A repair writes what a grade read a moment ago asks for; a newer grade
    may have been published (and settled) in between, so every repair is
    followed by another look, and the last writer is always the last to
    look."""
    if not listed_before and store.etag(GRADE) == md5_hex(bodies[GRADE]):
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


def _restore(store: Store, bodies: dict[str, bytes], removed: list[str]) -> None:
    """A publisher that lost the race after deleting reward objects may have
    deleted the winner's (a conditional delete cannot tell identical bytes
    apart): it settles the set to the winning grade before it reports the
    conflict."""
    if removed:
        _settle(store, bodies)


def _created(store: Store, grade: bytes) -> bool:
    """Step 0: True when ``grade.json`` was absent and is now ours."""
    try:
        store.create(GRADE, grade)
    except PreconditionFailed:
        return False
    return True


def _write_rest(store: Store, bodies: dict[str, bytes]) -> tuple[str, ...]:
    """After ``grade.json``: the other files of the set, ``reward.txt`` last."""
    written = [GRADE]
    digest = sha256_hex(bodies[GRADE])
    for name in bodies:  # render's order: the CTRF view, reward.json, reward.txt last
        if name != GRADE:
            store.put(name, bodies[name], digest)
            written.append(name)
    return tuple(written)
