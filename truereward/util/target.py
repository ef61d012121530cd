"""Where grades are published: a URL and the options to reach it.

:class:`Target` is the plain configuration the core takes (the Prefect block
wraps it): ``url`` is a local path, a ``file://`` URL or any fsspec URL, and
``storage_options`` go to the fsspec filesystem. Secret-looking option
values (``key``, ``secret``, ``token``, ``*_key``, ``*password*``,
``*credential*``..., at any depth) are held as ``SecretStr``, never in a
repr, a log or a JSON dump; :meth:`Target.options` reveals them for the
filesystem. Credentials may also come from the environment, which s3fs
reads itself. docs/scale.md, "On object storage".
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from . import urls
from .segments import check_segment

__all__ = ["Target", "is_secret_option", "secret_option_paths"]

_SECRET_NAMES = {"key", "secret", "token", "password", "passwd"}
_SECRET_PARTS = ("secret", "password", "token", "credential", "sas_", "_key")


def is_secret_option(name: str) -> bool:
    """Whether a storage option of this name holds a secret."""
    lowered = name.lower()
    return lowered in _SECRET_NAMES or any(part in lowered for part in _SECRET_PARTS)


def secret_option_paths(options: Any, prefix: str = "") -> list[str]:
    """The dotted paths of the secret-named options in ``options`` (nested
    mappings included): what must never travel in plain text."""
    found: list[str] = []
    if isinstance(options, dict):
        for name, value in options.items():
            where = f"{prefix}{name}"
            if is_secret_option(str(name)):
                found.append(where)
            found.extend(secret_option_paths(value, f"{where}."))
    return found


def _hide(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            name: SecretStr(item)
            if isinstance(item, str) and is_secret_option(name)
            else _hide(item)
            for name, item in value.items()
        }
    return value


def _reveal(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, dict):
        return {name: _reveal(item) for name, item in value.items()}
    if isinstance(value, list):
        return [_reveal(item) for item in value]
    return value


class Target(BaseModel):
    """A publish target: ``url`` plus fsspec ``storage_options``.

    ``unconditional`` opts into unconditional writes on a backend that cannot
    write conditionally (anything but local directories, S3 and
    ``memory://``): then a concurrent publisher can overwrite a grade, which
    is why it must be asked for by name.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str = Field(min_length=1)
    storage_options: dict[str, Any] = Field(default_factory=dict)
    unconditional: bool = False

    @field_validator("storage_options", mode="after")
    @classmethod
    def _secrets_are_hidden(cls, value: dict[str, Any]) -> dict[str, Any]:
        hidden: dict[str, Any] = _hide(value)
        return hidden

    @property
    def protocol(self) -> str:
        """``file`` for local paths, else the URL's scheme (``s3``, ``memory``...)."""
        return urls.protocol(self.url)

    @property
    def is_local(self) -> bool:
        """Whether the target is a local directory."""
        return self.protocol == "file"

    @property
    def path(self) -> str:
        """The URL without its scheme (a local path for local targets)."""
        return urls.strip_protocol(self.url)

    def options(self) -> dict[str, Any]:
        """The storage options with secrets revealed, for the filesystem."""
        revealed: dict[str, Any] = _reveal(self.storage_options)
        return revealed

    def child(self, *segments: str) -> Target:
        """The target ``<url>/<segment>/...``; each segment must be a safe
        single path segment (a run id, a sweep name): ``ValueError`` if not."""
        for segment in segments:
            check_segment(segment)
        return self.model_copy(update={"url": urls.join(self.url, *segments)})
