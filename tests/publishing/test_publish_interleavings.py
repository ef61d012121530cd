"""The object-store protocol under forced interleavings of publishers.

Each publisher gets its own store over one ``memory://`` prefix; a hooked
store runs another publisher, to completion, at a chosen point of its own
sequence of requests (before or after the n-th call of a method on a name).
These are the orders an independent review found by racing against moto and
then forced; here they are exact and repeatable. After every publisher has
returned (or raised), the set must be the one its ``grade.json`` describes.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from typing import Any

import fsspec  # the dev extra installs it: a missing fsspec fails these tests loudly
import pytest

from truereward import GradeDocument, PublishConflict, grade_document
from truereward.grade.files import render
from truereward.publishing.fsspec_store import FsspecStore
from truereward.publishing.objects import publish_objects
from truereward.util.strictjson import loads

Hook = Callable[[], object]


class HookedStore(FsspecStore):
    """A memory store that runs ``hooks[(method, name, when, n)]`` around the
    n-th call of ``method`` on ``name`` (None for methods without a name)."""

    def __init__(self, url: str, hooks: dict[tuple[str, str | None, str, int], Hook]) -> None:
        super().__init__(url, {}, unconditional=False)
        self.hooks = hooks
        self.calls: Counter[tuple[str, str | None]] = Counter()

    def _around(self, method: str, name: str | None, call: Callable[[], Any]) -> Any:
        self.calls[(method, name)] += 1
        count = self.calls[(method, name)]
        before = self.hooks.pop((method, name, "before", count), None)
        if before is not None:
            before()
        result = call()
        after = self.hooks.pop((method, name, "after", count), None)
        if after is not None:
            after()
        return result

    def etags(self) -> dict[str, str]:
        return self._around("etags", None, super().etags)

    def etag(self, name: str) -> str | None:
        return self._around("etag", name, lambda: super(HookedStore, self).etag(name))

    def read(self, name: str) -> bytes | None:
        return self._around("read", name, lambda: super(HookedStore, self).read(name))

    def create(self, name: str, data: bytes) -> None:
        self._around("create", name, lambda: super(HookedStore, self).create(name, data))

    def replace(self, name: str, data: bytes, etag: str) -> None:
        self._around("replace", name, lambda: super(HookedStore, self).replace(name, data, etag))

    def put(self, name: str, data: bytes, grade: str | None = None) -> None:
        self._around("put", name, lambda: super(HookedStore, self).put(name, data, grade))

    def delete(self, name: str, etag: str) -> None:
        self._around("delete", name, lambda: super(HookedStore, self).delete(name, etag))


@pytest.fixture
def url(memory_root: str) -> str:
    return f"{memory_root}/run"


def grade(tag: str, verdict: str) -> Any:
    row = {"id": tag, "kind": "fail_to_pass", "verdict": verdict}
    if verdict == "ungradable":
        row["code"] = "GRADER_TIMEOUT"
    return grade_document([row])


def publisher(url: str, document: Any, replaces: str | None = None, **hooks: Hook) -> Hook:
    """A publish that runs when called; ``hooks`` keyed ``method__name__when__n``."""
    keyed = {}
    for key, hook in hooks.items():
        method, name, when, count = key.split("__")
        keyed[(method, None if name == "none" else name.replace("_", "."), when, int(count))] = hook

    def run() -> object:
        try:
            return publish_objects(document, HookedStore(url, keyed), replaces=replaces)
        except PublishConflict as conflict:
            return conflict

    return run


def published(url: str) -> dict[str, bytes]:
    fs = fsspec.filesystem("memory")
    root = url.split("://", 1)[1]
    names = ("grade.json", "ctrf.json", "reward.json", "reward.txt")
    return {name: fs.cat_file(f"{root}/{name}") for name in names if fs.exists(f"{root}/{name}")}


def assert_consistent(url: str) -> dict[str, Any]:
    files = published(url)
    document = loads(files["grade.json"])
    expected = set(render(GradeDocument.from_bytes(files["grade.json"])))
    assert set(files) == expected, sorted(files)
    if document["gradable"]:
        assert float(files["reward.txt"]) == document["reward"]
        assert loads(files["reward.json"])["reward"] == document["reward"]
    ctrf = loads(files["ctrf.json"])
    assert (
        ctrf["extra"]["truereward"]["grade_sha256"]
        == hashlib.sha256(files["grade.json"]).hexdigest()
    )
    return dict(document)


def test_a_losing_refusal_restores_the_winners_rewards_it_deleted(url):
    # Reward objects planted without a grade carry the bytes the winner W
    # will write. A fresh refusal U lists them; W publishes whole; U's
    # conditional deletes (same ETags) remove W's objects, then U loses the
    # create: U must settle the set back to W's grade before it reports.
    winner, refusal = grade("w", "pass"), grade("u", "ungradable")
    store = FsspecStore(url, {}, unconditional=False)
    for name in ("reward.txt", "reward.json"):
        store.put(name, render(winner)[name])
    outcome = publisher(url, refusal, etags__none__after__1=publisher(url, winner))()
    assert isinstance(outcome, PublishConflict)
    assert assert_consistent(url)["reward"] == 1.0


@pytest.mark.parametrize(
    ("first", "second", "third", "cue"),
    [
        # A's late reward.txt, then A's repair towards B lands after C settled.
        ("pass", "fail", "ungradable", "put__reward_txt__before__1"),
        # B finished before A's ctrf.json; A repairs towards B over C's set.
        ("pass", "fail", "pass", "put__ctrf_json__before__1"),
        # C's reward bytes are A's: A's repair deletes them through the ETags.
        ("pass", "ungradable", "pass", "put__ctrf_json__before__1"),
    ],
)
def test_a_repair_towards_a_grade_replaced_meanwhile_is_looked_at_again(
    url, first, second, third, cue
):
    a, b = grade("a", first), grade("b", second)
    c = grade("c", third) if third != first else grade("a-again", third)
    run_b = publisher(url, b, replaces=a.digest)
    run_c = publisher(url, c, replaces=b.digest)
    outcome = publisher(url, a, **{cue: run_b, "read__grade_json__after__1": run_c})()
    assert not isinstance(outcome, PublishConflict)
    stands = assert_consistent(url)
    assert hashlib.sha256(published(url)["grade.json"]).hexdigest() == c.digest
    assert stands["gradable"] is (third != "ungradable")
