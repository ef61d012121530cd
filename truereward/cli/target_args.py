"""The publish-side options and output the grading subcommands share
(``fold``, ``grade``): where to publish, how, and the one line (or JSON)
that says what happened."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from typing import Any

from .common import EXIT_CONFLICT, EXIT_OK, EXIT_PUBLISH_FAILED, CliError, json_or_text

#: Where a Harbor verifier's files go unless told otherwise.
DEFAULT_LOGS = "/logs/verifier"
LOGS_ENV = "GRADE_LOGS"


def default_logs() -> str:
    """``$GRADE_LOGS`` when set, else ``/logs/verifier``."""
    return os.environ.get(LOGS_ENV) or DEFAULT_LOGS


def add_publish_arguments(parser: argparse.ArgumentParser) -> None:
    """--logs, --storage-option, --unconditional, --scheme, --replaces,
    --run-id, --sweep, --json."""
    parser.add_argument(
        "--logs",
        metavar="DIR|URL",
        help="where to publish: a directory or an fsspec URL such as s3://bucket/prefix "
        f"(default: ${LOGS_ENV} or {DEFAULT_LOGS})",
    )
    parser.add_argument(
        "--storage-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="storage_options",
        help="an fsspec storage option for --logs (repeatable; the value is read as JSON when "
        "it parses, else as a string; a dotted key such as client_kwargs.region_name sets a "
        "nested option); credentials also come from the usual AWS environment variables",
    )
    parser.add_argument(
        "--unconditional",
        action="store_true",
        help="allow publishing to a backend that cannot write conditionally",
    )
    parser.add_argument(
        "--scheme",
        default=None,
        help="reward scheme (default: the task spec's, else gated-binary/1)",
    )
    parser.add_argument(
        "--replaces",
        metavar="SHA256",
        help="digest of the published grade.json this grade replaces",
    )
    parser.add_argument(
        "--reward-keys",
        metavar="KEYS",
        help="figures reward.json carries beside reward, comma-separated (fix_rate, "
        "guards_hold, case_fraction); any switches Harbor's pass@k off",
    )
    parser.add_argument("--run-id", help="the run's id, recorded in the document")
    parser.add_argument("--sweep", help="the sweep's name, recorded in the document")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")


def publication(args: argparse.Namespace, evidence: list[str]) -> dict[str, Any]:
    """How the files beside grade.json are laid out: the reward keys asked
    for, and our CTRF view as ``grade-ctrf.json`` when one of ``evidence``
    is the target's ``ctrf.json`` (so publishing keeps it)."""
    from ..grade.document import REWARD_KEYS, Publication
    from ..grade.files import ctrf_view_for
    from ..util import urls

    keys = [key.strip() for key in (args.reward_keys or "").split(",") if key.strip()]
    unknown = [key for key in keys if key not in REWARD_KEYS]
    if unknown:
        raise CliError(
            f"--reward-keys: {', '.join(unknown)} is not a figure of a grade; "
            f"known: {', '.join(REWARD_KEYS)}"
        )
    chosen = Publication.model_validate({"reward_keys": keys})
    target = args.logs or default_logs()
    return ctrf_view_for(urls.path_or_url(target), evidence, chosen).model_dump()


def run_info(args: argparse.Namespace) -> dict[str, Any] | None:
    """The document's run metadata from --run-id and --sweep."""
    if args.run_id or args.sweep:
        return {"id": args.run_id, "sweep": args.sweep}
    return None


def parse_storage_options(items: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` strings as a (nested) options dict; :class:`CliError`
    naming the bad item."""
    options: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise CliError(f"--storage-option {item!r}: expected KEY=VALUE")
        *parents, leaf = key.strip().split(".")
        where = options
        for parent in parents:
            nested = where.setdefault(parent, {})
            if not isinstance(nested, dict):
                raise CliError(f"--storage-option {item!r}: {parent} is already a value")
            where = nested
        where[leaf] = json_or_text(raw)
    return options


def publish_and_report(document: Any, args: argparse.Namespace) -> int:
    """Publish ``document`` as the options say and print the outcome; exit
    status 0, or :class:`CliError` with 3 (conflict) / 4 (publish failed) /
    2 (bad --replaces or --storage-option)."""
    from ..grade.document import publishable
    from ..publishing import BadStorageOptions, PublishConflict, PublishError, publish

    document = publishable(document)  # a refusal in place of a grade too large to check
    target = args.logs or default_logs()
    options = parse_storage_options(args.storage_options)
    replaces = args.replaces
    untrusted = replaces is None and (replaces := _untrusted(document, target, options)) is not None
    try:
        result = publish(
            document,
            target,
            replaces=replaces,
            storage_options=options,
            unconditional=args.unconditional,
            keep_replaced=untrusted,
        )
    except PublishConflict as error:
        raise CliError(str(error), EXIT_CONFLICT) from None
    except BadStorageOptions as error:
        raise CliError(f"--storage-option: {error}") from None
    except PublishError as error:
        raise CliError(str(error), EXIT_PUBLISH_FAILED) from None
    except ValueError as error:
        raise CliError(f"--replaces: {error}") from None
    if args.json:
        print(
            json.dumps(
                {
                    "target": result.target,
                    "decision": result.decision.value,
                    "digest": result.digest,
                    "written": list(result.written),
                    "removed": list(result.removed),
                    "gradable": document.gradable,
                    "reward": document.reward,
                    "refusals": [item.model_dump(mode="json") for item in document.refusals],
                },
                sort_keys=True,
            )
        )
    else:
        print(f"{outcome_line(document)} -> {result.target} ({result.decision.value})")
    if result.kept is not None:
        print(
            f"truereward: the grade it replaced is kept as {result.kept} in {result.target}",
            file=sys.stderr,
        )
    return EXIT_OK


def _untrusted(document: Any, target: str, options: dict[str, Any]) -> str | None:
    """The digest of the ``grade.json`` standing at ``target`` when it is
    not the grade ``document``'s evidence gives now
    (:func:`truereward.grade.trust.disagreement`, under any scheme), or not a
    grade at all: the new grade replaces it and keeps it as
    ``grade.previous.json``. ``None`` otherwise: an honest grade of this
    evidence is a conflict unless ``--replaces`` names it."""
    import hashlib

    from ..grade.trust import disagreement
    from ..grading.stored import parse_stored, standing_bytes
    from ..publishing import PublishError, as_target

    try:
        data = standing_bytes(as_target(target, options))
    except (OSError, PublishError, ValueError):
        return None  # publishing will say what is wrong with the target
    if data is None:
        return None
    standing, why = parse_stored(data)
    if standing is not None:
        why = disagreement(standing, document, any_scheme=True) or ""
        if not why:
            return None
    else:
        why = f"it is not a grade document ({why})"
    print(f"truereward: replacing the grade.json found at {target}: {why}", file=sys.stderr)
    return hashlib.sha256(data).hexdigest()


def outcome_line(document: Any) -> str:
    """One line saying the reward, or the refusal codes with blame and count."""
    if document.gradable:
        return f"gradable: reward {document.reward!r} ({document.scheme})"
    counts = Counter((item.code, item.blame.value) for item in document.refusals)
    listed = ", ".join(
        f"{code} ({blame})" + (f" x{count}" if count > 1 else "")
        for (code, blame), count in sorted(counts.items())
    )
    return f"ungradable: {listed}"
