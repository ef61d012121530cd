"""A Prefect block for a publish target: ``TargetBlock``, and loading the
target a request names.

``TargetBlock`` wraps :class:`truereward.Target` for deployments: the URL
and plain storage options in the clear, credentials in ``secret_options``
(a ``SecretDict``) or from a prefect-aws ``AwsCredentials`` block
(``credentials_block``); a secret-looking name among the plain options is
refused. A request names the block in ``target_block``. docs/prefect.md,
"The target block", shows how to register, save and use one.
"""

from __future__ import annotations

from typing import Any, ClassVar

from prefect.blocks.core import Block
from prefect.types import SecretDict
from pydantic import Field, HttpUrl, field_validator

from ..util.target import Target, secret_option_paths

__all__ = ["TargetBlock", "load_target"]

#: The slug of our block type (``truereward-target/NAME``).
SLUG = "truereward-target"


class TargetBlock(Block):
    """Where truereward publishes grades: a local path or an fsspec URL, its
    storage options, and the credentials to reach it, kept secret."""

    _block_type_name: ClassVar[str] = "Truereward Target"
    _block_type_slug: ClassVar[str] = SLUG
    _description: ClassVar[str] = (
        "Where truereward publishes grades: a local path or an fsspec URL "
        "(s3://bucket/prefix, ...), its storage options, and credentials kept secret."
    )
    _documentation_url: ClassVar[HttpUrl | None] = HttpUrl(
        "https://example.invalid/truereward/docs/prefect.md#the-target-block"
    )

    url: str = Field(
        min_length=1,
        title="URL",
        description="A local path or an fsspec URL (s3://bucket/prefix) runs publish under.",
    )
    storage_options: dict[str, Any] = Field(
        default_factory=dict,
        title="Storage options",
        description="fsspec options without secrets (endpoint_url, client_kwargs, ...).",
    )
    secret_options: SecretDict = Field(
        default_factory=lambda: SecretDict({}),
        title="Secret options",
        description="fsspec options that are secrets (key, secret, token, ...).",
    )
    credentials_block: str | None = Field(
        default=None,
        title="Credentials block",
        description="The name of a prefect-aws AwsCredentials block to take credentials from "
        "(aws-credentials/NAME), instead of secret_options.",
    )
    unconditional: bool = Field(
        default=False,
        title="Unconditional",
        description="Allow a backend that cannot write conditionally (a racing publisher "
        "could overwrite a grade).",
    )

    @field_validator("storage_options")
    @classmethod
    def _no_secrets_in_the_clear(cls, value: dict[str, Any]) -> dict[str, Any]:
        secrets = secret_option_paths(value)
        if secrets:
            raise ValueError(f"{', '.join(secrets)} look like secrets: put them in secret_options")
        return value

    def target(self) -> Target:
        """The :class:`truereward.Target` this block describes."""
        options = {**self.storage_options, **self.secret_options.get_secret_value()}
        if self.credentials_block is not None:
            from .aws import options_of_credentials

            credentials = Block.load(_slugged(self.credentials_block, "aws-credentials"))
            options = {**options, **options_of_credentials(credentials)}
        return Target(url=self.url, storage_options=options, unconditional=self.unconditional)


def _slugged(name: str, default_slug: str) -> str:
    return name if "/" in name else f"{default_slug}/{name}"


def load_target(name: str) -> Target:
    """The target a request's ``target_block`` names: a ``TargetBlock``
    (``NAME`` or ``truereward-target/NAME``) or a prefect-aws ``S3Bucket``
    (``s3-bucket/NAME``). ``ValueError`` for a block of another kind."""
    block: Any = Block.load(_slugged(name, SLUG))
    if isinstance(block, TargetBlock):
        return block.target()
    if type(block).__name__ == "S3Bucket":
        from .aws import target_of_bucket

        return target_of_bucket(block)
    raise ValueError(f"block {name!r} is a {type(block).__name__}, not a target")
