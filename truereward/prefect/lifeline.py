"""A flow run's lifeline to its Prefect API: a flow run that has lost its
API ends its process within a bounded time, saying so.

:class:`Lifeline` asks Prefect's health check every
:data:`PROBE_INTERVAL_SECONDS` from a thread of its own; once none has been
answered for the grace period, it stops the flow run's
:class:`~truereward.grading.halt.Halt`, lets the publishes in progress
finish, says what was published, and ends the process with
:data:`EXIT_API_LOST` within :func:`exit_bound` of the API's last answer;
on SIGINT or SIGTERM (:meth:`Lifeline.catch_signals`) the same, exit 130 or
143. docs/prefect.md ("Stopping and watching" and the section after it).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from types import FrameType
from typing import Any
from urllib.parse import urlsplit, urlunsplit
from uuid import UUID

from ..grading.halt import Halt

__all__ = [
    "ACCOUNT_SECONDS",
    "DEFAULT_GRACE_SECONDS",
    "DRAIN_SECONDS",
    "EXIT_API_LOST",
    "GRACE_ENV",
    "PROBE_INTERVAL_SECONDS",
    "PROBE_TIMEOUT_SECONDS",
    "SIGNAL_PATIENCE_SECONDS",
    "STOP_SIGNALS",
    "Lifeline",
    "end_process",
    "exit_bound",
    "grace_seconds",
    "halt_for",
    "stop_lifeline",
    "watch_flow_run",
]

#: The environment variable that sets the grace period, in seconds.
GRACE_ENV = "TRUEREWARD_API_GRACE_SECONDS"
#: Seconds without an answer from the API before it counts as lost.
DEFAULT_GRACE_SECONDS = 20.0
#: The bounds a grace period is held to (``0`` is off).
MIN_GRACE_SECONDS, MAX_GRACE_SECONDS = 5.0, 3600.0
#: Seconds between two health checks.
PROBE_INTERVAL_SECONDS = 2.0
#: Seconds a health check waits for its answer.
PROBE_TIMEOUT_SECONDS = 5.0
#: Seconds the publishes in progress are given to finish once the API is lost.
DRAIN_SECONDS = 15.0
#: Seconds the flow is given after that to end the process itself.
ACCOUNT_SECONDS = 5.0
#: The exit status of a process that lost its API (``EX_TEMPFAIL``).
EXIT_API_LOST = 75
#: Seconds a flow stopped by a signal is given to end the process itself.
SIGNAL_PATIENCE_SECONDS = 3.0
#: The signals :meth:`Lifeline.catch_signals` stops a flow run on.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

_lock = threading.Lock()
_lifelines: dict[UUID, Lifeline] = {}


def grace_seconds(environ: Mapping[str, str] | None = None) -> float | None:
    """The grace period ``TRUEREWARD_API_GRACE_SECONDS`` sets (``None``: the
    lifeline is off, ``0``); :data:`DEFAULT_GRACE_SECONDS` when unset.
    ``ValueError`` naming the variable for anything else than a number of
    seconds from :data:`MIN_GRACE_SECONDS` to :data:`MAX_GRACE_SECONDS`."""
    raw = (os.environ if environ is None else environ).get(GRACE_ENV, "").strip()
    if not raw:
        return DEFAULT_GRACE_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if value == 0:
        return None
    if not MIN_GRACE_SECONDS <= value <= MAX_GRACE_SECONDS:  # NaN fails this too
        raise ValueError(
            f"{GRACE_ENV}={raw!r}: give the seconds without an answer from the Prefect API "
            f"before the flow run stops, from {MIN_GRACE_SECONDS:g} to {MAX_GRACE_SECONDS:g} "
            "(0: never)"
        )
    return value


def exit_bound(grace: float) -> float:
    """Seconds from the API's last answer to the end of the process, at most."""
    return grace + PROBE_INTERVAL_SECONDS + PROBE_TIMEOUT_SECONDS + DRAIN_SECONDS + ACCOUNT_SECONDS


def watch_flow_run(
    patience: float = DRAIN_SECONDS + ACCOUNT_SECONDS, *, signals: bool = False
) -> Lifeline | None:
    """A started lifeline for the current flow run, or ``None`` when there
    is no flow run, or when it is turned off (``TRUEREWARD_API_GRACE_SECONDS=0``)
    and ``signals`` is not asked for (with ``signals``, a lifeline that does
    not watch the API but stops the flow run on SIGINT and SIGTERM:
    :meth:`Lifeline.catch_signals`); ``ValueError`` (:func:`grace_seconds`)
    for a bad grace period. The flow's state hooks stop it (:func:`stop_lifeline`)."""
    from prefect.context import FlowRunContext

    grace = grace_seconds()
    context = FlowRunContext.get()
    if context is None or context.flow_run is None or (grace is None and not signals):
        return None
    lifeline = Lifeline(context.flow_run.id, grace, patience=patience).start()
    if signals:
        lifeline.catch_signals()
    return lifeline


