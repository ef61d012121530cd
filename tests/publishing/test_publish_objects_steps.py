"""The object-store protocol stopped at every step, on ``memory://``.

A publisher over a prefix that holds an older grade (whole, or left
unfinished), reward objects and a CTRF view with no grade (planted, or left
by another writer), or nothing, is stopped at its n-th call of the store:
killed before the call, killed after it (the call applied, its answer lost),
or refused by a store that is down. Before every call, and after the stop,
nothing stands beside a ``grade.json`` that is not its own (a reward object
or CTRF view naming another grade, or none; a reward beside a refusal); and
publishing again completes the set. The same protocol runs on S3
(``tests/publishing/test_publish_s3_orphans.py`` kills real processes there).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import fsspec  # the dev extra installs it: a missing fsspec fails these tests loudly
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from truereward import GradeDocument, PublishConflict, PublishError, grade_document
from truereward.grade.files import REWARD_FILES, render
from truereward.publishing.decide import PublishDecision
from truereward.publishing.fsspec_store import FsspecStore
from truereward.publishing.objects import publish_objects


class Killed(BaseException):
    """The publishing process died here (nothing of ours catches it)."""


class SteppedStore(FsspecStore):
    """A memory store that calls ``observe`` before each primitive and stops
    the publisher at call number ``stop_at`` as ``how`` says."""

    def __init__(self, url: str, stop_at: int, how: str, observe: Callable[[], None]) -> None:
        super().__init__(url, {}, unconditional=False)
        self.stop_at, self.how, self.observe = stop_at, how, observe
        self.calls = 0

    def _step(self, call: Callable[[], Any]) -> Any:
        self.observe()
        self.calls += 1
        if self.calls != self.stop_at:
            return call()
        if self.how == "down":
            raise PublishError(f"{self.location}: the store is down")
        if self.how == "killed after":
            call()
        raise Killed

    def etags(self) -> dict[str, str]:
        return self._step(super().etags)

    def etag(self, name: str) -> str | None:
        return self._step(lambda: super(SteppedStore, self).etag(name))

    def read(self, name: str) -> bytes | None:
        return self._step(lambda: super(SteppedStore, self).read(name))

    def create(self, name: str, data: bytes) -> None:
        self._step(lambda: super(SteppedStore, self).create(name, data))

    def replace(self, name: str, data: bytes, etag: str) -> None:
        self._step(lambda: super(SteppedStore, self).replace(name, data, etag))

    def put(self, name: str, data: bytes, grade: str | None = None) -> None:
        self._step(lambda: super(SteppedStore, self).put(name, data, grade))

    def grade_of(self, name: str) -> str | None:
        return self._step(lambda: super(SteppedStore, self).grade_of(name))

    def delete(self, name: str, etag: str) -> None:
        self._step(lambda: super(SteppedStore, self).delete(name, etag))


def strangers(url: str) -> list[str]:
    """What stands beside the ``grade.json`` at ``url`` that is not its own."""
    store = FsspecStore(url, {}, unconditional=False)
    raw = store.read("grade.json")
    if raw is None:
        return []
    digest = hashlib.sha256(raw).hexdigest()
    document = GradeDocument.from_bytes(raw)
    found = []
    for name in (*REWARD_FILES, document.publication.ctrf):
        if store.read(name) is None:
            continue
        named = store.grade_of(name)
        if named != digest:
            found.append(f"{name} of grade {named} beside {digest[:12]}")
        elif name in REWARD_FILES and not document.gradable:
            found.append(f"{name} beside a refusal")
    return found


def complete(url: str, document: GradeDocument) -> None:
    """The set at ``url`` is exactly ``document``'s, every object naming it."""
    store = FsspecStore(url, {}, unconditional=False)
    bodies = render(document)
    assert {name: store.read(name) for name in ("grade.json", "ctrf.json", *REWARD_FILES)} == {
        name: bodies.get(name) for name in ("grade.json", "ctrf.json", *REWARD_FILES)
    }
    assert all(store.grade_of(name) == document.digest for name in bodies if name != "grade.json")


