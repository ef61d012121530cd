"""Prefect blocks as targets, on a real Prefect server and moto's S3
server: our block type as ``prefect block register`` shows it, and the
prefect-aws blocks a team already has as targets of the grade-run flow (an
``AwsCredentials`` block named by a ``TargetBlock``'s ``credentials_block``,
an ``S3Bucket`` block named directly: ``s3-bucket/NAME``). The store's
endpoint is known only to the blocks (this process's environment has none),
so a grade that lands in the bucket went through them."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support.sweeps import make_sweep, run_flow


@pytest.fixture
def credentials(
    prefect_client_settings: str, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, str]:
    """A saved ``AwsCredentials`` block for the loopback store, and its name;
    no endpoint in the environment, so only the block knows the store."""
    from prefect_aws import AwsCredentials

    for variable in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(variable, raising=False)

    block = AwsCredentials(
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
        aws_client_parameters={"endpoint_url": s3_endpoint},
    )
    name = f"aws-{uuid.uuid4().hex[:10]}"
    block.save(name)
    return block, name


def keys(s3_client: Any, bucket: str, prefix: str) -> set[str]:
    listed = s3_client.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    return {item["Key"] for item in listed}


@pytest.mark.slow
def test_a_target_block_takes_its_credentials_from_an_aws_credentials_block(
    credentials: tuple[Any, str], s3_client: Any, bucket: str, tmp_path: Path
) -> None:
    from truereward.prefect.block import TargetBlock, load_target

    _, aws = credentials
    name = f"t-{uuid.uuid4().hex[:10]}"
    TargetBlock(url=f"s3://{bucket}/graded", credentials_block=aws).save(name)
    options = load_target(name).options()
    assert options["key"] == "testing" and options["secret"] == "testing"
    assert options["client_kwargs"] == {"region_name": "us-east-1"}
    assert options["endpoint_url"].startswith("http://127.0.0.1:")
    assert "testing" not in repr(TargetBlock.load(name))  # the secret stays in its block

    sweep = make_sweep(tmp_path / "sweep", {"a": "pass", "b": "fail"})
    state = run_flow(sweep=str(sweep), target_block=name)
    assert state.is_completed(), state.message
    assert {"graded/a/grade.json", "graded/a/reward.txt", "graded/b/grade.json"} <= keys(
        s3_client, bucket, "graded/"
    )
    reward = s3_client.get_object(Bucket=bucket, Key="graded/a/reward.txt")["Body"].read()
    assert reward == b"1.0\n"


@pytest.mark.slow
def test_an_s3_bucket_block_is_a_target_with_its_folder_and_credentials(
    credentials: tuple[Any, str], s3_client: Any, bucket: str, tmp_path: Path
) -> None:
    from prefect_aws import S3Bucket

    block, _ = credentials
    name = f"b-{uuid.uuid4().hex[:10]}"
    S3Bucket(bucket_name=bucket, bucket_folder="nightly/", credentials=block).save(name)
    sweep = make_sweep(tmp_path / "sweep", {"a": "pass"})
    state = run_flow(sweep=str(sweep), target_block=f"s3-bucket/{name}")
    assert state.is_completed(), state.message
    stored = s3_client.get_object(Bucket=bucket, Key="nightly/a/grade.json")["Body"].read()
    assert json.loads(stored)["reward"] == 1.0


@pytest.mark.slow
def test_a_block_that_is_not_a_target_is_refused_before_grading(
    credentials: tuple[Any, str], tmp_path: Path
) -> None:
    _, aws = credentials
    sweep = make_sweep(tmp_path / "sweep", {"a": "pass"})
    state = run_flow(sweep=str(sweep), target_block=f"aws-credentials/{aws}")
    assert state.is_failed()
    assert state.name.startswith("Not started: target_block"), state.name
    assert "AwsCredentials, not a target" in state.message
    assert not (sweep / "a" / "logs" / "verifier" / "grade.json").exists()  # nothing graded


@pytest.mark.slow
def test_prefect_block_register_shows_our_block_type_in_prefects_conventions(
    prefect_client_settings: str, tmp_path: Path
) -> None:
    # As docs/prefect.md registers it: through Prefect's CLI, then read back
    # from the server as the UI shows it.
    import subprocess

    from prefect.client.orchestration import get_client

    from tests.support.server import PREFECT, offline_env

    env = offline_env(PREFECT_API_URL=prefect_client_settings, PREFECT_HOME=str(tmp_path / "home"))
    registered = subprocess.run(
        [PREFECT, "block", "register", "-m", "truereward.prefect.block"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert registered.returncode == 0, registered.stdout + registered.stderr
    with get_client(sync_client=True) as client:
        kind = client.read_block_type_by_slug("truereward-target")
        schema = client.get_most_recent_block_schema_for_block_type(kind.id)
    assert schema is not None
    assert kind.name == "Truereward Target" and kind.logo_url is None
    assert kind.description and kind.description.startswith("Where truereward publishes grades")
    assert kind.documentation_url and str(kind.documentation_url).endswith("#the-target-block")
    fields = schema.fields
    assert any(name.startswith("secret_options") for name in fields["secret_fields"])
    for name, field in fields["properties"].items():  # every field titled and described
        assert field.get("title") and field.get("description"), name


def test_prefect_finds_our_block_type_by_its_slug_in_a_fresh_process(tmp_path: Path) -> None:
    # The `prefect.collections` entry point: a process that has imported
    # nothing of ours (a worker, a server, `Block.load("truereward-target/x")`)
    # resolves the slug, and Prefect lists us among its collections.
    import subprocess
    import sys

    from tests.support.server import offline_env

    script = (
        "import sys\n"
        "from prefect.blocks.core import Block\n"
        "from prefect.plugins import load_prefect_collections\n"
        "before = sorted(m for m in sys.modules if m.startswith('truereward'))\n"
        "kind = Block.get_block_class_from_key('truereward-target')\n"
        "loaded = load_prefect_collections()\n"
        "print(before, kind.__module__, kind.__qualname__, kind.get_block_type_slug(),\n"
        "      getattr(loaded.get('truereward'), '__name__', repr(loaded.get('truereward'))))\n"
    )
    env = offline_env(PREFECT_HOME=str(tmp_path / "home"))
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=tmp_path,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == [
        "[]", "truereward.prefect.block", "TargetBlock", "truereward-target",
        "truereward.prefect.block",
    ]  # fmt: skip
    assert "Failed to load collection" not in done.stdout + done.stderr
