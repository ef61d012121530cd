"""``truereward verify TARGET [--repair]``: fold a published grade again and
check the files beside it.

TARGET is a logs directory, a ``grade.json`` file, an object-store prefix
holding one grade (``s3://bucket/sweep/run-7``), or a whole sweep (a
directory or prefix whose subdirectories are runs), read one run at a time.
Re-folds each document's ``detail`` with the inputs and scheme it records
and compares every stored field; beside it, checks ``reward.txt``,
``reward.json`` and the CTRF view against the grade and, on an object store,
that each object's metadata names that grade (a superseded publisher's late
write is found that way). Reward files with no ``grade.json`` beside them
are inconsistent, each named, in a run and in a sweep alike: no grade
vouches for them, and there is none to repair them from. ``--repair``
publishes each standing grade again, which rewrites what is missing or
stray, then checks again. Exit 0 consistent, 1 inconsistent (each
disagreement is printed), 2 unreadable.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from .common import EXIT_FAILED, EXIT_OK, CliError
from .progress import Progress

if TYPE_CHECKING:
    from ..grade.readback import Disagreement


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


def _ours_present(target: Any) -> set[str]:
    """Which of the names that make ``target`` one run's place stand there
    (on an object store, the first found): ``grade.json``, an unfinished
    session's ``grade.previous.json``, the reward files (with no grade,
    they are what verify flags)."""
    import os

    from ..grade.files import GRADE, PREVIOUS_GRADE, REWARD_FILES
    from ..publishing import PublishError, open_store

    names = (GRADE, PREVIOUS_GRADE, *REWARD_FILES)
    if target.is_local:
        path = target.path
        if os.path.isfile(path):
            return {GRADE}
        return {name for name in names if os.path.lexists(os.path.join(path, name))}
    try:
        store = open_store(target)
        # By name, a HEAD each, stopping at the first found: a listing of a
        # sweep's prefix would page through its runs.
        for name in names:
            if store.etag(name) is not None:
                return {name}
    except PublishError as error:
        raise CliError(str(error)) from None
    return set()


def _run_place(target: Any, run: str) -> Any:
    """Where a sweep's run keeps its grade: the run's own place when a grade
    stands there (a target of its own), else its ``logs/verifier`` (graded
    in place), unless only the run's own place holds reward files: those
    are then what is checked (and flagged), not an empty logs directory."""
    from ..grade.files import GRADE, PREVIOUS_GRADE

    own = target.child(run)
    present = _ours_present(own)
    if present & {GRADE, PREVIOUS_GRADE}:
        return own
    inner = target.child(run, "logs", "verifier")
    if not present or _ours_present(inner):
        return inner
    return own


def _one(target: Any, repair: bool) -> dict[str, Any]:
    """The outcome of one grade: verified, repaired when asked and needed."""
    from ..verify import RewardWithoutGrade, Unreadable, repair_target, verify_target

    try:
        document, found = verify_target(target)
        repaired: list[str] = []
        if found and repair:
            repaired = repair_target(target)
            document, found = verify_target(target)
    except RewardWithoutGrade as error:
        # Nothing to fold and nothing to repair from, but a reward stands:
        # inconsistent, each file named, as beside a grade that has none.
        return {
            "target": target.url,
            "readable": True,
            "consistent": False,
            "gradable": None,
            "reward": None,
            "scheme": None,
            "repaired": [],
            "why": str(error),
            "disagreements": _disagreements(error.found),
        }
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
        "disagreements": _disagreements(found),
    }


def _disagreements(found: list[Disagreement]) -> list[dict[str, Any]]:
    """Disagreements as the outcome lists them."""
    return [
        {"where": item.where, "stored": item.stored, "expected": item.expected} for item in found
    ]


def _print(outcome: dict[str, Any]) -> None:
    where = outcome["target"]
    if not outcome["readable"]:
        print(f"{where}: unreadable: {outcome['why']}")
        return
    for done in outcome["repaired"]:
        print(f"{where}: repaired: {done}")
    if outcome.get("why"):
        print(outcome["why"])  # it starts with the place
    for item in outcome["disagreements"]:
        print(f"{where}: {item['where']}: stored {item['stored']!r}, expected {item['expected']!r}")
    if outcome["consistent"]:
        what = f"reward {outcome['reward']!r}" if outcome["gradable"] else "ungradable"
        print(f"{where}: consistent ({what}, {outcome['scheme']})")


def _count(outcome: dict[str, Any], counts: dict[str, int]) -> None:
    """Add what one run's verify came to to ``counts``."""
    counts["runs"] += 1
    if not outcome["readable"]:
        counts["unreadable"] += 1
    elif outcome["consistent"]:
        counts["consistent"] += 1
        counts["repaired"] += bool(outcome["repaired"])
    else:
        counts["inconsistent"] += 1


def run(args: argparse.Namespace) -> int:
    from ..publishing import as_target
    from ..sweeps import SweepNotFound, SweepSource
    from .target_args import parse_storage_options

    options = parse_storage_options(args.storage_options)
    target = as_target(args.target, options)
    if _ours_present(target):
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
    writes = "runs repaired" if args.repair else None
    with Progress("verified", args.target, len(runs), writes) as progress:
        for run in runs:
            outcome = _one(_run_place(target, run), args.repair)
            _count(outcome, counts)
            progress.written += bool(outcome.get("repaired"))
            progress.advance()
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
