"""What can go wrong when publishing, as types callers can catch."""

from __future__ import annotations

from ..util.exceptions import TruerewardError

__all__ = ["BadStorageOptions", "PublishConflict", "PublishError"]


class PublishError(TruerewardError):
    """Publishing failed (I/O error, unusable target, a body too large). The
    files already published are whole: each is the old or the new version."""


class BadStorageOptions(PublishError):
    """The target's storage options are not ones its backend takes (an
    unknown keyword, say). Raised before any request is made."""


class PublishConflict(PublishError):
    """Another grade is already published at the target, and the caller did
    not name it in ``replaces`` (or named another one). Nothing was written
    and nothing was removed.

    ``existing`` is the sha256 of the published ``grade.json`` (``None`` when
    there is none and ``replaces`` expected one), ``attempted`` the digest of
    the grade that was refused, ``replaces`` what the caller named.
    """

    def __init__(
        self, target: str, *, existing: str | None, attempted: str, replaces: str | None
    ) -> None:
        self.target = target
        self.existing = existing
        self.attempted = attempted
        self.replaces = replaces
        if existing is None and replaces is None:
            what = "another writer keeps changing the objects there while we publish"
        elif existing is None:
            what = f"no grade is published there, but replaces names {replaces}"
        elif replaces is None:
            what = (
                f"another grade ({existing}) is already published; name it with "
                "replaces= (CLI: --replaces) to replace it"
            )
        else:
            what = f"the published grade is {existing}, not {replaces} as replaces says"
        super().__init__(f"{target}: {what}")