def halt_for(flow_run_id: UUID | None) -> Halt | None:
    """The halt of the flow run ``flow_run_id`` watched in this process, if any."""
    if flow_run_id is None:
        return None
    with _lock:
        found = _lifelines.get(flow_run_id)
    return found.halt if found is not None else None


def stop_lifeline(flow_run_id: UUID) -> None:
    """Stop watching for the flow run ``flow_run_id`` (its final state is
    recorded): the process is never ended for it from now on."""
    with _lock:
        found = _lifelines.pop(flow_run_id, None)
    if found is not None:
        found.stop()


def _shown(url: str) -> str:
    """``url`` without any user or password in it."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    return urlunsplit(parts._replace(netloc=netloc))


class Lifeline:
    """Watches the Prefect API for the flow run ``flow_run_id`` (module
    docstring; ``grace`` ``None``: the API is not watched). ``farewell(why)``
    is what the process says if the lifeline has to end it itself; the flow
    keeps it up to date as it goes. ``patience``: the seconds the flow is
    given, once its halt is stopped, to end the process itself (a flow with
    nothing to finish gives none). :attr:`signal` is the signal that stopped
    it, if one did; :attr:`exit_status` the status the process ends with."""

    def __init__(
        self,
        flow_run_id: UUID,
        grace: float | None,
        halt: Halt | None = None,
        patience: float = DRAIN_SECONDS + ACCOUNT_SECONDS,
    ) -> None:
        self.flow_run_id = flow_run_id
        self.grace = grace
        self.halt = halt if halt is not None else Halt()
        self.patience = patience
        self.farewell: Callable[[str], str] = lambda why: why
        self.api_url = ""
        self._stopping = threading.Event()
        self._lost_event = threading.Event()
        self._ending = threading.Lock()
        self._thread: threading.Thread | None = None
        self.signal: signal.Signals | None = None
        self._previous: dict[signal.Signals, Any] = {}

    @property
    def exit_status(self) -> int:
        """``128 +`` the signal's number when a signal stopped the flow run,
        else :data:`EXIT_API_LOST`."""
        return 128 + int(self.signal) if self.signal is not None else EXIT_API_LOST

    def start(self) -> Lifeline:
        """Register the lifeline for its flow run and start watching."""
        from prefect.settings import PREFECT_API_URL

        configured = PREFECT_API_URL.value()
        self.api_url = _shown(str(configured)) if configured else ""
        with _lock:
            _lifelines[self.flow_run_id] = self
        if self.grace is None:
            return self  # signals only (catch_signals)
        # The thread sees this thread's settings (a test's temporary API URL too).
        context = contextvars.copy_context()
        self._thread = threading.Thread(
            target=context.run, args=(self._watch,), name="truereward-lifeline", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching (the process is never ended by the lifeline then),
        and give the signals back to the handlers they had."""
        self._stopping.set()
        for number, previous in list(self._previous.items()):
            with contextlib.suppress(ValueError):  # not the main thread: _signalled defers
                signal.signal(number, previous)
                del self._previous[number]

    def catch_signals(self) -> bool:
        """Stop the flow run on SIGINT and SIGTERM (module docstring) until
        :meth:`stop`. Returns ``False`` outside the main thread, where no
        handler can be set."""
        try:
            for number in STOP_SIGNALS:
                self._previous[number] = signal.signal(number, self._signalled)
        except ValueError:
            return False
        return True

    def _signalled(self, number: int, frame: FrameType | None) -> None:
        """The handler: the first signal stops the halt and leaves the flow
        its patience to end the process; a second ends it now."""
        received = signal.Signals(number)
        if self._stopping.is_set():
            # The flow run has ended (its handlers could not be given back
            # from the thread that ended it): the handler it replaced.
            previous = self._previous.get(received)
            if callable(previous):
                previous(number, frame)
                return
            raise KeyboardInterrupt(f"stopped by {received.name}")
        if received == signal.SIGTERM and _cancelling():
            # Prefect's runner cancels the flow run: its own handler does
            # that, once the publishes in progress have finished.
            self.halt.stop("the flow run was cancelled")
            self.halt.wait_idle(DRAIN_SECONDS)
            previous = self._previous.get(received)
            if callable(previous):
                previous(number, frame)
            return
        first = self.signal is None
        if first:
            self.signal = received
        why = f"stopped by {received.name}"
        if not first or not self.halt.stop(why):
            # Stopped already (a second Ctrl-C, or the API was lost): end now.
            threading.Thread(target=self._farewell, args=(why,), daemon=True).start()
            return
        threading.Thread(target=self._give_up_after, args=(why,), daemon=True).start()

    def _give_up_after(self, why: str) -> None:
        if not self._stopping.wait(SIGNAL_PATIENCE_SECONDS):
            self._farewell(why)

    def _farewell(self, why: str) -> None:
        try:
            text = self.farewell(why)
        except Exception as failure:  # noqa: BLE001 - the process ends all the same
            text = f"{why} (what was published could not be told: {failure!r})"
        self.end(text)

    def _watch(self) -> None:
        try:
            self._probe()
        except Exception as error:  # noqa: BLE001 - the flow goes on, unwatched, and says so
            logging.getLogger(__name__).warning(
                "the Prefect API is not watched for this flow run: %s: %s",
                type(error).__name__,
                error,
            )

    def _probe(self) -> None:
        from prefect.client.orchestration import get_client
        from prefect.settings import PREFECT_CLIENT_MAX_RETRIES, temporary_settings

        # A client of its own (settings of its own: not the flow run's
        # client, which waits a minute and retries five times) that neither
        # retries nor waits long: one unanswered probe is one fact, and the
        # grace period the patience.
        quick = {"timeout": PROBE_TIMEOUT_SECONDS}
        grace = self.grace if self.grace is not None else math.inf
        with (
            temporary_settings(updates={PREFECT_CLIENT_MAX_RETRIES: 0}),
            get_client(httpx_settings=quick, sync_client=True) as client,
        ):
            answered = time.monotonic()
            while not self._stopping.wait(PROBE_INTERVAL_SECONDS):
                error = client.api_healthcheck()
                now = time.monotonic()
                if error is None:
                    answered = now
                elif now - answered >= grace and not self._stopping.is_set():
                    self._lost(now - answered, error)
                    return

    def _lost(self, silent: float, error: BaseException) -> None:
        """The API is lost: stop grading, give the flow its time to say what
        it did and end the process, then end it here if it has not."""
        cause = " ".join(f"{type(error).__name__}: {error}".split())[:300]
        api = f"at {self.api_url}" if self.api_url else "(ephemeral)"
        why = (
            f"the Prefect API {api} was lost: no answer for {silent:.0f} s "
            f"(grace {self.grace:g} s; last error {cause})"
        )
        self.halt.stop(why)
        self._lost_event.set()
        if self._stopping.wait(self.patience):
            return  # the flow run ended after all (its final state was recorded)
        self._farewell(why)

    def confirm_lost(self) -> bool:
        """Wait until the lifeline has decided whether the API is lost (a
        call to the API just failed): ``True`` once it is, ``False`` when
        the API answered a health check within its grace period after all."""
        if self.grace is None:
            return False
        return self._lost_event.wait(self.grace + PROBE_INTERVAL_SECONDS + PROBE_TIMEOUT_SECONDS)

    def end(self, text: str) -> None:
        """Say ``text`` on stderr and end the process with
        :attr:`exit_status`, now (:func:`end_process`). The first caller
        ends it; another waits for the end."""
        if not self._ending.acquire(blocking=False):
            threading.Event().wait()  # the other caller is ending the process
        end_process(text, self.exit_status)


