"""The ``truereward`` command line.

Each subcommand is one module of this package with ``register(subparsers)``
and ``run(args) -> int``; :data:`COMMANDS` lists them. Errors in the input
end with exit status 2 and a message naming the file, line and field, never a
traceback (:mod:`truereward.cli.common` has the exit codes).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import import_module

from .._version import __version__
from .common import EXIT_INTERNAL, CliError

__all__ = ["COMMANDS", "main"]

#: Subcommand modules, in the order ``--help`` lists them.
COMMANDS = ("fold", "grade", "verify", "schema", "codes", "sweep", "calibrate", "checks")


def _parser(commands: Sequence[str] = COMMANDS) -> argparse.ArgumentParser:
    """The parser with the subcommands ``commands`` (default: all of them)."""
    parser = argparse.ArgumentParser(
        prog="truereward",
        description="The reward of a graded run, or the reason there is none.",
    )
    parser.add_argument("--version", action="version", version=f"truereward {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in commands:
        module = import_module(f".{name}", __name__)
        module.register(subparsers)
    return parser


def _commands_for(argv: Sequence[str]) -> Sequence[str]:
    """The subcommands to build the parser with: only the one named when the
    first argument names one (``truereward fold ...`` imports and builds
    nothing of the other seven, a tenth of its start-up), else all of them
    (``--help`` lists them; an unknown name is reported with the list)."""
    return (argv[0],) if argv and argv[0] in COMMANDS else COMMANDS


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    if argv is None:
        argv = sys.argv[1:]
    parser = _parser(_commands_for(argv))
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
    except CliError as error:
        print(f"truereward {args.command}: {error}", file=sys.stderr)
        return error.status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader of our output went away (``| head``): stop quietly, with
        # the status of a process ended by SIGPIPE, as other tools do.
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as error:
        if os.environ.get("TRUEREWARD_DEBUG"):
            raise
        print(
            f"truereward {args.command}: internal error: {type(error).__name__}: {error} "
            "(set TRUEREWARD_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    return status


#: The status of a command whose output pipe closed (128 + SIGPIPE).
EXIT_BROKEN_PIPE = 141


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush of a
    closed pipe does not print a second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def console() -> None:
    """Entry point of the console script."""
    sys.exit(main())
