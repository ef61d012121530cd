"""Running the command a criterion names, with the outcome's blame decided.

:class:`CommandOptions` are the options every command criterion takes
(``cmd``, ``shell``, ``cwd``, ``timeout``, ``max_output``, ``env``,
``timeout_fails``, ``missing_program_fails``). A command that ran is
measured; one that floods its output fails; one out of time is
``GRADER_TIMEOUT``, a missing program of the environment ``TOOL_MISSING``,
unless the options make them the run's failure. docs/criteria.md gives the
options and who failed in each case.
"""

from __future__ import annotations

import os
import re
import shlex
from typing import Annotated

from pydantic import Field

from ..codes import Ungradable
from ..util import safefile
from .codes import TOOL_MISSING
from .context import Context
from .files import as_text
from .kind import Failure, Options
from .options import Path, Seconds
from .process import Ran, run_program

__all__ = ["MAX_OUTPUT", "CommandOptions", "output_text", "run_command", "shell_syntax"]

#: The most output a command may write to one stream, by default and at most.
MAX_OUTPUT = 1 << 20
MAX_OUTPUT_LIMIT = 64 << 20
SHELL = "/bin/sh"

_GLOBAL = frozenset("|&;<>()$`*?[{}\n")
_WORD_START = frozenset("#~")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


class CommandOptions(Options):
    """What every command criterion takes (module docstring)."""

    cmd: str | Annotated[list[str], Field(min_length=1)]
    cwd: Path | None = None
    timeout: Seconds = 30.0
    shell: bool = False
    env: dict[str, str] = Field(default_factory=dict)
    max_output: Annotated[int, Field(ge=1, le=MAX_OUTPUT_LIMIT)] = MAX_OUTPUT
    timeout_fails: bool = False
    missing_program_fails: bool = False


def shell_syntax(command: str) -> str | None:
    """The first piece of shell syntax in ``command`` outside quotes (a
    character such as ``|``, or ``an unclosed quote``, or ``a variable
    assignment``), or ``None`` when splitting it into words (``shlex``) is
    all a shell would do. Inside double quotes ``$`` and a backquote still
    expand, and a backslash before them (or a newline) means something else
    to a shell than to ``shlex``. Braces count (bash expands ``{a,b}``)."""
    quote = ""
    word_start = True
    index = 0
    while index < len(command):
        char = command[index]
        if quote == "'":
            quote = "" if char == "'" else quote
        elif quote == '"':
            if char == "\\":
                index += 1
                if command[index : index + 1] in ("$", "`", "\n"):
                    return "an escape a shell reads otherwise"
            elif char == '"':
                quote = ""
            elif char in "$`":
                return char
        elif char == "\\":
            index += 1
            if command[index : index + 1] in ("\n", ""):
                return "an escape a shell reads otherwise"  # a line continuation, or nothing
            word_start = False
        elif char in "'\"":
            quote = char
            word_start = False
        elif char in " \t":
            word_start = True
        elif char in _GLOBAL or (word_start and char in _WORD_START):
            return "a newline" if char == "\n" else char
        else:
            word_start = False
        index += 1
    if quote:
        return "an unclosed quote"
    if _ASSIGNMENT.match(command.lstrip()):
        return "a variable assignment"
    return None


def argv(options: CommandOptions) -> list[str]:
    """The arguments to run (module docstring); ``CASE_INVALID`` when the
    options do not make a command."""
    if options.shell:
        if not isinstance(options.cmd, str):
            raise Ungradable("CASE_INVALID", "cmd: a string when shell is true")
        return [SHELL, "-c", options.cmd]
    if isinstance(options.cmd, list):
        return list(options.cmd)
    found = shell_syntax(options.cmd)
    if found is not None:
        raise Ungradable(
            "CASE_INVALID",
            f"cmd {options.cmd[:200]!r} uses shell syntax ({found}): set shell to true, "
            "or give cmd as a list of arguments",
        )
    try:
        words = shlex.split(options.cmd)
    except ValueError as error:
        raise Ungradable("CASE_INVALID", f"cmd {options.cmd[:200]!r}: {error}") from None
    if not words:
        raise Ungradable("CASE_INVALID", "cmd: an empty command")
    return words


def _cannot_start(options: CommandOptions, program: str, root: str, error: OSError) -> Exception:
    said = error.strerror or str(error)
    if options.shell:
        return Ungradable(TOOL_MISSING, f"{program}: cannot start the shell ({said})")
    in_workspace = "/" in program and (
        not program.startswith("/") or safefile.inside(os.path.realpath(program), root)
    )
    if in_workspace:
        return Failure(f"{program}: cannot be run ({said})")
    missing = f"{program}: not found where the verifier runs ({said})"
    return Failure(missing) if options.missing_program_fails else Ungradable(TOOL_MISSING, missing)


def run_command(options: CommandOptions, context: Context) -> Ran:
    """Run the command of ``options`` in the workspace: what it did when it
    finished, or the failure or refusal (module docstring)."""
    files = context.live("commands run")
    words = argv(options)
    cwd = files.directory(options.cwd)
    env = {**os.environ, **options.env} if options.env else None
    try:
        ran = run_program(
            words, cwd=cwd, timeout=options.timeout, max_output=options.max_output, env=env
        )
    except OSError as error:
        raise _cannot_start(options, words[0], files.root, error) from None
    shown = (options.cmd if isinstance(options.cmd, str) else shlex.join(options.cmd))[:200]
    if ran.ended == "flooded":
        raise Failure(f"`{shown}` wrote more than {options.max_output} bytes to one stream")
    if ran.ended == "timeout":
        said = f"`{shown}` did not finish within {options.timeout:g} s"
        if options.timeout_fails:
            raise Failure(said)
        raise Ungradable("GRADER_TIMEOUT", f"{said} (the verifier's bound)")
    return ran


def output_text(data: bytes) -> str:
    """A stream as Python's text mode reads it, undecodable bytes replaced."""
    try:
        return as_text(data, "output")
    except Failure:
        text = data.decode("utf-8", errors="replace")
        return text.replace("\r\n", "\n").replace("\r", "\n")


def tail(data: bytes, limit: int = 300) -> str:
    """The last ``limit`` characters of a stream, for a why."""
    text = output_text(data).strip()
    return text if len(text) <= limit else "..." + text[-limit:]