def grade(verdict: str, tag: str) -> GradeDocument:
    row: dict[str, Any] = {"id": tag, "kind": "fail_to_pass", "verdict": verdict}
    if verdict == "ungradable":
        row["code"] = "GRADER_TIMEOUT"
    return grade_document([row])


@contextmanager
def fresh_prefix() -> Iterator[str]:
    root = f"memory://steps-{uuid.uuid4().hex}"
    try:
        yield f"{root}/run"
    finally:
        fs = fsspec.filesystem("memory")
        if fs.exists(root):
            fs.rm(root, recursive=True)


VERDICTS = st.sampled_from(["pass", "fail", "ungradable"])
#: What another writer may have left with no grade: name -> (bytes, metadata).
ORPHANS = st.dictionaries(
    st.sampled_from(["reward.txt", "reward.json", "ctrf.json"]),
    st.tuples(
        st.sampled_from([b"1.0\n", b"0.0\n", b'{"reward": 1.0}', b"{}"]),
        st.sampled_from([None, "f" * 64]),
    ),
)


@given(
    older=st.none() | VERDICTS,
    unfinished=st.sets(st.sampled_from(["ctrf.json", *REWARD_FILES])),
    orphans=ORPHANS,
    ours=VERDICTS,
    listed=st.booleans(),
    stop_at=st.integers(1, 16),
    how=st.sampled_from(["killed before", "killed after", "down"]),
)
@example(  # the case: a gradable 0.0 over a planted 1.0, killed after grade.json
    older=None,
    unfinished=set(),
    listed=False,
    ours="fail",
    stop_at=5,
    how="killed after",
    orphans={"reward.txt": (b"1.0\n", None), "reward.json": (b'{"reward": 1.0}', None)},
)
def test_stopped_at_any_step_nothing_stands_beside_a_grade_it_does_not_own(
    older, unfinished, orphans, ours, listed, stop_at, how
):
    with fresh_prefix() as url:
        plain = FsspecStore(url, {}, unconditional=False)
        previous = None if older is None else grade(older, "older")
        if previous is None:
            for name, (data, named) in orphans.items():
                plain.put(name, data, named)
        else:
            publish_objects(previous, plain)
            for name in unfinished:  # an earlier publish interrupted, or repaired away
                etag = plain.etag(name)
                if etag is not None:
                    plain.delete(name, etag)
        assert strangers(url) == []
        document = grade(ours, "ours")
        replaces = None if previous is None else previous.digest
        seen: list[str] = []
        store = SteppedStore(url, stop_at, how, lambda: seen.extend(strangers(url)))
        try:
            result = publish_objects(
                document, store, replaces=replaces, listing=plain.etags() if listed else None
            )
        except (Killed, PublishError):
            result = None
        assert seen == [] and strangers(url) == [], seen
        if result is not None:  # it finished before its stop
            assert result.decision in (PublishDecision.CREATE, PublishDecision.REPLACE)
            complete(url, document)
        again = publish_objects(document, plain, replaces=replaces)
        assert again.digest == document.digest
        complete(url, document)


def test_a_stale_listing_from_the_caller_costs_a_look_never_a_wrong_set():
    ours, other = grade("pass", "ours"), grade("fail", "other")
    with fresh_prefix() as url:
        plain = FsspecStore(url, {}, unconditional=False)
        # Ours was published after the caller listed: the same grade, kept.
        publish_objects(ours, plain)
        assert publish_objects(ours, plain, listing={}).decision is PublishDecision.SAME
        complete(url, ours)
        # Another grade stands that the caller's listing did not show: a
        # conflict naming it, nothing touched.
        with pytest.raises(PublishConflict) as refused:
            publish_objects(other, plain, listing={})
        assert refused.value.existing == ours.digest
        complete(url, ours)
    with fresh_prefix() as url:
        plain = FsspecStore(url, {}, unconditional=False)
        plain.put("reward.txt", b"1.0\n")
        listed = plain.etags()
        plain.put("reward.txt", b"0.5\n")  # changed after the caller listed it
        seen: list[str] = []
        store = SteppedStore(url, 0, "never", lambda: seen.extend(strangers(url)))
        result = publish_objects(other, store, listing=listed)
        assert seen == [] and result.removed == ("reward.txt",)
        complete(url, other)
