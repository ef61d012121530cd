"""``truereward verify DIR|grade.json``: fold a published grade again.

Re-folds the document's ``detail`` with the inputs and scheme it records and
compares every stored field; for a directory it also checks ``reward.txt``,
``reward.json`` and ``ctrf.json`` against the grade. Exit 0 consistent, 1
inconsistent (each disagreement is printed), 2 unreadable.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from .common import EXIT_FAILED, EXIT_OK, CliError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="check a published grade by folding it again",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    parser.add_argument("target", help="a logs directory or a grade.json file")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..verify import Unreadable, verify_published

    try:
        document, found = verify_published(args.target)
    except Unreadable as error:
        raise CliError(str(error)) from None
    if args.json:
        print(
            json.dumps(
                {
                    "target": args.target,
                    "consistent": not found,
                    "disagreements": [
                        {"where": item.where, "stored": item.stored, "expected": item.expected}
                        for item in found
                    ],
                },
                sort_keys=True,
                default=str,
            )
        )
    elif found:
        for item in found:
            print(f"{args.target}: {item}")
    else:
        what = f"reward {document.reward!r}" if document.gradable else "ungradable"
        print(f"{args.target}: consistent ({what}, {document.scheme})")
    return EXIT_FAILED if found else EXIT_OK
