"""``command_output_matches_regex``: a regular expression matches somewhere
in a command's standard output.

Options: those of every command (:mod:`..commands`) and ``pattern`` (Python
``re`` syntax, searched as ``file_contains_regex`` searches: bounded,
``CHECK_GAVE_UP`` when it runs out of time). The exit status is not looked
at.
"""

from __future__ import annotations

from ..commands import CommandOptions, output_text, run_command
from ..context import Context
from ..kind import CriterionKind, Outcome
from ..patterns import check, search
from ..values import shown


class CommandOutputMatchesRegex(CommandOptions):
    pattern: str


def evaluate(options: CommandOutputMatchesRegex, context: Context) -> Outcome:
    check(options.pattern)  # a pattern that cannot be searched refuses before the command runs
    ran = run_command(options, context)
    found = search(
        options.pattern,
        output_text(ran.stdout),
        timeout=context.regex_timeout,
        what="the command's output",
    )
    return Outcome.binary(
        found is not None, f"the output has no match for {shown(options.pattern)}"
    )


CRITERION = CriterionKind(
    name="command_output_matches_regex",
    description="a regular expression matches a command's output",
    options=CommandOutputMatchesRegex,
    evaluate=evaluate,
)
