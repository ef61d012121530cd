"""The ``truereward`` command line.

Each subcommand is one module of this package with ``register(subparsers)``
and ``run(args) -> int``; :data:`COMMANDS` lists them. Errors in the input
end with exit status 2 and a message naming the file, line and field, never a
traceback (:mod:`truereward.cli.common` has the exit codes). SIGINT (Ctrl-C)
and SIGTERM stop a command with one line on stderr saying how far it got
and what it wrote (:mod:`truereward.cli.progress`), and status 130 or 143.
``TRUEREWARD_LOG_LEVEL`` (``INFO``, ``DEBUG``) sends the ``truereward``
logger to stderr at that level.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Sequence
from importlib import import_module
from typing import Any

from .._version import __version__
from ..util.terminal import printable, printable_stream
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
    _log_to_stderr(os.environ.get("TRUEREWARD_LOG_LEVEL", ""))
    previous = _stop_on_sigterm()
    stdout = sys.stdout
    # What runs wrote (a refusal's reason, a forged grade's text) reaches the
    # terminal shown, never acted on (an ESC sequence clears the screen).
    sys.stdout = printable_stream(stdout)
    try:
        status: int = args.run(args)
    except CliError as error:
        _say(f"truereward {args.command}: {error}")
        return error.status
    except KeyboardInterrupt as stop:
        return _stopped(args, stop)
    except BrokenPipeError:
        # The reader of our output went away (``| head``): stop quietly, with
        # the status of a process ended by SIGPIPE, as other tools do.
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as error:
        if os.environ.get("TRUEREWARD_DEBUG"):
            raise
        _say(
            f"truereward {args.command}: internal error: {type(error).__name__}: {error} "
            "(set TRUEREWARD_DEBUG=1 for a traceback)"
        )
        return EXIT_INTERNAL
    finally:
        sys.stdout = stdout
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return status


def _say(line: str) -> None:
    """``line`` on stderr, :func:`~truereward.util.terminal.printable`."""
    print(printable(line), file=sys.stderr)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command is, as Ctrl-C raises KeyboardInterrupt."""


def _terminate(number: int, frame: object) -> None:
    raise Terminated("SIGTERM")


def _stop_on_sigterm() -> Any:
    """SIGTERM stops a command as Ctrl-C does (when it had Python's default
    handler and this is the main thread); returns the handler it replaced."""
    try:
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            return signal.signal(signal.SIGTERM, _terminate)
    except ValueError:
        pass
    return None


def _stopped(args: argparse.Namespace, stop: KeyboardInterrupt) -> int:
    """The one line a stopped command ends with, and its status."""
    from .progress import current

    number = signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT
    status = 128 + int(number)
    progress = current()
    how_far = progress.stopped() if progress is not None else "nothing was written"
    name = " ".join(str(part) for part in (args.command, getattr(args, "action", None)) if part)
    try:
        _say(
            f"truereward {name}: stopped by {number.name}: {how_far}; exit status {status}; "
            "run the same command again to resume"
        )
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return status


def _log_to_stderr(level: str) -> None:
    """Send the ``truereward`` logger to stderr at ``level`` (a logging
    level's name); nothing for an empty or unknown one."""
    number = logging.getLevelName(level.strip().upper()) if level.strip() else None
    if not isinstance(number, int):
        return
    logger = logging.getLogger("truereward")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(number)


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
