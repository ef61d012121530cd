"""``truereward verify TARGET [--repair]``: fold a published grade again and
check the files beside it.

TARGET is a logs directory, a ``grade.json`` file, an object-store prefix
holding one grade (``s3://bucket/sweep/run-7``), or a whole sweep (a
directory or prefix whose subdirectories are runs), read one run at a time.
Re-folds each document's ``detail`` with the inputs and scheme it records
and compares every stored field; beside it, checks ``reward.txt``,
``reward.json`` and the CTRF view against the grade and, on an object store,
that each object's metadata names that grade (a superseded publisher's late
write is found that way). ``--repair`` publishes each standing grade again,
which rewrites what is missing or stray, then checks again. Exit 0
consistent, 1 inconsistent (each disagreement is printed), 2 unreadable.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from .common import EXIT_FAILED, EXIT_OK, CliError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="check a published grade (or a sweep of them) by folding it again",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    parser.add_argument(
        "target", help="a logs directory, a grade.json file, a URL of one grade, or a sweep"
    )
    parser.add_argument(
        "--repair",
        action="store_true",
        help="rewrite what is missing or stray beside each standing grade, then check again",
    )
    parser.add_argument(
        "--storage-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="storage_options",
        help="an fsspec storage option for a URL (repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    parser.set_defaults(run=run)


def _is_one_grade(target: Any) -> bool:
    """Whether ``target`` holds a grade (or an unfinished session's) rather
    than being a sweep of runs."""
    import os

    from ..files import GRADE, PREVIOUS_GRADE
    from ..publishing import PublishError, open_store

    if target.is_local:
        path = target.path
        return os.path.isfile(path) or any(
            os.path.lexists(os.path.join(path, name)) for name in (GRADE, PREVIOUS_GRADE)
        )
    try:
        store = open_store(target)
        return store.etag(GRADE) is not None or store.etag(PREVIOUS_GRADE) is not None
    except PublishError as error:
        raise CliError(str(error)) from None


def _one(target: Any, repair: bool) -> dict[str, Any]:
    """The outcome of one grade: verified, repaired when asked and needed."""
    from ..verify import Unreadable, repair_target, verify_target

    try:
        document, found = verify_target(target)
        repaired: list[str] = []
        if found and repair:
            repaired = repair_target(target)
            document, found = verify_target(target)
    except Unreadable as error:
        return {"target": target.url, "readable": False, "why": str(error)}
    return {
        "target": target.url,
        "readable": True,
        "consistent": not found,
        "gradable": document.gradable,
        "reward": document.reward,
        "scheme": document.scheme,
        "repaired": repaired,
        "disagreements": [
            {"where": item.where, "stored": item.stored, "expected": item.expected}
            for item in found
        ],
    }


def _print(outcome: dict[str, Any]) -> None:
    where = outcome["target"]
    if not outcome["readable"]:
        print(f"{where}: unreadable: {outcome['why']}")
        return
    for done in outcome["repaired"]:
        print(f"{where}: repaired: {done}")
    for item in outcome["disagreements"]:
        print(f"{where}: {item['where']}: stored {item['stored']!r}, expected {item['expected']!r}")
    if outcome["consistent"]:
        what = f"reward {outcome['reward']!r}" if outcome["gradable"] else "ungradable"
        print(f"{where}: consistent ({what}, {outcome['scheme']})")


def run(args: argparse.Namespace) -> int:
    from ..publishing import as_target
    from ..sweeps import SweepNotFound, SweepSource
    from .target_args import parse_storage_options

    options = parse_storage_options(args.storage_options)
    target = as_target(args.target, options)
    if _is_one_grade(target):
        outcome = _one(target, args.repair)
        if not outcome["readable"]:
            raise CliError(outcome["why"])
        if args.json:
            print(json.dumps(outcome, sort_keys=True, default=str))
        else:
            _print(outcome)
        return EXIT_OK if outcome["consistent"] else EXIT_FAILED
    # A sweep: one run at a time (memory holds one grade, whatever the size).
    try:
        source = SweepSource(args.target, options)
        runs = source.run_names()
    except SweepNotFound as error:
        raise CliError(str(error)) from None
    counts = {"runs": 0, "consistent": 0, "repaired": 0, "inconsistent": 0, "unreadable": 0}
    for run in runs:
        found = target.child(run)
        if not _is_one_grade(found):  # graded in place: the run's own logs/verifier
            found = target.child(run, "logs", "verifier")
        outcome = _one(found, args.repair)
        counts["runs"] += 1
        if not outcome["readable"]:
            counts["unreadable"] += 1
        elif outcome["consistent"]:
            counts["consistent"] += 1
            counts["repaired"] += bool(outcome["repaired"])
        else:
            counts["inconsistent"] += 1
        if args.json:
            print(json.dumps(outcome, sort_keys=True, default=str))
        elif not outcome.get("consistent") or outcome.get("repaired"):
            _print(outcome)
    summary = ", ".join(f"{value} {name}" for name, value in counts.items())
    if args.json:
        print(json.dumps({"sweep": args.target, **counts}, sort_keys=True))
    else:
        print(f"{args.target}: {summary}")
    return EXIT_OK if counts["inconsistent"] == counts["unreadable"] == 0 else EXIT_FAILED
