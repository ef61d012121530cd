"""The pytest plugin: one test per case, folded once, never over a subset.

A verifier declares its case set with :func:`cases` and grades one case per
test with the ``grade`` fixture; run with ``pytest -p truereward.plugin``
(one process or xdist), the controlling process folds every row at the end
of the session and publishes the grade to the logs directory, or a refusal
naming what went wrong (a deselected or missing case, a session stopped
early, a test without a row). docs/plugin.md is the user's guide.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import os
import re
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from .grade.document import REWARD_KEYS
from .grade.ledger import Ledger, grade_one
from .record.cases import CaseResult
from .record.taskspec import CaseSpec
from .util import urls

__all__ = ["cases"]

DEFAULT_LOGS = "/logs/verifier"
LOGS_ENV = "GRADE_LOGS"

#: Names things travel under in a test report's user_properties.
CASE_KEY = "truereward_case"
ROW_KEY = "truereward_row"
PROBLEM_KEY = "truereward_problem"
#: Which repetition of its test a pytest-repeat item is.
REPEAT_KEY = "truereward_repeat"
#: What workers hand the controller at the end (config.workeroutput).
WORKER_KEY = "truereward"
#: pytest-repeat's parameter: the repetition an item is (0-based).
_REPEAT_PARAM = "__pytest_repeat_step_number"

#: How to grade several cases in one test, and what to write instead.
_ONE_CASE_A_TEST = (
    "one test grades one case: parametrize the test over the cases "
    "(@pytest.mark.parametrize('case', CASES, ids=str)), or grade each case in a "
    "subtest of its own (with subtests.test(case=case.id): grade(case, assess))"
)

#: Modes in which pytest reports on tests without running them.
_INFORMATIONAL = (
    "collectonly",
    "showfixtures",
    "show_fixtures_per_test",
    "markers",
    "setuponly",
    "setupplan",
)


_declared: list[dict[str, Any]] = []
#: Subtests that ended in this process, per test (node id): grade() takes another
#: case in one test only after the subtest of the previous one ended.
_subtests_ended: dict[str, int] = {}


def _resolve(source: str | os.PathLike[str], caller: str | None) -> Path:
    path = Path(source)
    if not path.is_absolute() and caller is not None:
        beside = Path(caller).resolve().parent / path
        if beside.exists():
            return beside
    return path


def cases(source: Any) -> list[CaseSpec]:
    """Declare the case set to the plugin and return its cases.

    ``source`` is a task spec file (JSON or TOML: ``{"cases": [...]}``, a
    JSON list of ``{id, kind}``, or a SWE-bench instance with
    ``FAIL_TO_PASS``/``PASS_TO_PASS``), a :class:`~truereward.TaskSpec`, or
    such a list or mapping. A relative path is looked up beside the calling
    module first, then from the working directory. An invalid spec raises
    :class:`~truereward.record.taskspec.TaskSpecError` naming the file and field
    (the test module then fails to import, and the session is refused).
    """
    from .record.taskspec import TaskSpec

    if isinstance(source, str | os.PathLike):
        frame = inspect.stack()[1]
        spec = TaskSpec.load(_resolve(source, frame.filename))
    else:
        spec = TaskSpec.of(source)
    declared = list(spec.cases)
    _declared.extend({"id": case.id, "kind": case.kind} for case in declared)
    return declared


def _is_subtest(report: pytest.TestReport) -> bool:
    """Whether a report is a subtest's (pytest 9's ``subtests`` fixture, or the
    pytest-subtests plugin): the end of one ``with subtests.test(...)`` block."""
    return report.when == "call" and getattr(report, "context", None) is not None


def _subtest_name(report: pytest.TestReport) -> str:
    """A subtest as pytest shows it, ``[msg] (key=value, ...)``, the same in one
    process and under xdist."""
    context = getattr(report, "context", None)
    message = getattr(context, "msg", None)
    kwargs = getattr(context, "kwargs", None) or {}
    parts = [f"[{message}]"] if message is not None else []
    if kwargs:
        shown = ", ".join(f"{key}={_unquoted(value)}" for key, value in kwargs.items())
        parts.append(f"({shown})")
    return "subtest " + (" ".join(parts) or "(<subtest>)")


def _unquoted(value: object) -> str:
    """A subtest's keyword value: pytest keeps ``repr(value)``, and a report that
    crossed from an xdist worker holds the repr of that repr; shown as the
    value itself when it was a string."""
    text = str(value)
    for _ in range(2):
        try:
            inner = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            break
        if not isinstance(inner, str) or repr(inner) != text:
            break
        text = inner
    return text


def _repetition(item: pytest.Item) -> dict[str, Any] | None:
    """Which repetition of its test an item is under pytest-repeat (``--count N``,
    ``@pytest.mark.repeat(N)``): ``{step, count, group}``, 1-based, ``group``
    naming the test without its repetition's id. None for any other item, and
    when the repetition's id is not where pytest-repeat puts it (its items are
    then graded as separate tests)."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or _REPEAT_PARAM not in callspec.params:
        return None
    step = callspec.params[_REPEAT_PARAM]
    marker = item.get_closest_marker("repeat")
    count = int(marker.args[0]) if marker and marker.args else item.config.getoption("count", 1)
    if not isinstance(step, int) or not isinstance(count, int) or count < 2:
        return None
    token, ident = f"{step + 1}-{count}", callspec.id
    if ident == token:
        group = item.nodeid.removesuffix(f"[{ident}]")
    elif ident.endswith(f"-{token}"):
        group = item.nodeid.replace(f"[{ident}]", f"[{ident[: -len(token) - 1]}]")
    else:
        return None
    return {"step": step + 1, "count": count, "group": group}


