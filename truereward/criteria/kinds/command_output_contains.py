"""``command_output_contains``: a command's standard output contains
``text``.

Options: those of every command (:mod:`..commands`) and ``text``. The
output is read as Python's text mode reads it (UTF-8, undecodable bytes
replaced, universal newlines). The exit status is not looked at (as in
rewardkit; add a ``command_succeeds`` case for it).
"""

from __future__ import annotations

from ..commands import CommandOptions, output_text, run_command
from ..context import Context
from ..kind import CriterionKind, Outcome
from ..values import shown


class CommandOutputContains(CommandOptions):
    text: str


def evaluate(options: CommandOutputContains, context: Context) -> Outcome:
    ran = run_command(options, context)
    return Outcome.binary(
        options.text in output_text(ran.stdout),
        f"the output does not contain {shown(options.text)}",
    )


CRITERION = CriterionKind(
    name="command_output_contains",
    description="a command's output contains a string",
    options=CommandOutputContains,
    evaluate=evaluate,
)
