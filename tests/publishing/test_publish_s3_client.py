"""Opening an S3 store checks that the installed botocore can send the
conditional writes (s3fs drops any parameter its model lacks, so an older
botocore would turn every compare-and-swap into a plain write): with an old
botocore really installed, publishers refuse before any write, racing or
not; with the installed one they publish."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, s3_options
from tests.support.installs import install_target
from truereward.publishing.s3 import (
    BOTOCORE_FLOOR,
    CONDITIONS,
    S3Store,
    unconditional_operations,
)


def s3_model(without: tuple[tuple[str, str], ...] = (), drop: str | None = None) -> Any:
    """The installed botocore's S3 service model, less the ``(operation,
    parameter)`` pairs of ``without`` and the operation ``drop``."""
    from botocore.loaders import create_loader
    from botocore.model import ServiceModel

    data = copy.deepcopy(create_loader().load_service_model("s3", "service-2"))
    for operation, parameter in without:
        shape = data["operations"][operation]["input"]["shape"]
        del data["shapes"][shape]["members"][parameter]
    if drop is not None:
        del data["operations"][drop]
    return ServiceModel(data, "s3")


def test_the_installed_model_has_every_condition() -> None:
    assert unconditional_operations(s3_model()) == []


@pytest.mark.parametrize("missing", [[pair] for pair in CONDITIONS] + [list(CONDITIONS)])
def test_a_model_without_a_condition_names_it(missing: list[tuple[str, str]]) -> None:
    found = unconditional_operations(s3_model(tuple(missing)))
    assert found == [f"{operation}.{parameter}" for operation, parameter in missing]


def test_a_model_without_the_operation_lacks_its_conditions() -> None:
    assert unconditional_operations(s3_model(drop="DeleteObject")) == ["DeleteObject.IfMatch"]


def test_the_s3_extras_ask_for_a_botocore_with_every_condition() -> None:
    from packaging.requirements import Requirement
    from packaging.version import Version

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for extra in ("s3", "aws", "dev"):
        [line] = [line for line in extras[extra] if Requirement(line).name == "botocore"]
        [floor] = [spec for spec in Requirement(line).specifier if spec.operator == ">="]
        assert Version(floor.version) >= Version(BOTOCORE_FLOOR), extra


def test_the_installed_client_opens_a_store(s3_endpoint: str, bucket: str) -> None:
    store = S3Store(f"s3://{bucket}/run", s3_options(s3_endpoint))
    assert unconditional_operations(store.fs.s3.meta.service_model) == []


# botocore 1.35.36 knows IfNoneMatch on PutObject, not yet IfMatch (PutObject
# and DeleteObject); aiobotocore 2.15.2 is built on it, s3fs 2024.6.0 is the
# s3 extra's floor. Installed apart from the venv (--no-deps --target) and put
# first on the path of a process of their own.
OLD = ("botocore==1.35.36", "aiobotocore==2.15.2", "s3fs==2024.6.0", "fsspec==2024.6.0")

RACE = textwrap.dedent(
    """
    import json, sys, threading
    import botocore
    from truereward import PublishError, grade_document, publish

    url, options = sys.argv[1], json.loads(sys.argv[2])
    rows = [{"id": "a", "kind": "fail_to_pass", "verdict": "pass"}]
    outcomes = []

    def one(index):
        document = grade_document(rows, run={"id": f"publisher-{index}"})
        try:
            publish(document, url, storage_options=options)
            outcomes.append("won")
        except PublishError as error:
            outcomes.append(str(error))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps({"botocore": botocore.__version__, "outcomes": outcomes}))
    """
)


@pytest.fixture(scope="module")
def old_botocore(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("old-botocore")
    for spec in OLD:
        install_target(spec, target)
    return target


@pytest.mark.slow
def test_sixteen_publishers_with_an_old_botocore_refuse_before_any_write(
    old_botocore: Path, s3_endpoint: str, s3_client: Any, bucket: str
) -> None:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(old_botocore), str(ROOT)])}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            RACE,
            f"s3://{bucket}/race/run-1",
            json.dumps(s3_options(s3_endpoint)),
        ],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["botocore"] == "1.35.36"  # the old one was the one imported
    assert len(report["outcomes"]) == 16
    for outcome in report["outcomes"]:
        assert "botocore 1.35.36" in outcome and "aiobotocore 2.15.2" in outcome
        assert "PutObject.IfMatch, DeleteObject.IfMatch" in outcome
        assert "PutObject.IfNoneMatch" not in outcome  # 1.35 has that one
        assert f"botocore>={BOTOCORE_FLOOR}" in outcome
    # Refused before any request that writes: the bucket is as it was.
    assert s3_client.list_objects_v2(Bucket=bucket).get("KeyCount", 0) == 0
