"""``truereward codes``: the refusal codes, with blame and retry default.

Lists the shared codes and every code declared by an installed reader
(entry-point group ``truereward.codes``).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from .common import EXIT_OK


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "codes",
        help="list the refusal codes with blame and retry default",
    )
    parser.add_argument("--json", action="store_true", help="print the codes as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..codes import SHARED, all_codes

    codes = all_codes()
    if args.json:
        print(
            json.dumps(
                [
                    {**code.as_dict(), "shared": name in SHARED}
                    for name, code in sorted(codes.items())
                ],
                indent=2,
            )
        )
        return EXIT_OK
    width = max(len(name) for name in codes)
    print(f"{'code':<{width}}  blame   retry  meaning")
    for name, code in sorted(codes.items()):
        retry = "yes" if code.retry else "no"
        print(f"{name:<{width}}  {code.blame.value:<6}  {retry:<5}  {code.meaning}")
    return EXIT_OK
