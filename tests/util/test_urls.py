"""truereward.util.urls: the one place that tells paths and URLs apart."""

from __future__ import annotations

import pytest

from truereward.util import urls


@pytest.mark.parametrize(
    ("location", "protocol", "local", "url"),
    [
        ("/runs/a", "file", True, False),
        ("runs/a", "file", True, False),
        ("file:///runs/a", "file", True, True),
        ("FILE:///runs/a", "file", True, True),
        ("local:///runs/a", "file", True, True),
        ("s3://bucket/a", "s3", False, True),
        ("S3://bucket/a", "s3", False, True),
        ("memory://a", "memory", False, True),
    ],
)
def test_a_location_is_told_apart(location: str, protocol: str, local: bool, url: bool) -> None:
    assert urls.protocol(location) == protocol
    assert urls.is_local(location) is local
    assert urls.is_url(location) is url


def test_local_paths_and_urls() -> None:
    assert urls.local_path("file:///runs/a") == "/runs/a"
    assert urls.local_or_none("/runs/a") == "/runs/a"
    assert urls.local_or_none("local:///runs/a") == "/runs/a"
    assert urls.local_or_none("s3://bucket/a") is None
    assert urls.path_or_url("file:///runs/a") == "/runs/a"
    assert urls.path_or_url("s3://bucket/a") == "s3://bucket/a"
    with pytest.raises(ValueError, match="not a local path"):
        urls.local_path("s3://bucket/a")


@pytest.mark.parametrize(
    ("url", "parts"),
    [
        ("s3://bucket/a/b/", ("bucket", "a/b")),
        ("s3://bucket", ("bucket", "")),
        ("s3://bucket/", ("bucket", "")),
        ("s3://", ("", "")),
    ],
)
def test_bucket_and_key(url: str, parts: tuple[str, str]) -> None:
    assert urls.bucket_and_key(url) == parts


def test_join() -> None:
    assert urls.join("s3://bucket/", "a", "b") == "s3://bucket/a/b"
    assert urls.join("", "a") == "a"


@pytest.mark.parametrize(
    ("location", "parts", "joined"),
    [
        ("/", ("a",), "/a"),
        ("memory://", ("a", "b"), "memory://a/b"),
        ("file:///", ("a",), "file:///a"),
        ("file:///runs/", ("a",), "file:///runs/a"),
        ("runs/", (), "runs"),
        ("", (), ""),
    ],
)
def test_join_keeps_a_root(location: str, parts: tuple[str, ...], joined: str) -> None:
    assert urls.join(location, *parts) == joined


@pytest.mark.parametrize(
    ("location", "last"),
    [
        ("s3://bucket/sweep/run-7/", "run-7"),
        ("s3://bucket", "bucket"),
        ("/runs/a", "a"),
        ("memory://", ""),
        ("/", ""),
        ("", ""),
    ],
)
def test_name(location: str, last: str) -> None:
    assert urls.name(location) == last


@pytest.mark.parametrize(
    ("location", "up"),
    [
        ("s3://bucket/sweep/run-7/", "s3://bucket/sweep"),
        ("s3://bucket/run-7", "s3://bucket"),
        ("s3://bucket", "s3://"),
        ("/runs/a", "/runs"),
        ("/a", "/"),
        ("/", "/"),
        ("file:///a", "file:///"),
        ("runs/a", "runs"),
        ("a", ""),
        ("", ""),
    ],
)
def test_parent(location: str, up: str) -> None:
    assert urls.parent(location) == up


@pytest.mark.parametrize(
    "location", ["s3://bucket/sweep/run-7/", "/runs/a", "/a", "file:///a", "runs/a", "a"]
)
def test_parent_and_name_join_back(location: str) -> None:
    assert urls.join(urls.parent(location), urls.name(location)) == location.rstrip("/")


@pytest.mark.parametrize(
    ("url", "joined"),
    [
        ("/srv/grades/", "/srv/grades/sweep-1/run-7"),
        ("/", "/sweep-1/run-7"),
        ("grades", "grades/sweep-1/run-7"),
        ("s3://bucket/prefix/", "s3://bucket/prefix/sweep-1/run-7"),
        ("memory://", "memory://sweep-1/run-7"),
    ],
)
def test_a_target_child_is_joined_by_urls(url: str, joined: str) -> None:
    from truereward.util.target import Target

    assert Target(url=url).child("sweep-1", "run-7").url == joined
