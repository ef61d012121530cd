"""``truereward sweep summary|retries|report|compare|stability``: analyse published grades.

A sweep is a directory or fsspec URL whose subdirectories are runs, each
holding its published grade.json (or, graded in place, logs/verifier/grade.json).
``summary URL``: reward distribution over gradable runs only, refusals by
code and blame, attempts, the retried and still-refused runs. ``retries
URL``: every run that was retried or stands refused for the grader's
reasons, attempt by attempt, and the command that grades the still-refused
ones again. ``report URL --output FILE``: all of that on one
self-contained HTML page with charts (``--baseline BASE``: with the
regressions and fixes against it). ``compare BASE CAND``: runs paired by id:
regressions, fixes, newly ungradable, newly gradable (a run without a reward
is never counted as 0). ``stability URL URL...``: flaky runs and cases
across repeated sweeps. Markdown (default) or JSON. Exit 0, 1 when a
``--fail-on-...`` gate trips, 2 when a sweep cannot be read (or the report
cannot be written).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..util.markdown import cell, fence
from ..util.terminal import printable
from .common import EXIT_FAILED, EXIT_OK, CliError, json_or_text, number
from .progress import Progress

if TYPE_CHECKING:
    from ..grading.request import Regrade
    from ..sweeps.record import RunRecord
    from ..sweeps.retries import RetriesListing


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help="sweeps of published grades: summary, retries, report, compare, stability",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    summary = actions.add_parser("summary", help="rewards, refusals and attempts of one sweep")
    summary.add_argument("sweep", metavar="URL", help="the sweep: a directory or fsspec URL")
    _common_options(summary)
    summary.set_defaults(run=run_summary)

    retries = actions.add_parser(
        "retries",
        help="runs retried or still refused for the grader's reasons, attempt by attempt",
    )
    retries.add_argument("sweep", metavar="URL", help="the sweep: a directory or fsspec URL")
    retries.add_argument("--code", help="only runs with an attempt refused with this code")
    retries.add_argument(
        "--blame", choices=["run", "grader"], help="only runs with an attempt refused so blamed"
    )
    retries.add_argument(
        "--still-refused",
        action="store_true",
        help="only runs that stand refused for the grader's reasons",
    )
    _regrade_options(retries)
    _common_options(retries, formats=("table", "markdown", "json"))
    retries.set_defaults(run=run_retries)

    report = actions.add_parser(
        "report",
        help="one self-contained HTML page: numbers, charts, retries, regressions",
    )
    report.add_argument("sweep", metavar="URL", help="the sweep: a directory or fsspec URL")
    report.add_argument(
        "--output",
        "-o",
        required=True,
        metavar="PATH",
        help="the HTML file to write, whole or not at all (- for standard output)",
    )
    report.add_argument(
        "--baseline", metavar="BASE", help="a baseline sweep: show regressions and fixes against it"
    )
    _regrade_options(report)
    report.add_argument(
        "--limit",
        type=number(int, least=1),
        default=50,
        metavar="N",
        help="rows of each list shown at most; the rest are counted (default: 50)",
    )
    _reading_options(report)
    report.set_defaults(run=run_report)

    compare = actions.add_parser("compare", help="a candidate sweep against a baseline")
    compare.add_argument("baseline", metavar="BASE", help="the baseline sweep")
    compare.add_argument("candidate", metavar="CAND", help="the candidate sweep")
    compare.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a run gradable on both sides has a lower reward in the candidate",
    )
    compare.add_argument(
        "--fail-on-newly-ungradable",
        action="store_true",
        help="exit 1 when a run gradable in the baseline has no reward in the candidate",
    )
    _common_options(compare)
    compare.set_defaults(run=run_compare)

    stability = actions.add_parser("stability", help="flaky runs and cases across sweeps")
    stability.add_argument("sweeps", metavar="URL", nargs="+", help="two or more sweeps")
    _common_options(stability)
    stability.set_defaults(run=run_stability)


def _common_options(
    parser: argparse.ArgumentParser, formats: tuple[str, ...] = ("markdown", "json")
) -> None:
    parser.add_argument("--format", choices=list(formats), default=formats[0], help="output format")
    parser.add_argument(
        "--json", dest="format", action="store_const", const="json", help="same as --format json"
    )
    _reading_options(parser)


def _regrade_options(parser: argparse.ArgumentParser) -> None:
    """--runs and --deployment: what the regrade command names."""
    parser.add_argument(
        "--runs",
        metavar="SWEEP",
        help="the sweep of runs these grades were published from, for the regrade command "
        "(default: URL when the runs were graded in place)",
    )
    parser.add_argument(
        "--deployment",
        default="grade-run/local",
        help="the deployment the regrade command names (default: grade-run/local)",
    )


def _reading_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strict",
        action="store_true",
        help="read each grade.json whole (strict JSON, full schema) rather than the fields used",
    )
    parser.add_argument(
        "--storage-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an fsspec storage option (VALUE is JSON when it parses, else a string)",
    )


def storage_options(pairs: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as a dict; a VALUE that is JSON is parsed."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CliError(f"--storage-option: expected KEY=VALUE, got {pair!r}")
        options[key] = json_or_text(value)
    return options


@contextlib.contextmanager
def _readable() -> Iterator[None]:
    """A sweep that cannot be listed (:class:`~truereward.sweeps.SweepNotFound`)
    as a :class:`CliError` with its message."""
    from ..sweeps import SweepNotFound

    try:
        yield
    except SweepNotFound as error:
        raise CliError(str(error)) from None


def _source(url: str, args: argparse.Namespace) -> Any:
    from ..sweeps import SweepSource

    with _readable():
        return SweepSource(url, storage_options(args.storage_option))


def _emit(args: argparse.Namespace, payload: dict[str, Any], markdown: str) -> None:
    if args.format == "json":
        sys.stdout.write(json.dumps(payload, indent=2, sort_keys=True, allow_nan=False) + "\n")
    else:
        sys.stdout.write(markdown)


def run_summary(args: argparse.Namespace) -> int:
    from ..sweeps import summarize
    from ..sweeps.markdown import render_summary

    source = _source(args.sweep, args)
    with _readable(), Progress("read", args.sweep) as progress:
        summary = summarize(progress.each(source.records(strict=args.strict)))
    _emit(
        args,
        {"sweep": args.sweep, "summary": summary.model_dump(mode="json")},
        render_summary(summary, f"Sweep summary: {args.sweep}"),
    )
    return EXIT_OK


def run_compare(args: argparse.Namespace) -> int:
    from ..sweeps import compare_runs, paired_records
    from ..sweeps.markdown import render_comparison

    baseline, candidate = _source(args.baseline, args), _source(args.candidate, args)
    try:
        with _readable(), Progress("compared", args.candidate) as progress:
            pairs = paired_records(baseline, candidate, strict=args.strict)
            comparison = compare_runs(progress.each(pairs))
    except ArithmeticError as error:  # rewards of weighted-sum/1 near the float range
        raise CliError(f"no comparison: {error}") from None
    tripped = []
    if args.fail_on_regression and comparison.regressions:
        tripped.append(f"{len(comparison.regressions)} regressions")
    if args.fail_on_newly_ungradable and comparison.newly_ungradable:
        tripped.append(f"{len(comparison.newly_ungradable)} newly ungradable runs")
    _emit(
        args,
        {
            "baseline": args.baseline,
            "candidate": args.candidate,
            "comparison": comparison.model_dump(mode="json"),
            "gate": {"failed": bool(tripped), "reasons": tripped},
        },
        render_comparison(comparison, args.baseline, args.candidate),
    )
    if tripped:
        print(f"truereward sweep compare: gate failed: {', '.join(tripped)}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def run_stability(args: argparse.Namespace) -> int:
    from ..sweeps import grouped_records, stability
    from ..sweeps.markdown import render_stability

    if len(args.sweeps) < 2:
        raise CliError("stability needs at least two sweeps")
    sources = [_source(url, args) for url in args.sweeps]
    with _readable(), Progress("read", ", ".join(args.sweeps)) as progress:
        report = stability(
            progress.each(grouped_records(sources, strict=args.strict, with_cases=True)),
            sweeps=len(sources),
        )
    _emit(
        args,
        {"sweeps": list(args.sweeps), "stability": report.model_dump(mode="json")},
        render_stability(report, args.sweeps),
    )
    return EXIT_OK


def _regrade_commands(
    args: argparse.Namespace, in_place: bool, policy: Regrade = "grader-refusals"
) -> tuple[str, str, str]:
    """The deployment and local commands that grade the still-refused runs
    again under ``policy``, and a note when the sweep of runs had to be
    guessed."""
    from ..grading.commands import deployment_command, local_command
    from ..grading.request import GradeRequest
    from ..util.target import secret_option_paths

    options = storage_options(args.storage_option)
    for path in secret_option_paths(options):  # flow parameters are stored in the clear
        options.pop(path.split(".", 1)[0], None)
    note = ""
    if in_place:
        fields: dict[str, Any] = {"sweep": args.sweep}
    elif args.runs:
        fields = {"sweep": args.runs, "target": args.sweep}
    else:
        fields = {"sweep": "SWEEP", "target": args.sweep}
        note = (
            "SWEEP is the sweep of runs these grades were published from "
            "(pass --runs SWEEP to have it filled in)"
        )
    request = GradeRequest(regrade=policy, storage_options=options, **fields)
    return deployment_command(request, args.deployment), local_command(request), note


def _attempts_text(run: Any) -> str:
    text = "; ".join(item.text() for item in run.attempts)
    if run.fix:
        again = ", graded again with nothing changed" if run.unchanged else ""
        text += f" — needs a fix{again}: {run.fix}"
    return text


def _retries_counts(tally: Any) -> str:
    """``3 runs retried (1 healed after a retry), 4 still refused for the
    grader's reasons (2 retryable, 2 needing a fix, 1 graded again with
    nothing changed)``."""
    text = (
        f"{_runs(tally.retried)} retried ({tally.healed} healed after a retry), "
        f"{_runs(tally.still_refused, 'still refused')} for the grader's reasons"
    )
    if tally.still_refused:
        text += f" ({tally.retryable} retryable, {tally.needs_fix} needing a fix"
        if tally.unchanged:
            text += f", {tally.unchanged} graded again with nothing changed"
        text += ")"
    return text


def _runs(count: int, what: str = "") -> str:
    """``1 run``, ``2 runs`` (``what`` after the noun: ``1 run still refused``)."""
    noun = "run" if count == 1 else "runs"
    return f"{count} {noun}" + (f" {what}" if what else "")


def run_retries(args: argparse.Namespace) -> int:
    from ..sweeps.numbers import ABSENT, real
    from ..sweeps.retries import RetriesTally, RetryFilter, retried_runs

    source = _source(args.sweep, args)
    tally = RetriesTally()
    keep = RetryFilter(code=args.code, blame=args.blame, still_refused=args.still_refused)
    out = sys.stdout
    with Progress("read", args.sweep) as progress, _readable():
        lines = retried_runs(progress.each(source.records(strict=args.strict)), tally, keep)
        if args.format == "json":
            out.write('{"runs": [')
            for index, run in enumerate(lines):
                out.write(("," if index else "") + "\n  " + run.model_dump_json())
            out.write("\n]")
        else:
            markdown = args.format == "markdown"
            if markdown:
                out.write(f"## Retries: {cell(args.sweep)}\n\n")
                out.write("| run | state | reward | attempts | attempt by attempt |\n")
                out.write("|---|---|---:|---:|---|\n")
            else:
                out.write(f"{'RUN':<24} {'STATE':<10} {'REWARD':<6} {'ATTEMPTS':<8} HISTORY\n")
            for run in lines:
                reward = ABSENT if run.reward is None else real(run.reward)
                if markdown:
                    out.write(
                        f"| {cell(run.run)} | {run.state} | {reward} | {len(run.attempts)} "
                        f"| {cell(_attempts_text(run))} |\n"
                    )
                else:
                    out.write(
                        f"{run.run:<24} {run.state:<10} {reward:<6} {len(run.attempts):<8} "
                        f"{_attempts_text(run)}\n"
                    )
    deployment, local, note = _regrade_commands(args, source.in_place)
    fixed = _regrade_commands(args, source.in_place, "needing-fix")
    counts = (
        _retries_counts(tally)
        + f", of {tally.runs} runs"
        + (f" ({tally.unreadable} without a readable grade)" if tally.unreadable else "")
        + f"; {tally.listed} listed."
    )
    if args.format == "json":
        footer = {
            "sweep": args.sweep,
            "runs_read": tally.runs,
            "unreadable": tally.unreadable,
            "retried": tally.retried,
            "healed": tally.healed,
            "still_refused": tally.still_refused,
            "retryable": tally.retryable,
            "needs_fix": tally.needs_fix,
            "unchanged": tally.unchanged,
            "listed": tally.listed,
            "regrade": {"deployment": deployment, "local": local, "note": note or None}
            if tally.retryable
            else None,
            "needing_fix": {"deployment": fixed[0], "local": fixed[1], "note": fixed[2] or None}
            if tally.needs_fix
            else None,
        }
        for key, value in footer.items():
            out.write(f",\n{json.dumps(key)}: {json.dumps(value, sort_keys=True)}")
        out.write("}\n")
        return EXIT_OK
    out.write(f"\n{counts}\n")

    def commands(*lines: str) -> str:
        text = "\n".join(lines)
        return (fence(text, "bash") if args.format == "markdown" else text) + "\n"

    if tally.retryable:
        out.write(
            f"\nTo grade the {_runs(tally.retryable, 'still refused')} for the grader's reasons "
            "that grading again may heal, once the fault is fixed (each replaces the grade it "
            f"finds):\n\n{commands(deployment, local)}"
        )
        if note:
            out.write(f"({note})\n")
    if tally.needs_fix:
        out.write(
            f"\n{_runs(tally.needs_fix)} {'needs' if tally.needs_fix == 1 else 'need'} a change "
            "of the task definition or the reader "
            "first (each line says what to change); grading them again as they are adds "
            "an identical attempt. regrade grader-refusals grades one again once its "
            "task definition or reader changed; to grade them all again whatever changed:\n\n"
            f"{commands(fixed[0], fixed[1])}"
        )
        if fixed[2]:
            out.write(f"({fixed[2]})\n")
    return EXIT_OK


def _listed(
    pairs: Iterable[tuple[str, RunRecord | None, RunRecord | None]], listing: RetriesListing
) -> Iterator[tuple[str, RunRecord | None, RunRecord | None]]:
    """``pairs`` as they are, each candidate record fed to ``listing`` on the way."""
    for run, base, cand in pairs:
        if cand is not None:
            listing.add(cand)
        yield run, base, cand


def run_report(args: argparse.Namespace) -> int:
    from ..sweeps import compare_runs, paired_records
    from ..sweeps.html import render_report
    from ..sweeps.retries import RetriesListing
    from ..sweeps.summary import SummaryBuilder

    source = _source(args.sweep, args)
    baseline = _source(args.baseline, args) if args.baseline is not None else None
    listing = RetriesListing(limit=args.limit)
    comparison = None
    # One pass: each record is summarised and offered to the listing as it is
    # read; the listing keeps --limit lines, the summary bounded tallies.
    try:
        with _readable(), Progress("read", args.sweep) as progress:
            if baseline is None:
                builder = SummaryBuilder()
                for record in progress.each(source.records(strict=args.strict)):
                    builder.add(record)
                    listing.add(record)
                summary = builder.result()
            else:
                pairs = paired_records(baseline, source, strict=args.strict)
                comparison = compare_runs(progress.each(_listed(pairs, listing)))
                # compare_runs summarised the candidate's records
                summary = comparison.candidate
    except ArithmeticError as error:  # rewards of weighted-sum/1 near the float range
        raise CliError(f"no comparison: {error}") from None
    regrade: tuple[str, ...] = ()
    note = ""
    if listing.tally.still_refused:
        deployment, local, note = _regrade_commands(args, source.in_place)
        regrade = (deployment, local)
    from datetime import UTC, datetime

    page = render_report(
        summary,
        listing.runs,
        listing.tally,
        comparison,
        title=f"Sweep report: {args.sweep}",
        sweep=args.sweep,
        baseline=args.baseline,
        regrade=regrade,
        regrade_note=note,
        limit=args.limit,
        made=datetime.now(UTC),
    )
    _write_output(args.output, page)
    if args.output != "-":
        # The page went to a file: say where, so the reader can open it.
        print(f"wrote the sweep report to {args.output}")
    return EXIT_OK


def _write_output(path: str, text: str) -> None:
    """``text`` (UTF-8) to standard output (``-``), or to ``path`` whole or
    not at all: a temporary file in the same directory, flushed to disk,
    then moved over ``path`` with ``os.replace``. :class:`CliError` naming
    the path when it cannot be written (no temporary file is left)."""
    if path == "-":
        sys.stdout.flush()
        binary = getattr(sys.stdout, "buffer", None)
        if binary is None:  # a text-only stream put in place by the caller
            sys.stdout.write(text)
        else:  # bytes pass main()'s printable stdout: the text is made printable here
            binary.write(printable(text).encode("utf-8"))
            binary.flush()
        return
    from ..util.atomic import write_whole

    try:
        write_whole(path, text.encode("utf-8"))
    except OSError as error:
        raise CliError(f"--output {path}: cannot write: {error.strerror or error}") from None
