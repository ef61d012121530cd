"""``truereward fold ROWS.jsonl``: fold rows and publish the grade.

Reads one CaseResult row per line, folds them (optionally against a declared
case set), builds the grade document and publishes it to the logs directory
(``--logs``, else ``$GRADE_LOGS``, else ``/logs/verifier``). Prints one line:
the reward, or the refusal codes with their blame. Exit 0 when published
(gradable or not: the files say which), 2 on bad input, 3 when another grade
is already published there, 4 when the target cannot be written. Every file
is read as a regular file, never through a symlink, a FIFO or a device:
rows from a pipe or a process substitution go on standard input (``-``).
"""

from __future__ import annotations

import argparse
import hashlib
from typing import Any

from .common import CliError, load_case_set, load_rows, read_bytes
from .target_args import add_publish_arguments, publication, publish_and_report, run_info


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "fold",
        help="fold rows (JSONL) into a grade and publish it",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    parser.add_argument(
        "rows",
        help="JSONL file of CaseResult rows ('-' for stdin; a pipe or <(...) is refused: "
        "give its bytes on stdin)",
    )
    parser.add_argument(
        "--case-set",
        metavar="FILE",
        help="declared cases: JSON or TOML, {id: kind} or a list of {id, kind}",
    )
    parser.add_argument(
        "--evidence",
        action="append",
        default=[],
        metavar="FILE",
        help="an evidence file whose digest the document records (repeatable)",
    )
    add_publish_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from ..grade.document import EvidenceDigest, digest_file, grade_document
    from ..record.validation import describe
    from ..util.exceptions import UnknownName

    data = read_bytes(args.rows)
    rows = load_rows(args.rows, data)
    case_set = load_case_set(args.case_set) if args.case_set else None
    # The rows are evidence too, digested from the bytes folded (standard
    # input cannot be read twice): what ties the grade to what it was read
    # from (truereward.grade.trust); not when they came on stdin.
    read = [*([] if args.rows == "-" else [args.rows]), *args.evidence]
    evidence = []
    if args.rows != "-":
        evidence.append(
            EvidenceDigest(path=args.rows, sha256=hashlib.sha256(data).hexdigest(), size=len(data))
        )
    try:
        evidence += [
            digest_file(path) for path in dict.fromkeys(args.evidence) if path != args.rows
        ]
    except OSError as error:
        raise CliError(f"{error.filename}: cannot read evidence: {error.strerror}") from None
    try:
        document = grade_document(
            rows,
            case_set=case_set,
            scheme=args.scheme,
            run=run_info(args),
            evidence=evidence,
            publication=publication(args, read),
        )
    except UnknownName as error:
        if error.kind != "scheme":
            raise CliError(f"{args.case_set or 'run'}: {error}") from None
        raise CliError(f"--scheme: {error}") from None
    except ValidationError as error:
        raise CliError(f"{args.case_set or 'run'}: {describe(error)}") from None
    except TypeError as error:
        raise CliError(f"{args.case_set or 'run'}: {error}") from None
    return publish_and_report(document, args)
