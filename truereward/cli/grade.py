"""``truereward grade EVIDENCE --reader NAME --case-set FILE``: read a run's
evidence, fold it and publish the grade.

Runs the reader (``ctrf``, ``junit``, ``state``, ``figure``, ``rows``, or
any installed one) on the evidence (a path or an fsspec URL) for the task's
declared cases, folds the rows and publishes the grade like ``truereward
fold``. Evidence the reader refuses (missing, malformed, unreadable) is
published as an ungradable grade with that refusal alone: a grade, not an
error. Evidence that is the ``ctrf.json`` of the logs directory (Harbor's
template writes it there) is kept: our CTRF view goes to
``grade-ctrf.json``. A ``grade.json`` standing in the logs directory is
believed only when grading this evidence again gives the same grade: then
it is a conflict unless ``--replaces`` names it; anything else there
(forged, stale, not a grade) is replaced and kept as ``grade.previous.json``
(``truereward.grade.trust``, docs/hostile.md).
``--case-set`` takes a task spec (JSON or TOML, or a SWE-bench instance
with FAIL_TO_PASS/PASS_TO_PASS); ``--reader`` defaults to the spec's
``reader``. Exit statuses as for ``fold``.
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import CliError
from .target_args import add_publish_arguments, publication, publish_and_report, run_info


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "grade",
        help="read a run's evidence with a reader, fold it and publish the grade",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    parser.add_argument("evidence", help="the evidence: a file, a directory or an fsspec URL")
    parser.add_argument(
        "--case-set",
        required=True,
        metavar="FILE",
        help="the task spec: JSON or TOML, or a SWE-bench instance",
    )
    parser.add_argument("--reader", help="the reader (default: the task spec's reader)")
    parser.add_argument(
        "--evidence-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="evidence_options",
        help="an fsspec storage option for reading the evidence (repeatable)",
    )
    add_publish_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..readers import grade_evidence
    from ..record.taskspec import TaskSpec, TaskSpecError
    from ..util.exceptions import UnknownName
    from .target_args import parse_storage_options

    try:
        spec = TaskSpec.load(args.case_set)
    except TaskSpecError as error:
        raise CliError(str(error)) from None
    reader = args.reader or spec.reader
    if not reader:
        raise CliError("--reader: no reader given, and the task spec names none")
    try:
        document = grade_evidence(
            reader,
            args.evidence,
            spec,
            scheme=args.scheme,
            run=run_info(args),
            storage_options=parse_storage_options(args.evidence_options),
            publication=publication(args, [args.evidence]),
        )
    except UnknownName as error:
        raise CliError(f"--{error.kind}: {error}") from None
    return publish_and_report(document, args)
