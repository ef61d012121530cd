"""prefect-aws blocks a team already has, as truereward targets.

Accepted, never required (prefect-aws is imported only when one is used):
an ``S3Bucket`` block (``s3-bucket/NAME`` as a request's ``target_block``:
grades go to its bucket and folder with its credentials), or an
``AwsCredentials``/``MinIOCredentials`` block named by a ``TargetBlock``'s
``credentials_block`` (its keys, token, region and endpoint become s3fs
options). The blocks' fields are read; prefect-aws never makes the client,
since publishing needs s3fs's conditional writes. docs/prefect.md.
"""

from __future__ import annotations

from typing import Any

from ..util.target import Target

__all__ = ["options_of_credentials", "target_of_bucket"]


def _secret(value: Any) -> Any:
    reveal = getattr(value, "get_secret_value", None)
    return reveal() if callable(reveal) else value


def options_of_credentials(credentials: Any) -> dict[str, Any]:
    """s3fs storage options from an ``AwsCredentials`` or
    ``MinIOCredentials`` block (only the fields it sets)."""
    options: dict[str, Any] = {}
    key = getattr(credentials, "aws_access_key_id", None) or getattr(
        credentials, "minio_root_user", None
    )
    secret = _secret(
        getattr(credentials, "aws_secret_access_key", None)
        or getattr(credentials, "minio_root_password", None)
    )
    if key:
        options["key"] = key
    if secret:
        options["secret"] = secret
    token = _secret(getattr(credentials, "aws_session_token", None))
    if token:
        options["token"] = token
    region = getattr(credentials, "region_name", None)
    if region:
        options["client_kwargs"] = {"region_name": region}
    parameters = getattr(credentials, "aws_client_parameters", None)
    endpoint = getattr(parameters, "endpoint_url", None) if parameters is not None else None
    if endpoint:
        options["endpoint_url"] = str(endpoint)
    return options


def target_of_bucket(bucket: Any) -> Target:
    """The target of an ``S3Bucket`` block: its bucket and folder, its
    credentials' options."""
    folder = str(getattr(bucket, "bucket_folder", "") or "").strip("/")
    url = f"s3://{bucket.bucket_name}" + (f"/{folder}" if folder else "")
    return Target(url=url, storage_options=options_of_credentials(bucket.credentials))
