"""``truereward sweep summary|compare|stability``: analyse published grades.

A sweep is a directory or fsspec URL whose subdirectories are runs, each
holding its published grade.json. ``summary URL``: reward distribution over
gradable runs only, refusals by code and blame, attempts. ``compare BASE
CAND``: runs paired by id: regressions, fixes, newly ungradable, newly
gradable (a run without a reward is never counted as 0). ``stability URL
URL...``: flaky runs and cases across repeated sweeps. Markdown (default) or
JSON. Exit 0, 1 when a ``--fail-on-...`` gate trips, 2 when a sweep cannot be
read.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..strictjson import StrictJSONError, loads
from .common import EXIT_FAILED, EXIT_OK, CliError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help="summarise, compare or check the stability of sweeps of published grades",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    summary = actions.add_parser("summary", help="rewards, refusals and attempts of one sweep")
    summary.add_argument("sweep", metavar="URL", help="the sweep: a directory or fsspec URL")
    _common_options(summary)
    summary.set_defaults(run=run_summary)

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


def _common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=["markdown", "json"], default="markdown", help="output format"
    )
    parser.add_argument(
        "--json", dest="format", action="store_const", const="json", help="same as --format json"
    )
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
        try:
            options[key] = loads(value)
        except StrictJSONError:
            options[key] = value
    return options


def _source(url: str, args: argparse.Namespace) -> Any:
    from ..sweeps import SweepNotFound, SweepSource

    try:
        return SweepSource(url, storage_options(args.storage_option))
    except SweepNotFound as error:
        raise CliError(str(error)) from None


def _emit(args: argparse.Namespace, payload: dict[str, Any], markdown: str) -> None:
    if args.format == "json":
        sys.stdout.write(json.dumps(payload, indent=2, sort_keys=True, allow_nan=False) + "\n")
    else:
        sys.stdout.write(markdown)


def run_summary(args: argparse.Namespace) -> int:
    from ..sweeps import SweepNotFound, summarize
    from ..sweeps.markdown import render_summary

    source = _source(args.sweep, args)
    try:
        summary = summarize(source.records(strict=args.strict))
    except SweepNotFound as error:
        raise CliError(str(error)) from None
    _emit(
        args,
        {"sweep": args.sweep, "summary": summary.model_dump(mode="json")},
        render_summary(summary, f"Sweep summary: {args.sweep}"),
    )
    return EXIT_OK


def run_compare(args: argparse.Namespace) -> int:
    from ..sweeps import SweepNotFound, compare_runs, paired_records
    from ..sweeps.markdown import render_comparison

    baseline, candidate = _source(args.baseline, args), _source(args.candidate, args)
    try:
        comparison = compare_runs(paired_records(baseline, candidate, strict=args.strict))
    except SweepNotFound as error:
        raise CliError(str(error)) from None
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
    from ..sweeps import SweepNotFound, grouped_records, stability
    from ..sweeps.markdown import render_stability

    if len(args.sweeps) < 2:
        raise CliError("stability needs at least two sweeps")
    sources = [_source(url, args) for url in args.sweeps]
    try:
        report = stability(
            grouped_records(sources, strict=args.strict, with_cases=True),
            sweeps=len(sources),
        )
    except SweepNotFound as error:
        raise CliError(str(error)) from None
    _emit(
        args,
        {"sweeps": list(args.sweeps), "stability": report.model_dump(mode="json")},
        render_stability(report, args.sweeps),
    )
    return EXIT_OK
