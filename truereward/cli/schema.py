"""``truereward schema grade|row``: print a shipped JSON Schema."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .common import EXIT_OK


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "schema",
        help="print the JSON Schema of grade.json or of a row",
    )
    parser.add_argument("name", choices=["grade", "row"])
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..schemas import load

    print(json.dumps(load(args.name), indent=2, sort_keys=True))
    return EXIT_OK
