"""``truereward checks``: score model outputs against criteria, compare runs.

``truereward checks score FILE|-`` reads a case file (JSON array or JSONL)
and writes a report (``--format json|markdown|junit|ctrf``, default json) to
standard output or ``--output PATH`` (written whole or not at all), as the
cases are scored, over ``--jobs`` processes (default: one per core). Cases
that could not be scored and inputs read in a surprising way are listed on
standard error with their file and line. A regex search is bounded by
``--regex-timeout`` and the checks of a case together by ``--case-budget``;
a check that runs out gives up, and its case is not scored (an error, never
a failure). Exit 0 when every case passed (or the pass rate reaches
``--fail-under``), 1 when some failed, 2 when the file cannot be read or
some case could not be scored (the others are still scored and reported).

``truereward checks compare BASELINE CURRENT`` compares two JSON reports
(from ``checks score`` or ai-eval-forge): regressions, improvements, score
changes beyond ``--tolerance``, added and removed cases. Exit 0 when
nothing regressed, 1 when something did (or was removed, or could not be
scored now), 2 on a bad file (including two cases with one id).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any, TextIO

from ..util.terminal import printable, printable_stream
from .common import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERNAL, EXIT_OK, CliError, number

#: Report formats of ``score`` and ``compare``.
SCORE_FORMATS = ("json", "markdown", "junit", "ctrf")
COMPARE_FORMATS = ("json", "markdown")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "checks",
        help="score model outputs against criteria checks; compare two runs",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="checks_command", required=True, metavar="COMMAND")

    score = commands.add_parser("score", help="score a case file (JSON array or JSONL)")
    score.add_argument("file", help="the case file ('-' for standard input)")
    score.add_argument("--format", choices=SCORE_FORMATS, default="json", help="report format")
    score.add_argument("--output", metavar="PATH", help="write the report here (default: stdout)")
    score.add_argument(
        "--jobs",
        type=number(int, least=0),
        default=0,
        metavar="N",
        help="worker processes (default 0: one per core; 1: no workers)",
    )
    score.add_argument(
        "--fail-under",
        type=number(float, least=0.0, most=1.0),
        metavar="RATE",
        help="exit 1 only when the pass rate is below RATE (0..1), not on any failure",
    )
    score.add_argument(
        "--regex-timeout",
        type=number(float, positive=True),
        default=1.0,
        metavar="SECONDS",
        help="CPU seconds one regex search may take (default 1); a search that runs out "
        "gives up and its case is not scored",
    )
    score.add_argument(
        "--case-budget",
        type=number(float, positive=True),
        default=5.0,
        metavar="SECONDS",
        help="CPU seconds all the checks of one case may take together (default 5)",
    )
    score.set_defaults(run=run_score)

    compare = commands.add_parser("compare", help="compare two JSON reports of `checks score`")
    compare.add_argument("baseline", help="the baseline report (known good)")
    compare.add_argument("current", help="the current report")
    compare.add_argument(
        "--format", choices=COMPARE_FORMATS, default="markdown", help="output format"
    )
    compare.add_argument(
        "--tolerance",
        type=number(float, least=0.0),
        default=0.0,
        metavar="X",
        help="score changes of at most X are not listed (default 0)",
    )
    compare.add_argument("--output", metavar="PATH", help="write here (default: stdout)")
    compare.add_argument("--baseline-label", default="baseline", help="label of the baseline")
    compare.add_argument("--current-label", default="current", help="label of the current run")
    compare.set_defaults(run=run_compare)


def _require_checks() -> None:
    try:
        import regex  # noqa: F401
    except ImportError:
        raise CliError(
            "truereward checks needs the 'regex' package: pip install 'truereward[checks]'"
        ) from None


@contextlib.contextmanager
def _output(path: str | None) -> Iterator[TextIO]:
    """Standard output, or ``path`` written whole or not at all (a temporary
    file beside it, moved into place when everything was written)."""
    if path is None:
        sys.stdout.flush()
        binary = getattr(sys.stdout, "buffer", None)
        if binary is None:  # a text-only stream put in place by the caller
            yield sys.stdout
            return
        stream = io.TextIOWrapper(binary, encoding="utf-8", newline="\n")
        try:
            yield printable_stream(stream)  # as main() has it: no text a terminal acts on
            stream.flush()
        finally:
            stream.detach()
        return
    import tempfile  # here: the command line imports this module for every command

    target = Path(path)
    try:
        handle, temporary = tempfile.mkstemp(
            dir=target.parent or Path("."), prefix=f".{target.name}.", suffix=".tmp"
        )
    except OSError as error:
        raise CliError(f"--output {path}: cannot write: {error.strerror or error}") from None
    try:
        with open(handle, "w", encoding="utf-8", newline="\n") as stream:
            yield stream
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, target)
    except OSError as error:
        raise CliError(f"--output {path}: cannot write: {error.strerror or error}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


@contextlib.contextmanager
def _input(path: str) -> Iterator[Any]:
    """The case file as a byte stream (``-``: standard input), opened as
    every input is (:mod:`truereward.util.safefile`): a FIFO, a device, a
    directory or a symlink is refused, never waited on or followed."""
    from ..util import safefile
    from .common import refused_file

    if path == "-":
        yield sys.stdin.buffer
        return
    with contextlib.ExitStack() as stack:
        try:
            fd = stack.enter_context(safefile.opened(path))
        except safefile.NotAFile as error:
            raise CliError(refused_file(path, error)) from None
        except OSError as error:
            raise CliError(f"{path}: cannot read: {error.strerror or error}") from None
        yield stack.enter_context(open(fd, "rb", closefd=False))


def _tell(lines: list[str], count: int, what: str) -> None:
    for line in lines:
        print(printable(line), file=sys.stderr)  # a case's text, as stdout shows it
    if count > len(lines):
        print(f"... and {count - len(lines)} more {what} (see the report)", file=sys.stderr)


def run_score(args: argparse.Namespace) -> int:
    _require_checks()
    from ..checks import ScoringOptions, score_file
    from ..checks.parallel import available_cores

    jobs = args.jobs or available_cores()
    name = "<stdin>" if args.file == "-" else args.file
    options = ScoringOptions(regex_timeout=args.regex_timeout, case_budget=args.case_budget)
    with _input(args.file) as stream, _output(args.output) as out:
        try:
            report = score_file(
                stream, out, file=name, format=args.format, jobs=jobs, options=options
            )
        except OSError as error:
            raise CliError(f"{name}: cannot read: {error.strerror or error}") from None
    summary = report.summary
    _tell([f"warning: {line}" for line in report.warnings], report.warning_count, "warnings")
    _tell(report.errors, summary.errors, "cases that could not be scored")
    gave_up = f" ({report.gave_up} gave up within the bounds)" if report.gave_up else ""
    print(
        f"{summary.total} cases: {summary.passed} passed, {summary.failed - summary.errors} "
        f"failed, {summary.errors} not scored{gave_up}; pass rate {summary.pass_rate:.2%}",
        file=sys.stderr,
    )
    if report.internal_errors:
        print(
            f"truereward checks score: {report.internal_errors} case(s) hit a bug in truereward "
            "(reported as errors)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    if summary.errors:
        return EXIT_BAD_INPUT
    if args.fail_under is not None:
        needed = Fraction(repr(args.fail_under))
        reached = Fraction(summary.passed, summary.total) if summary.total else Fraction(0)
        return EXIT_OK if reached >= needed else EXIT_FAILED
    return EXIT_FAILED if summary.failed else EXIT_OK


def run_compare(args: argparse.Namespace) -> int:
    import json

    from ..checks.compare import BadResults, compare, load_results, render_markdown

    try:
        baseline = load_results(args.baseline)
        current = load_results(args.current)
    except BadResults as error:
        raise CliError(str(error)) from None
    result = compare(baseline, current, tolerance=args.tolerance)
    with _output(args.output) as out:
        if args.format == "json":
            out.write(json.dumps(result.to_json(), indent=2, allow_nan=False) + "\n")
        else:
            out.write(
                render_markdown(
                    result, baseline_label=args.baseline_label, current_label=args.current_label
                )
            )
    return EXIT_FAILED if result.has_regressions else EXIT_OK
