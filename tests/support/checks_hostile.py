"""Check kinds that misbehave on purpose, for the robustness tests of
``truereward checks score``; and a runner for the command line with them.

:func:`register_kinds` registers them (importing this module does not, so
that the test process's registry stays the built-in one). ``python -m tests.support.checks_hostile
checks score FILE ...`` runs the command line with them registered in the
main process, so that the worker processes, forked from it, have them too
(the command line is single-threaded, so its workers are forked).

- ``pid``: passes, with the id of the process that ran it as its detail.
- ``memory_error``: raises ``MemoryError``, as a check whose output is too
  large for the process would.
- ``recursion_error``: raises ``RecursionError``.
- ``bug``: raises ``RuntimeError`` (a bug in a check).
- ``kill_worker``: kills the process running it with SIGKILL (as the
  out-of-memory killer would), unless it is the command line's own process
  (``HOSTILE_MAIN_PID``): a worker dies.
- ``term_worker``: the same with SIGTERM, as the pool ends its other
  workers when one died.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping
from typing import Any

from truereward.checks import CheckType, Measurement, register
from truereward.checks.context import CaseContext

MAIN_PID = "HOSTILE_MAIN_PID"


def _no_params(check: Mapping[str, Any], case: Mapping[str, Any], warn: Any) -> dict[str, Any]:
    return {}


def _pid(params: Mapping[str, Any], context: CaseContext) -> Measurement:
    return Measurement(1.0, (1, 1), f"pid {os.getpid()}")


def _memory_error(params: Mapping[str, Any], context: CaseContext) -> Measurement:
    raise MemoryError


def _recursion_error(params: Mapping[str, Any], context: CaseContext) -> Measurement:
    raise RecursionError("maximum recursion depth exceeded (injected)")


def _bug(params: Mapping[str, Any], context: CaseContext) -> Measurement:
    raise RuntimeError("a bug, injected")


def _kill_worker(params: Mapping[str, Any], context: CaseContext) -> Measurement:
    if str(os.getpid()) != os.environ.get(MAIN_PID):
        os.kill(os.getpid(), signal.SIGKILL)
    return Measurement(1.0, (1, 1), "not in a worker")


def _term_worker(params: Mapping[str, Any], context: CaseContext) -> Measurement:
    if str(os.getpid()) != os.environ.get(MAIN_PID):
        os.kill(os.getpid(), signal.SIGTERM)
    return Measurement(1.0, (1, 1), "not in a worker")


KINDS = {
    "pid": _pid,
    "memory_error": _memory_error,
    "recursion_error": _recursion_error,
    "bug": _bug,
    "kill_worker": _kill_worker,
    "term_worker": _term_worker,
}

CHECK_TYPES = [
    CheckType(name, f"test kind {name}", _no_params, measure) for name, measure in KINDS.items()
]


def register_kinds() -> None:
    """Register the kinds in this process (again: a no-op)."""
    for kind in CHECK_TYPES:
        register(kind)


if __name__ == "__main__":
    register_kinds()
    os.environ[MAIN_PID] = str(os.getpid())
    from truereward.cli import main

    sys.exit(main(sys.argv[1:]))
