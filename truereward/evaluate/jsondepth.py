"""The nesting limit shared by reports, metrics and metadata."""

from __future__ import annotations

from ..util.strictjson import MAX_DEPTH, check_depth

__all__ = ["MAX_DEPTH", "check_json_depth"]

#: ``ValueError`` naming ``what`` when a JSON value nests arrays and objects
#: more than ``limit`` deep (``MAX_DEPTH`` by default: reports within
#: reports, ``details``, and JSON values within ``metadata`` and
#: ``parameters``); :func:`truereward.util.strictjson.check_depth`.
check_json_depth = check_depth
