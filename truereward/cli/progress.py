"""Progress of a command over a sweep, and what it says when it is stopped.

:class:`Progress` counts the runs a command has gone through; while open it
is the command's current progress (:func:`current`), so a stopped command
(Ctrl-C, SIGTERM) says on one line how far it got (:meth:`Progress.stopped`).
A live count shows on standard error only when it is a terminal and ``rich``
is installed (the ``progress`` extra); the count is also logged to the
``truereward`` logger. docs/ops.md, "Stopping a sweep, and watching one".
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Any, TypeVar

__all__ = ["LOG_EVERY", "Progress", "current"]

#: Runs between two debug lines of the count.
LOG_EVERY = 1000

log = logging.getLogger("truereward.cli")

_T = TypeVar("_T")
_current: list[Progress] = []
_interrupted: list[Progress] = []


def current() -> Progress | None:
    """The progress of the command under way, or of the one a Ctrl-C (or
    SIGTERM) just stopped, if it keeps one."""
    if _current:
        return _current[-1]
    return _interrupted[-1] if _interrupted else None


class Progress:
    """What the command does to each run (``verb``: ``read``, ``verified``),
    over the sweep ``label``, of ``total`` runs when known. ``writes``: what
    the command writes as it goes, for the stop line (``None``: nothing
    until it ends); :attr:`written` counts it."""

    def __init__(
        self, verb: str, label: str, total: int | None = None, writes: str | None = None
    ) -> None:
        self.verb = verb
        self.label = label
        self.total = total
        self.writes = writes
        self.done = 0
        self.written = 0
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Progress:
        _current.append(self)
        if sys.stderr.isatty():
            self._bar = _live_bar()
            if self._bar is not None:
                self._bar.start()
                self._task = self._bar.add_task(self.label, total=self.total)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
        if _current and _current[-1] is self:
            _current.pop()
        if kind is not None and issubclass(kind, KeyboardInterrupt):
            _interrupted[:] = [self]
        elif kind is None:
            log.info("%s: %s %d runs", self.label, self.verb, self.done)

    def advance(self, runs: int = 1) -> None:
        """``runs`` more runs gone through."""
        self.done += runs
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)
        if self.done % LOG_EVERY < runs:
            log.debug("%s: %s %d runs so far", self.label, self.verb, self.done)

    def each(self, items: Iterable[_T]) -> Iterator[_T]:
        """``items`` as they are, each counted once the command takes the next."""
        for item in items:
            yield item
            self.advance()

    def stopped(self) -> str:
        """How far the command got, for the line it ends with when stopped."""
        of = f" of {self.total}" if self.total is not None else ""
        said = f"{self.verb} {self.done}{of} runs"
        if self.writes is None:
            return said + "; nothing was written"
        return said + f"; {self.written} {self.writes} (each whole)"


def _live_bar() -> Any:
    """A rich progress display on standard error, or ``None`` without rich."""
    try:
        from rich.console import Console
        from rich.progress import MofNCompleteColumn, Progress, SpinnerColumn, TimeElapsedColumn
    except ImportError:
        return None
    return Progress(
        SpinnerColumn(),
        "[progress.description]{task.description}",
        MofNCompleteColumn(),
        "runs",
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
        # The command's output stays on stdout, whatever the terminal shows.
        redirect_stdout=False,
        redirect_stderr=False,
    )