def _case_of(item: pytest.Item) -> CaseSpec | None:
    """The declared case a test is parametrised with, if any."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    found = [value for value in callspec.params.values() if isinstance(value, CaseSpec)]
    return found[0] if len(found) == 1 else None


@pytest.fixture
def grade(request: pytest.FixtureRequest) -> Callable[[Any, Callable[[Any], Any]], None]:
    """``grade(case, assess)``: grade one case through ``assess(case)``
    (the verifier's own function, returning a
    :class:`~truereward.record.cases.CaseResult`, or raising
    :class:`~truereward.codes.Ungradable`), record its row, and fail the test
    unless the verdict is ``pass``. One call per test, or per subtest: a test
    may grade several cases when each is graded in a subtest of its own
    (``with subtests.test(case=case.id): grade(case, assess)``), because a
    failing subtest does not stop the test. A second call before a subtest
    ended, or the same case graded twice in one test, is refused."""
    #: (case id, subtests ended in this test when it was graded), per call.
    calls: list[tuple[str, int]] = []

    def run(case: Any, assess: Callable[[Any], Any]) -> None:
        node = request.node
        ended = _subtests_ended.get(node.nodeid, 0)
        again = next((earlier for earlier, _ in calls if earlier == case.id), None)
        if again is not None or (calls and calls[-1][1] == ended):
            why = (
                f"{node.nodeid} graded case {case.id} twice"
                if again is not None
                else f"{node.nodeid} called grade() a second time (for {case.id}) "
                f"in the same {'subtest' if ended else 'test'} as {calls[-1][0]}"
            )
            node.user_properties.append(
                (
                    PROBLEM_KEY,
                    {
                        "code": "CASE_INVALID",
                        "case": calls[-1][0],
                        "why": f"{why}; {_ONE_CASE_A_TEST}",
                    },
                )
            )
            pytest.fail(f"{why}; {_ONE_CASE_A_TEST}", pytrace=False)
        calls.append((case.id, ended))
        started = time.perf_counter()
        try:
            row, raised = grade_one(case, assess)
        except pytest.fail.Exception as error:
            if not _timed_out(str(error)):
                raise
            # pytest-timeout's signal method stopped the case: it failed.
            row = _timeout_row(case.id, case.kind, str(error), time.perf_counter() - started)
            node.user_properties.append((ROW_KEY, row.to_row()))
            raise
        node.user_properties.append((ROW_KEY, row.to_row()))
        if raised is not None:
            raise raised
        if row.verdict != "pass":
            pytest.fail(f"{case.id}: {row.verdict}: {row.why or row.code}", pytrace=False)

    return run


#: What pytest-timeout's signal method fails a test with ("Timeout (>1.0s)
#: from pytest-timeout.").
_TIMEOUT = re.compile(r"Timeout \(>[^)]*\) from pytest-timeout")


def _timed_out(text: str) -> bool:
    """Whether a failure is pytest-timeout stopping the test."""
    return _TIMEOUT.search(text) is not None


def _timeout_row(case: str, kind: str, message: str, duration_s: float = 0.0) -> CaseResult:
    """The row of a case pytest-timeout stopped: a failure (a program that
    hangs fails its test), the timeout in its why."""
    found = _TIMEOUT.search(message)
    said = found.group(0) if found else message
    return CaseResult.model_validate(
        {
            "id": case,
            "kind": kind,
            "verdict": "fail",
            "why": f"timed out: {said} (the test did not finish in its time limit)",
            "duration_s": max(0.0, duration_s),
        }
    )


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("truereward", "grading with truereward")
    group.addoption(
        "--grade-logs",
        dest="grade_logs",
        metavar="DIR",
        help=f"where to publish the grade (default: ${LOGS_ENV}, the ini key "
        f"grade_logs, or {DEFAULT_LOGS})",
    )
    group.addoption(
        "--grade-exit-ungradable",
        dest="grade_exit_ungradable",
        type=int,
        metavar="N",
        help="exit with status N when the session is ungradable",
    )
    group.addoption(
        "--grade-reward-keys",
        dest="grade_reward_keys",
        metavar="KEYS",
        help="figures reward.json carries beside reward, comma-separated "
        f"({', '.join(REWARD_KEYS)}); any switches Harbor's pass@k off",
    )
    parser.addini("grade_logs", f"where to publish the grade (default {DEFAULT_LOGS})", default="")
    parser.addini(
        "grade_reward_keys", "figures reward.json carries beside reward (see --grade-reward-keys)"
    )


def pytest_configure(config: pytest.Config) -> None:
    # One process may run several sessions (pytest.main, pytester): each starts empty.
    _declared.clear()
    _subtests_ended.clear()
    _reward_keys(config)  # a bad value stops the session before any test runs
    if hasattr(config, "workerinput"):
        config.pluginmanager.register(Worker(config), "truereward-worker")
    else:
        config.pluginmanager.register(Controller(config), "truereward-controller")


def _interrupt_on_sigterm(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"stopped by signal {signal.Signals(signum).name}")


def _informational(config: pytest.Config) -> bool:
    return any(config.getoption(name, default=False) for name in _INFORMATIONAL)


class Worker:
    """An xdist worker: tags its reports and hands its declarations and
    deselections to the controller. It never writes a file."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.deselected: list[str] = []

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        _tag(item)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if _is_subtest(report):
            _subtests_ended[report.nodeid] = _subtests_ended.get(report.nodeid, 0) + 1

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected.extend(item.nodeid for item in items)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        output = getattr(self.config, "workeroutput", None)
        if output is not None:
            output[WORKER_KEY] = {"declared": list(_declared), "deselected": self.deselected}


