"""``command_succeeds``: a command exits with status 0.

Options: those of every command (:mod:`..commands`: ``cmd``, ``cwd``,
``timeout``, ``shell``, ``env``, ``max_output``, ``timeout_fails``,
``missing_program_fails``). Pass on status 0, fail on any other (the why
has the end of its standard error). Runs only in a live workspace.
"""

from __future__ import annotations

from ..commands import CommandOptions, run_command, tail
from ..context import Context
from ..kind import CriterionKind, Outcome


def evaluate(options: CommandOptions, context: Context) -> Outcome:
    ran = run_command(options, context)
    return Outcome.binary(
        ran.returncode == 0, f"exited with status {ran.returncode}: {tail(ran.stderr)}"
    )


CRITERION = CriterionKind(
    name="command_succeeds",
    description="a command exits with status 0",
    options=CommandOptions,
    evaluate=evaluate,
)
