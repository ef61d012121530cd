"""What a publisher left in a bucket, read with boto3 (the listing, an
object's body, the set of a run checked whole), the grades the S3
publishing tests publish, and one racing publisher for a process of its own."""

from __future__ import annotations

import hashlib
import time
from typing import Any

from truereward import PublishConflict, grade_document, publish
from truereward.util.strictjson import loads

FILES = ("ctrf.json", "grade.json", "reward.json", "reward.txt")


def listing(client: Any, bucket: str, prefix: str) -> dict[str, tuple[str, Any]]:
    """name -> (ETag, LastModified) of every object under the prefix."""
    response = client.list_objects_v2(Bucket=bucket, Prefix=prefix + "/")
    return {
        item["Key"].rsplit("/", 1)[1]: (item["ETag"], item["LastModified"])
        for item in response.get("Contents", [])
    }


def body(client: Any, bucket: str, key: str) -> bytes:
    return client.get_object(Bucket=bucket, Key=key)["Body"].read()


def assert_consistent(client: Any, bucket: str, prefix: str) -> dict[str, Any]:
    """The published set agrees with its grade.json; returns the grade."""
    names = set(listing(client, bucket, prefix))
    grade = loads(body(client, bucket, f"{prefix}/grade.json"))
    if grade["gradable"]:
        assert names == set(FILES)
        assert float(body(client, bucket, f"{prefix}/reward.txt")) == grade["reward"]
        assert loads(body(client, bucket, f"{prefix}/reward.json"))["reward"] == grade["reward"]
    else:
        assert names == {"ctrf.json", "grade.json"}
    ctrf = loads(body(client, bucket, f"{prefix}/ctrf.json"))
    raw = body(client, bucket, f"{prefix}/grade.json")
    assert ctrf["extra"]["truereward"]["grade_sha256"] == hashlib.sha256(raw).hexdigest()
    return grade


def gradable(row, reward=1.0, tag="g"):
    return grade_document(
        [row("a", verdict="pass" if reward == 1.0 else "fail"), row(tag, "pass_to_pass")]
    )


def ungradable(row):
    return grade_document([row("a"), row("b", verdict="ungradable", code="GRADER_TIMEOUT")])


def publish_at(start: float, raw: bytes, url: str, options: dict[str, Any]) -> str:
    """``conflict``, the grade's digest when it won, or ``error: ...`` (a
    publish that failed is neither a winner nor a conflict: counting it as a
    winner is how an earlier version of this test saw two under load)."""
    from truereward import GradeDocument

    document = GradeDocument.from_bytes(raw)
    time.sleep(max(0.0, start - time.time()))
    try:
        publish(document, url, storage_options=options)
    except PublishConflict:
        return "conflict"
    except Exception as error:  # noqa: BLE001 - reported in the outcomes, never lost
        return f"error: {type(error).__name__}: {error}"
    return document.digest