def _tag(item: pytest.Item) -> None:
    case = _case_of(item)
    if case is not None:
        item.user_properties.append((CASE_KEY, {"id": case.id, "kind": case.kind}))
    repetition = _repetition(item)
    if repetition is not None:
        item.user_properties.append((REPEAT_KEY, repetition))


@dataclass
class _Test:
    """What the controller learned about one test: its case, the rows its
    executions recorded (oldest first: under pytest-rerunfailures or flaky a
    test runs more than once, and each execution records one), how it ended."""

    case: dict[str, str] | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    outcome: str = ""
    when: str = ""
    why: str = ""
    #: pytest-repeat's repetition (step, count, group), when it is one.
    repeat: dict[str, Any] | None = None
    #: Whether a subtest of this test recorded a row (it grades cases in subtests).
    graded_in_subtests: bool = False
    #: Subtests that ended skipped or failed without recording a row.
    rowless_subtests: list[str] = field(default_factory=list)
    #: How many of the problems its reports carry were taken in.
    problems: int = 0


class Controller:
    """The one process that sees every report: it folds and publishes."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.ledger = Ledger()
        self.tests: dict[str, _Test] = {}
        self.deselected: list[str] = []
        self.collection_errors: list[str] = []
        self.worker_declarations: list[dict[str, Any]] = []
        self.outcome_line = ""
        self.started = datetime.now(UTC)
        self.started_ns = time.time_ns()
        self.previous_sigterm: Any = None
        #: What preparing the logs directory did, or why it could not.
        self.began: list[str] = []
        self.began_error = ""

    # --- a verifier killed on a timeout ----------------------------------------------------

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Turn SIGTERM (how a harness stops a verifier that ran out of time)
        into the interrupt pytest already handles like Ctrl-C, so the session
        still publishes a refusal instead of leaving an earlier grade standing.
        Only when nobody else handles SIGTERM, and only in the main thread."""
        self._begin()
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            self.previous_sigterm = signal.signal(signal.SIGTERM, _interrupt_on_sigterm)

    def _begin(self) -> None:
        """Prepare a local logs directory before any test runs: no reward
        file stands, and the standing grade is set aside (see
        :mod:`truereward.publishing.session`). URLs are left as they are;
        informational modes touch nothing."""
        if _informational(self.config):
            return
        target = urls.local_or_none(self._logs())
        if target is None:
            return
        from .publishing import PublishError
        from .publishing.session import begin_session

        try:
            self.began = begin_session(target)
        except PublishError as error:
            self.began_error = str(error)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.previous_sigterm is not None:
            signal.signal(signal.SIGTERM, self.previous_sigterm)
            self.previous_sigterm = None

    # --- gathering -------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        _tag(item)  # in one process the controller runs the tests itself

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected.extend(item.nodeid for item in items)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_errors.append(report.nodeid or "(the session)")

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", None) or {}
        handed = output.get(WORKER_KEY) or {}
        self.worker_declarations.extend(handed.get("declared", []))
        self.deselected.extend(handed.get("deselected", []))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        test = self.tests.setdefault(report.nodeid, _Test())
        subtest = _is_subtest(report)
        if subtest:  # in one process the controller runs the tests itself
            _subtests_ended[report.nodeid] = _subtests_ended.get(report.nodeid, 0) + 1
        properties: list[tuple[str, Any]] = list(report.user_properties)
        for name, value in properties:
            if name == CASE_KEY and test.case is None:
                test.case = dict(value)
            if name == REPEAT_KEY and test.repeat is None:
                test.repeat = dict(value)
        if report.when == "call" or (
            report.when in ("setup", "teardown", "???") and not report.passed
        ):
            # Rows and problems travel on every report of a test; read the
            # call report's (a subtest's too), or the failing
            # setup/teardown/crash report's. A test's user_properties
            # accumulate over its subtests and executions: each report
            # carries the rows and problems so far.
            rows = [value for name, value in properties if name == ROW_KEY]
            problems = [value for name, value in properties if name == PROBLEM_KEY]
            new_rows = rows[len(test.rows) :]
            test.rows.extend(new_rows)
            for problem in problems[test.problems :]:
                self.ledger.refuse(problem["code"], problem["why"], problem.get("case"))
            test.problems = max(test.problems, len(problems))
            if subtest:
                if new_rows:
                    test.graded_in_subtests = True
                elif not report.passed:
                    why = (
                        _skip_reason(report) if report.skipped else _first_line(report.longreprtext)
                    )
                    test.rowless_subtests.append(
                        f"{_subtest_name(report)} ended without a result "
                        f"({report.outcome}{': ' + why if why else ''})"
                    )
        if subtest:  # how a subtest ended is not how its test ended
            return
        if str(report.outcome) == "rerun":  # pytest-rerunfailures: not how the test ended
            return
        if report.skipped and not test.outcome:
            test.outcome, test.when = "skipped", report.when
            test.why = _skip_reason(report)
        elif report.failed and test.outcome != "failed":
            test.outcome, test.when = "failed", report.when
            test.why = _first_line(report.longreprtext)
        elif report.passed and report.when == "call" and not test.outcome:
            test.outcome, test.when = "passed", "call"

    # --- judging ---------------------------------------------------------------------------

    def _judge_tests(self) -> None:
        #: case id -> (test, the row it graded: its executions merged), in test order.
        graded: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for nodeid, test in self.tests.items():
            case = test.case["id"] if test.case else None
            for row in _rows_by_case(test.rows):
                graded.setdefault(str(row.get("id")), []).append((nodeid, row))
            if test.graded_in_subtests:
                for what in test.rowless_subtests:
                    self.ledger.refuse("CASE_NOT_GRADED", f"{nodeid} {what}")
            if test.case is None:
                if not test.rows:
                    self.ledger.refuse(
                        "CASE_INVALID",
                        f"{nodeid} is a test of the session that is not a case of the case set",
                    )
                continue
            if not test.rows and test.outcome == "failed" and _timed_out(test.why):
                # Stopped by pytest-timeout before grade() recorded a row.
                row = _timeout_row(test.case["id"], test.case["kind"], test.why).to_row()
                graded.setdefault(row["id"], []).append((nodeid, row))
                continue
            if test.outcome == "skipped":
                self.ledger.refuse(
                    "CASE_NOT_GRADED",
                    f"{nodeid} was skipped ({test.why}): the case ended without a result",
                    case,
                )
            elif not test.rows:
                self.ledger.refuse(
                    "CASE_NOT_GRADED",
                    f"{nodeid} ended without a result "
                    f"({test.outcome or 'no report'} in {test.when or 'setup'}"
                    f"{': ' + test.why if test.why else ''})",
                    case,
                )
        for case_id, entries in graded.items():
            self._take_case(case_id, entries)

    def _take_case(self, case_id: str, entries: list[tuple[str, dict[str, Any]]]) -> None:
        """Take in the rows that tests graded for one case: one test's row as it
        is; the repetitions of one test under pytest-repeat folded into one row
        (:func:`~truereward.grade.ledger.fold_repetitions`); rows of several other
        tests all kept (the fold refuses the shared id) with a refusal saying
        what to write instead."""
        if len(entries) == 1:
            self.ledger.add_row(*entries[0])
            return
        repeats = [self.tests[nodeid].repeat for nodeid, _ in entries]
        groups = {repeat["group"] if repeat else None for repeat in repeats}
        steps = [repeat["step"] if repeat else 0 for repeat in repeats]
        if None not in groups and len(groups) == 1 and len(set(steps)) == len(steps):
            ordered = [row for _, (_, row) in sorted(zip(steps, entries, strict=True))]
            self.ledger.add_repetitions(str(next(iter(groups))), ordered)
            return
        for nodeid, row in entries:
            self.ledger.add_row(nodeid, row)
        tests = ", ".join(nodeid for nodeid, _ in entries[:3])
        more = f" and {len(entries) - 3} more" if len(entries) > 3 else ""
        self.ledger.refuse(
            "CASE_INVALID",
            f"case {case_id} was graded by {len(entries)} tests ({tests}{more}): "
            f"{_ONE_CASE_A_TEST}; to run a case several times, repeat its test with "
            "pytest-repeat (--count N), whose repetitions of a case fold into one row",
            case_id,
        )

    def _judge_session(self, session: pytest.Session, exitstatus: int) -> None:
        if self.deselected:
            chosen = _selection_flags(self.config)
            deselected = sorted(set(self.deselected))
            self.ledger.refuse(
                "CASES_MISSING",
                f"the session deselected {len(deselected)} "
                f"test(s){' (' + chosen + ')' if chosen else ''}, e.g. "
                f"{deselected[0]}: a reward is over the whole case set",
            )
        stopped = session.shouldfail or session.shouldstop
        maxfail = self.config.getoption("maxfail", default=0)
        if not stopped and maxfail and exitstatus == pytest.ExitCode.INTERRUPTED:
            stopped = f"-x/--maxfail {maxfail}"  # how xdist's controller stops
        if stopped:
            self.ledger.refuse(
                "CASES_MISSING",
                f"the session stopped early ({stopped}), so cases of the set may never have run",
            )
        if (
            exitstatus in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR)
            and not stopped
        ):
            self.ledger.refuse(
                "CASE_NOT_GRADED",
                f"the session ended with "
                f"{pytest.ExitCode(exitstatus).name}, before every case was graded",
            )
        for nodeid in self.collection_errors:
            self.ledger.refuse(
                "CASE_NOT_GRADED",
                f"collecting {nodeid} failed, so its cases may never have been declared or run",
            )
        declared = {case["id"] for case in self.ledger.declared}
        missing = declared - {row.id for row in self.ledger.rows}
        if missing:
            # Some selections (--lf drops passed tests while collecting) never
            # show up as deselected: name what the session was asked to do.
            asked = _selection_flags(self.config)
            if any("::" in arg for arg in self.config.args):
                asked = ", ".join(
                    filter(
                        None,
                        [
                            asked,
                            "node ids given on the command line "
                            f"({', '.join(self.config.args)[:300]})",
                        ],
                    )
                )
            if asked:
                self.ledger.refuse(
                    "CASES_MISSING",
                    f"{len(missing)} declared case(s) did not run "
                    f"in a session limited by {asked}, e.g. {sorted(missing)[0]}",
                )

    def _publication(self, target: str) -> dict[str, Any]:
        """How the files beside grade.json are laid out: our CTRF view as
        ``grade-ctrf.json`` when another plugin writes ``ctrf.json`` there
        (pytest-json-ctrf's ``--ctrf``, or a ``ctrf.json`` written during
        this session that is not ours), and the reward keys asked for."""
        chosen: dict[str, Any] = {"reward_keys": _reward_keys(self.config)}
        if self._ctrf_taken(target):
            chosen["ctrf"] = "grade-ctrf.json"
        return chosen

    def _ctrf_taken(self, target: str) -> bool:
        local = urls.local_or_none(target)
        if local is None:
            return False
        here = os.path.join(local, "ctrf.json")
        theirs = self.config.getoption("ctrf", default=None)  # pytest-json-ctrf's option
        if isinstance(theirs, str) and os.path.realpath(theirs) == os.path.realpath(here):
            return True
        try:
            info = os.lstat(here)
        except OSError:
            return False
        # Written during this session, and not by us (we write only at the end).
        return info.st_mtime_ns >= self.started_ns

    def _logs(self) -> str:
        return (
            self.config.getoption("grade_logs")
            or os.environ.get(LOGS_ENV)
            or self._ini_logs()
            or DEFAULT_LOGS
        )

    def _ini_logs(self) -> str:
        """The ini key, a relative path taken from the ini file's directory
        (as pytest reads its own path keys); a URL as written."""
        value = str(self.config.getini("grade_logs") or "")
        if not value or urls.is_url(value) or os.path.isabs(value) or self.config.inipath is None:
            return value
        return str(self.config.inipath.parent / value)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if _informational(self.config):
            return
        from .grade.document import publishable
        from .publishing import PublishConflict, PublishError, publish

        self.ledger.declare(_declared)
        self.ledger.declare(self.worker_declarations)
        self._judge_tests()
        self._judge_session(session, exitstatus)
        target = self._logs()
        document = publishable(  # a refusal in place of a grade too large to check
            self.ledger.document(
                run={"started": self.started, "finished": datetime.now(UTC)},
                publication=self._publication(target),
            )
        )
        try:
            if self.began_error:
                raise PublishError(self.began_error)
            # Locally, the grade that stood was set aside when the session
            # began: this one is created, and one that appeared meanwhile is
            # a conflict. At a URL, the grade standing now is replaced.
            local = urls.is_local(target)
            result = publish(document, target, replaces=None if local else _standing(target))
        except (PublishConflict, PublishError) as error:
            self.outcome_line = f"truereward: NOT PUBLISHED: {error}"
            session.exitstatus = 3 if isinstance(error, PublishConflict) else 4
            return
        if document.gradable:
            self.outcome_line = f"truereward: reward {document.reward!r} -> {result.target}"
        else:
            codes = ", ".join(f"{item.code} ({item.blame.value})" for item in document.refusals)
            self.outcome_line = f"truereward: ungradable: {codes[:600]} -> {result.target}"
            wanted = self.config.getoption("grade_exit_ungradable")
            if wanted is not None:
                session.exitstatus = wanted

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.outcome_line:
            terminalreporter.write_sep("-", "truereward")
            terminalreporter.write_line(self.outcome_line)


