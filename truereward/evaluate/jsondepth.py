"""The nesting limit shared by reports, metrics and metadata."""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_DEPTH", "check_json_depth"]

#: The deepest nesting allowed: reports within reports (``details``), and
#: JSON values within ``metadata`` and ``parameters``.
MAX_DEPTH = 64


def check_json_depth(value: Any, what: str, limit: int = MAX_DEPTH) -> None:
    """``ValueError`` naming ``what`` when ``value`` (a JSON value) nests
    arrays and objects more than ``limit`` deep. A scalar has depth 0, ``{}``
    and ``[1]`` have depth 1. Iterative, so any depth is checked without
    recursion."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth + 1 > limit:
            raise ValueError(f"{what} nests deeper than {limit} levels")
        stack.extend((child, depth + 1) for child in children)
