"""A Prefect block for a publish target: ``TargetBlock``.

It wraps :class:`truereward.Target` for deployments: the URL and the plain
storage options in the clear, credentials in ``secret_options`` (a
``SecretDict``: masked in the UI, the API and logs). Register the block
type once, save a block, and name it in a request::

    prefect block register -m truereward.prefect.block
    TargetBlock(url="s3://grades/nightly",
                storage_options={"endpoint_url": "http://minio:9000"},
                secret_options={"key": "...", "secret": "..."}).save("nightly")
    # request: {"sweep": "s3://runs/nightly", "target_block": "nightly"}

Secret-looking names (``key``, ``secret``, ``token``, ``*_key``,
``*password*``...) are refused among the plain ``storage_options``, so a
credential cannot be saved in the clear by mistake.
"""

from __future__ import annotations

from typing import Any, ClassVar

from prefect.blocks.core import Block
from prefect.types import SecretDict
from pydantic import Field, field_validator

from ..target import Target, secret_option_paths

__all__ = ["TargetBlock"]


class TargetBlock(Block):
    """Where truereward publishes grades: a URL, storage options, and the
    credentials to reach it (kept secret)."""

    _block_type_name: ClassVar[str] = "truereward target"
    _block_type_slug: ClassVar[str] = "truereward-target"
    _description: ClassVar[str] = (
        "Where truereward publishes grades: a local path or fsspec URL "
        "(s3://bucket/prefix, ...), its storage options, and credentials kept secret."
    )

    url: str = Field(min_length=1, description="a local path or an fsspec URL")
    storage_options: dict[str, Any] = Field(
        default_factory=dict, description="fsspec options without secrets"
    )
    secret_options: SecretDict = Field(
        default_factory=lambda: SecretDict({}),
        description="fsspec options that are secrets (key, secret, token...)",
    )
    unconditional: bool = Field(
        default=False, description="allow a backend that cannot write conditionally"
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
        return Target(
            url=self.url,
            storage_options={**self.storage_options, **self.secret_options.get_secret_value()},
            unconditional=self.unconditional,
        )