def _reward_keys(config: pytest.Config) -> list[str]:
    """The reward keys asked for (option, else ini key); a name that is not
    a figure is a usage error naming it."""
    given = config.getoption("grade_reward_keys") or str(config.getini("grade_reward_keys") or "")
    keys = [key.strip() for key in given.split(",") if key.strip()]
    unknown = [key for key in keys if key not in REWARD_KEYS]
    if unknown:
        raise pytest.UsageError(
            f"--grade-reward-keys: {', '.join(unknown)} is not a figure of a grade; "
            f"known: {', '.join(REWARD_KEYS)}"
        )
    return keys


def _rows_by_case(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per case a test graded (one case, or one per subtest), in the
    order first graded, each with its earlier executions as reruns."""
    by_case: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_case.setdefault(str(row.get("id")), []).append(row)
    return [_with_reruns(executions) for executions in by_case.values()]


def _with_reruns(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The row of a test's last execution, with the earlier executions'
    rows as its reruns (oldest first)."""
    if len(rows) == 1:
        return rows[0]
    last = dict(rows[-1])
    reruns = [*last.get("reruns", [])]
    for earlier in rows[:-1]:
        verdict = earlier.get("verdict")
        why = str(earlier.get("why") or "")
        if verdict not in ("pass", "fail"):  # an execution the grader could not grade
            why = f"{verdict} ({earlier.get('code')}): {why}"
        reruns.append({"verdict": "pass" if verdict == "pass" else "fail", "why": why[:500]})
    last["reruns"] = reruns
    return last


def _standing(target: str) -> str | None:
    """The sha256 of the grade standing at an object-store target, so the
    session replaces exactly the grade it found (None when there is none
    or it cannot be read: publishing will say what is wrong)."""
    from .publishing import PublishError, as_target, open_store

    try:
        data = open_store(as_target(target)).read("grade.json")
    except (OSError, PublishError):
        return None
    return None if data is None else hashlib.sha256(data).hexdigest()


def _selection_flags(config: pytest.Config) -> str:
    flags = []
    for flag, name in (
        ("-k", "keyword"),
        ("-m", "markexpr"),
        ("--deselect", "deselect"),
        ("--lf", "lf"),
        ("--sw", "stepwise"),
    ):
        value = config.getoption(name, default=None)
        if value:
            flags.append(flag if value is True else f"{flag} {_short(value)}")
    return ", ".join(flags)


def _short(value: Any) -> str:
    text = " ".join(value) if isinstance(value, list | tuple) else str(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    chosen = next((line for line in reversed(lines) if line.startswith("E ")), None)
    return (chosen or (lines[-1] if lines else ""))[:300]


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")[:300]
    return "skipped"
