"""``truereward calibrate``: measure a judge against human labels.

Reads calibration logs (JSON Lines: a header with the questions, then one
case a line with its labels, the judge's answers and the latency; see
docs/calibrate.md) and prints Markdown (default) or JSON:

- ``score LOG``: per-question figures, misses and latencies;
- ``threshold LOG --min-confidence X``: the same with every answer below
  confidence X counted as an abstention;
- ``stability LOG LOG...``: per question, the share of cases with the same
  decision in every log.

Exit 0 when done, 2 on bad input (the message names the file, line and field).
"""

from __future__ import annotations

import argparse
import json
import re
from typing import TYPE_CHECKING, Any

from .common import EXIT_OK, CliError, number, read_bytes

if TYPE_CHECKING:
    from ..calibrate import Calibration


def _output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=("markdown", "json"),
        default="markdown",
        help="output format (default: markdown)",
    )
    parser.add_argument(
        "--json", dest="format", action="store_const", const="json", help="same as --format json"
    )


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "calibrate",
        help="measure a judge against human labels (score, threshold, stability)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="calibrate_command", required=True, metavar="COMMAND")

    score = commands.add_parser("score", help="per-question figures of one calibration log")
    score.add_argument("log", help="calibration log (JSON Lines; '-' for stdin)")
    _output_options(score)
    score.set_defaults(run=run_score)

    threshold = commands.add_parser(
        "threshold", help="re-score a log with low-confidence answers as abstentions"
    )
    threshold.add_argument("log", help="calibration log (JSON Lines; '-' for stdin)")
    threshold.add_argument(
        "--min-confidence",
        type=number(float, least=0.0, most=1.0),
        required=True,
        metavar="X",
        help="answers with confidence strictly below X (0 to 1) become abstentions",
    )
    _output_options(threshold)
    threshold.set_defaults(run=run_threshold)

    stability = commands.add_parser(
        "stability", help="share of cases with the same decision in every log"
    )
    stability.add_argument("logs", nargs="+", help="calibration logs of the same cases")
    _output_options(stability)
    stability.set_defaults(run=run_stability)


def _load(path: str) -> Calibration:
    from ..calibrate import JudgeError, parse_log

    source = "<stdin>" if path == "-" else path
    try:
        return parse_log(read_bytes(path), source)
    except JudgeError as error:
        raise CliError(str(error)) from None


def _print_report(report: Calibration, args: argparse.Namespace, title: str) -> int:
    from ..calibrate.render import latency_summary, markdown_report

    if args.format == "json":
        out = {
            "log": args.log,
            **report.to_json(),
            "latency": latency_summary(report.latencies_ms),
        }
        print(json.dumps(out, indent=2, sort_keys=True, allow_nan=False))
    else:
        print(markdown_report(report, title), end="")
    return EXIT_OK


def run_score(args: argparse.Namespace) -> int:
    return _print_report(_load(args.log), args, f"Judge calibration: {args.log}")


def run_threshold(args: argparse.Namespace) -> int:
    from ..calibrate import at_min_confidence

    report = at_min_confidence(_load(args.log), args.min_confidence)
    title = f"Judge calibration at confidence >= {args.min_confidence:g}: {args.log}"
    return _print_report(report, args, title)


def run_stability(args: argparse.Namespace) -> int:
    from ..calibrate import JudgeError, stability
    from ..calibrate.render import markdown_stability

    reports = [_load(path) for path in args.logs]
    try:
        result = stability(reports)
    except JudgeError as error:
        # Name the files, not their positions in the list.
        message = re.sub(r"reports\[(\d+)\]", lambda m: args.logs[int(m.group(1))], str(error))
        raise CliError(message) from None
    cases = len(reports[0].decisions)
    if args.format == "json":
        out = {"logs": list(args.logs), "cases": cases, "stability": result}
        print(json.dumps(out, indent=2, sort_keys=True, allow_nan=False))
    else:
        print(markdown_stability(result, args.logs, cases), end="")
    return EXIT_OK
