"""``command_output_matches``: a command's standard output is ``expected``,
surrounding whitespace aside.

Options: those of every command (:mod:`..commands`) and ``expected``. Read
as for ``command_output_contains``; the exit status is not looked at.
"""

from __future__ import annotations

from ..commands import CommandOptions, output_text, run_command
from ..context import Context
from ..kind import CriterionKind, Outcome
from ..values import shown


class CommandOutputMatches(CommandOptions):
    expected: str


def evaluate(options: CommandOutputMatches, context: Context) -> Outcome:
    ran = run_command(options, context)
    output = output_text(ran.stdout).strip()
    return Outcome.binary(
        output == options.expected.strip(),
        f"the output is {shown(output)}, expected {shown(options.expected.strip())}",
    )


CRITERION = CriterionKind(
    name="command_output_matches",
    description="a command's output is the expected text",
    options=CommandOutputMatches,
    evaluate=evaluate,
)