def _cancelling() -> bool:
    """Whether Prefect's runner has told this process it cancels the flow
    run (its control channel), so the SIGTERM that follows is Prefect's."""
    try:
        from prefect._internal import control_listener

        return control_listener.get_intent() is not None
    except (ImportError, AttributeError):
        return False


def end_process(text: str, status: int) -> None:
    """Say ``text`` on stderr and end the process with ``status``, now: no
    Prefect exit handler runs (each would wait on an API that is gone, or
    that the same Ctrl-C stopped). The ephemeral API server this process
    started, if any, is told to stop first: an exit that skips Prefect's
    handlers would leave it running."""
    try:
        sys.stdout.flush()
        _stop_ephemeral_servers()
    finally:
        sys.stderr.write(text.rstrip("\n") + "\n")
        sys.stderr.flush()
        os._exit(status)


def _stop_ephemeral_servers() -> None:
    """SIGKILL to the ephemeral API servers started by this process (not
    waited for). Not SIGTERM: a server shutting down cancels its services,
    and Prefect logs their cancelled writes as errors with tracebacks after
    the process's last line; its SQLite database survives a kill."""
    server = sys.modules.get("prefect.server.api.server")
    instances = getattr(getattr(server, "SubprocessASGIServer", None), "_instances", {})
    for instance in list(instances.values()):
        process = getattr(instance, "server_process", None)
        if process is not None and process.poll() is None:
            with contextlib.suppress(OSError):
                process.kill()
