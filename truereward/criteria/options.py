"""Option types the criterion kinds share: paths, commands' bounds, URLs.

A **path** names a file of the workspace relative to it (``out/a.json``), or,
in a live workspace only, an absolute path of the environment the verifier
runs in (``/usr/local/bin/tool``). ``..`` is refused (name the file inside
the workspace, or give the absolute path); so is an empty path or one with
a NUL. Whether the path exists, stays inside the workspace or may be
absolute is decided when it is read (:mod:`truereward.criteria.files`).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

__all__ = ["MAX_PATH", "Path", "Seconds"]

#: The longest path accepted, in characters (Linux's PATH_MAX).
MAX_PATH = 4096


def _path(value: str) -> str:
    if not value or "\x00" in value:
        raise ValueError("a path: a non-empty string without NUL")
    if len(value) > MAX_PATH:
        raise ValueError(f"a path of at most {MAX_PATH} characters")
    if ".." in value.split("/"):
        raise ValueError(
            f"{value!r}: no '..' (name a file inside the workspace, or give an absolute path)"
        )
    return value


#: A file of the workspace (module docstring).
Path = Annotated[str, AfterValidator(_path)]

#: A time bound in seconds: more than 0, at most an hour.
Seconds = Annotated[float, Field(gt=0, le=3600)]
