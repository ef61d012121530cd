"""The ``rewardkit`` reader: a task whose ``tests/`` is a rewardkit layout,
graded by rewardkit itself (the rewardkit bridge).

Runs rewardkit in the task's interpreter through
:mod:`truereward.readers.rewardkit_probe`, into a fresh output directory per
attempt, in a process group killed whole after ``timeout``; each criterion
is a row, and rewardkit's layout is the task's scoring (:class:`Scored`),
checked against rewardkit's ``reward.json``. What rewardkit scores 0 without
measuring is refused. docs/rewardkit.md gives the options, the refusals and
where it may run (over a stored run, ``python`` and ``tests`` come only
from the caller).
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..codes import Ungradable
from ..codes.bridge import REWARDKIT_FAILED
from ..criteria.codes import (
    SERVICE_UNREACHABLE,
    TOOL_MISSING,
    TRAJECTORY_MALFORMED,
    TRAJECTORY_MISSING,
    WORKSPACE_MISSING,
)
from ..criteria.process import kill_group
from ..record.cases import CaseResult, Observation
from ..record.scoring import RESERVED_NAMES, Scoring
from ..record.taskspec import TaskSpec
from ..util import safefile, urls
from ..util.strictjson import StrictJSONError, loads
from .evidence import Evidence

__all__ = ["PROBE", "READER", "RewardkitReader", "RewardkitSettings"]

#: The probe the bridge runs in the task's interpreter.
PROBE = Path(__file__).with_name("rewardkit_probe.py")

#: Codes of the faults the probe notes, by the kind it names them.
FAULT_CODES = {
    "command-timeout": "GRADER_TIMEOUT",
    "http-timeout": "GRADER_TIMEOUT",
    "http-unreachable": SERVICE_UNREACHABLE,
    "trajectory-missing": TRAJECTORY_MISSING,
    "trajectory-malformed": TRAJECTORY_MALFORMED,
}
#: The probe's exit statuses (its module docstring).
_RAISED, _NOT_INSTALLED, _UNSUPPORTED, _LAYOUT = 1, 3, 4, 5

#: The most bytes read of each of rewardkit's files and of the probe's report.
MAX_OUTPUT_BYTES = 32 << 20
#: The most characters of rewardkit's standard error kept in a refusal.
_TAIL = 1500
#: Difference tolerated between rewardkit's rounded dimension and ours: the
#: two round the same value to 4 places, and rewardkit's left-to-right sums
#: can differ from exactly rounded ones in the last bit.
_TOLERANCE = 1.5e-4
_DEFAULT_TESTS = "/tests"
#: Our prefix for the dimensions rewardkit does not publish (its components
#: and inner groups), so that they never take a name ``reward.json`` uses.
INNER = "tests/"

Command = Annotated[str, Field(min_length=1, max_length=4096)]
M = TypeVar("M", bound=BaseModel)


class RewardkitSettings(BaseModel):
    """The reader's options (module docstring); other keys are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True, allow_inf_nan=False)

    python: Command | Annotated[list[Command], Field(min_length=1, max_length=64)] = "python3"
    tests: Command | None = None
    timeout: Annotated[float, Field(gt=0, le=86_400)] = 900.0
    primary: Annotated[str, Field(min_length=1, max_length=128)] | None = None
    publish: Literal["all"] | Annotated[list[str], Field(max_length=1000)] = Field(
        default_factory=list
    )
    env: Annotated[dict[str, str], Field(max_length=256)] = Field(default_factory=dict)


# --- the probe's report ----------------------------------------------------------------------

_REPORT = ConfigDict(extra="ignore", frozen=True, strict=True, allow_inf_nan=False)


class _Criterion(BaseModel):
    model_config = _REPORT

    weight: float
    optional: bool


class _Score(BaseModel):
    model_config = _REPORT

    name: str
    value: float
    error: str | None = None


class _Component(BaseModel):
    model_config = _REPORT

    type: Literal["component"]
    name: str
    aggregation: str
    threshold: float
    judge: str
    guard: str
    criteria: list[_Criterion]
    scores: list[_Score]


class _Input(BaseModel):
    model_config = _REPORT

    name: str
    weight: float
    node: _Component | _Group


class _Group(BaseModel):
    model_config = _REPORT

    type: Literal["group"]
    aggregation: str
    threshold: float
    spec: bool
    inputs: list[_Input]


class _Spec(BaseModel):
    model_config = _REPORT

    name: str
    aggregation: str
    threshold: float
    weights: dict[str, float]


class _Layout(BaseModel):
    model_config = _REPORT

    dimensions: dict[str, _Component | _Group]
    specs: list[_Spec]
    spec_inputs: Literal["dimensions", "components"]


class _Fault(BaseModel):
    model_config = _REPORT

    reward: str
    index: int
    kind: str
    detail: str


class _Report(BaseModel):
    model_config = _REPORT

    rewardkit: str
    python: str
    layout: _Layout
    faults: list[_Fault]
    warnings: list[str]


# --- running rewardkit -----------------------------------------------------------------------


def _validated(model: type[M], value: Any, code: str, what: str) -> M:
    """``value`` read as ``model``; ``code`` saying ``what`` it is not, and
    why (:func:`truereward.record.validation.describe`), when it is not one."""
    from ..record.validation import describe

    try:
        return model.model_validate(value)
    except ValidationError as error:
        raise Ungradable(code, f"{what}: {describe(error)}") from None


def _tail(path: Path) -> str:
    """The last characters of a file rewardkit wrote its messages to."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 4 * _TAIL))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-3:])[-_TAIL:]


@dataclass(frozen=True)
class _Run:
    """What one rewardkit process left: its exit status and messages."""

    status: int
    said: str


def _run(argv: list[str], workspace: str, logs: Path, timeout: float, env: dict[str, str]) -> _Run:
    """Run the probe, its output going to files in ``logs``; its exit status
    and standard error's tail. ``GRADER_TIMEOUT`` when it outlasts
    ``timeout`` (its whole process group is killed), ``TOOL_MISSING`` when
    the interpreter cannot be started."""
    errors = logs / "stderr"
    with (logs / "stdout").open("wb") as stdout, errors.open("wb") as stderr:
        try:
            process = subprocess.Popen(
                argv,
                cwd=workspace,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
            )
        except OSError as error:
            raise Ungradable(
                TOOL_MISSING,
                f"the interpreter {argv[0]!r} cannot be started: {error.strerror or error}",
            ) from None
        try:
            status = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            raise Ungradable(
                "GRADER_TIMEOUT",
                f"rewardkit did not finish within {timeout:g} s (the bridge's time bound): "
                "killed with its process group",
            ) from None
        except BaseException:
            _kill(process)
            raise
        finally:
            kill_group(process.pid)  # a program a criterion left running
    return _Run(status=status, said=_tail(errors))


def _kill(process: subprocess.Popen[bytes]) -> None:
    kill_group(process.pid)
    process.wait()


def _refuse_status(run: _Run) -> Ungradable:
    said = run.said or "(nothing on standard error)"
    if run.status < 0:
        return Ungradable(REWARDKIT_FAILED, f"rewardkit was killed by signal {-run.status}: {said}")
    if run.status == _NOT_INSTALLED:
        return Ungradable(TOOL_MISSING, f"rewardkit is not installed for the interpreter: {said}")
    if run.status in (_UNSUPPORTED, _LAYOUT):
        return Ungradable("CASE_INVALID", said)
    return Ungradable(
        REWARDKIT_FAILED, f"rewardkit exited {run.status} and wrote no reward: {said}"
    )


def _read_json(out: Path, name: str, what: str) -> Any:
    """A JSON file rewardkit (or the probe) left in ``out``;
    ``REWARDKIT_FAILED`` when it is absent or not strict JSON."""
    try:
        data = safefile.read_regular(str(out / name), limit=MAX_OUTPUT_BYTES)
    except FileNotFoundError:
        raise Ungradable(
            REWARDKIT_FAILED,
            f"rewardkit exited 0 and left no {name} ({what}): its output is incomplete",
        ) from None
    except OSError as error:
        raise Ungradable(
            REWARDKIT_FAILED, f"{name}: cannot be read: {error.strerror or error}"
        ) from None
    try:
        return loads(data)
    except StrictJSONError as error:
        raise Ungradable(REWARDKIT_FAILED, f"{name} is not JSON: {error}") from None


# --- from rewardkit's layout to rows and a scoring -------------------------------------------


def _case_id(component: str, name: str, seen: Counter[str]) -> str:
    base = "".join(char if char.isprintable() else " " for char in name).strip() or "criterion"
    key = f"{component}::{base}"[:480].strip()
    seen[key] += 1
    return key if seen[key] == 1 else f"{key} #{seen[key]}"


class _Translation:
    """rewardkit's layout, its scores and the probe's faults as rows and a
    scoring."""

    def __init__(self, report: _Report) -> None:
        self.report = report
        self.rows: list[CaseResult] = []
        self.dimensions: list[dict[str, Any]] = []
        self.faults: dict[tuple[str, int], list[_Fault]] = {}
        for fault in report.faults:
            self.faults.setdefault((fault.reward, fault.index), []).append(fault)

    def dimension(
        self,
        name: str,
        aggregation: str,
        threshold: float,
        members: list[dict[str, Any]],
        digits: int | None = None,
    ) -> str:
        """Add the dimension ``name``: rewardkit's ``aggregation`` as our
        scheme, with its ``threshold`` when it is the threshold one; its
        name."""
        scheme = aggregation.replace("_", "-")
        self.dimensions.append(
            {
                "name": name,
                "scheme": f"{scheme}/1",
                "threshold": threshold if scheme == "threshold" else None,
                "digits": digits,
                "members": members,
            }
        )
        return name

    def component(self, node: _Component, details: Any) -> str:
        """Rows for ``node``'s criteria; the name of its dimension."""
        where = f"component {node.name}"
        if node.guard == "penalize":
            raise Ungradable(
                "CASE_INVALID",
                f'{where}: a judge guard that penalises (guard = "penalize") sets a score to '
                '0 when it flags, which no scheme folds; the bridge grades guard = "flag" '
                'or "off"',
            )
        criteria = details.get("criteria") if isinstance(details, dict) else None
        if (
            not isinstance(criteria, list)
            or len(criteria) != len(node.scores)
            or len(node.scores) != len(node.criteria)
        ):
            raise Ungradable(
                REWARDKIT_FAILED,
                f"reward-details.json does not list the {len(node.criteria)} criteria of {where}",
            )
        seen: Counter[str] = Counter()
        members = []
        for index, (declared, score, written) in enumerate(
            zip(node.criteria, node.scores, criteria, strict=True)
        ):
            if not isinstance(written, dict) or written.get("name") != score.name:
                raise Ungradable(
                    REWARDKIT_FAILED,
                    f"reward-details.json's criterion {index} of {where} is not {score.name!r}",
                )
            if written.get("value") != round(score.value, 4) or written.get("error") != score.error:
                raise Ungradable(
                    REWARDKIT_FAILED,
                    f"reward-details.json's criterion {score.name!r} of {where} says "
                    f"{written.get('value')!r}, rewardkit computed {score.value!r}",
                )
            case_id = _case_id(node.name, score.name, seen)
            self.rows.append(self._row(node, index, case_id, score, written))
            members.append(
                {"case": case_id, "weight": declared.weight, "required": not declared.optional}
            )
        if not members:
            raise Ungradable("CASE_INVALID", f"{where} has no criteria")
        return self.dimension(INNER + node.name, node.aggregation, node.threshold, members)

    def _row(
        self, node: _Component, index: int, case_id: str, score: _Score, written: dict[str, Any]
    ) -> CaseResult:
        value = score.value
        said = [
            Observation(name=key, verdict="noted", why=str(written[key])[:1000])
            for key in ("description", "reasoning")
            if isinstance(written.get(key), str) and written[key]
        ]
        faults = self.faults.get((node.name, index), [])
        samples = written.get("samples")
        # A criterion rewardkit did not measure: its refusal code and why.
        if faults:
            code = FAULT_CODES.get(faults[0].kind, REWARDKIT_FAILED)
            why = f"rewardkit scored it {value!r}, and {faults[0].detail}"
        elif score.error is None and isinstance(samples, list) and None in samples:
            failed = sum(1 for sample in samples if sample is None)
            code = "PROVIDER_FAILED"
            why = (
                f"{failed} of the judge's {len(samples)} samples failed (rewardkit took "
                f"the median of the rest: {value!r})"
            )
        elif score.error is not None:
            code = "PROVIDER_FAILED"
            why = f"rewardkit recorded an error and scored it {value!r}: {score.error}"
        elif not math.isfinite(value):
            code, why, said = REWARDKIT_FAILED, f"rewardkit scored it {value!r}", []
        else:
            return CaseResult(
                id=case_id,
                kind="fail_to_pass",
                verdict="pass" if value >= 1.0 else "fail",
                why="" if value >= 1.0 else f"rewardkit scored it {value!r}",
                measures={"score": value},
                observations=said,
            )
        return CaseResult(
            id=case_id,
            kind="fail_to_pass",
            verdict="ungradable",
            code=code,
            why=why,
            observations=said,
        )

    def node(self, node: _Component | _Group, details: Any, path: str, *, top: bool) -> str:
        """Rows and dimensions under ``node`` (a group is named ``path``,
        under :data:`INNER` unless it is one of rewardkit's rewards: ``top``);
        the name of its dimension."""
        if isinstance(node, _Component):
            return self.component(node, details)
        if not node.spec and len(node.inputs) == 1:
            # rewardkit writes the one input's details in its place
            children = [(node.inputs[0], details)]
        else:
            listed = details.get("components") if isinstance(details, dict) else None
            if not isinstance(listed, list) or len(listed) != len(node.inputs):
                raise Ungradable(
                    REWARDKIT_FAILED, f"reward-details.json does not list the inputs of {path}"
                )
            children = []
            for item, written in zip(node.inputs, listed, strict=True):
                if not isinstance(written, dict) or written.get("name") != item.name:
                    raise Ungradable(
                        REWARDKIT_FAILED,
                        f"reward-details.json does not list input {item.name!r} of {path}",
                    )
                children.append((item, written.get("detail")))
        members = [
            {
                "dimension": self.node(item.node, inner, f"{path}/{item.name}", top=False),
                "weight": item.weight,
            }
            for item, inner in children
        ]
        name = path if top else INNER + path
        return self.dimension(name, node.aggregation, node.threshold, members, digits=4)


def _translate(
    report: _Report, written: dict[str, Any], details: Any, settings: RewardkitSettings
) -> tuple[list[CaseResult], Scoring]:
    """Rows and the scoring of rewardkit's run (module docstring)."""
    layout = report.layout
    if not layout.dimensions:
        raise Ungradable(
            "CASE_INVALID",
            "the rewardkit layout has no criteria (rewardkit writes {} then): no Python file "
            "calls a criterion and no judge TOML declares one",
        )
    if not isinstance(details, dict):
        raise Ungradable(REWARDKIT_FAILED, "reward-details.json is not a JSON object")
    done = _Translation(report)
    inner: dict[str, str] = {}  # rewardkit's input names to our dimension names
    for name, node in layout.dimensions.items():
        if name not in details:
            raise Ungradable(REWARDKIT_FAILED, f"reward-details.json has no {name!r}")
        done.node(node, details[name], name, top=True)
        if isinstance(node, _Group):
            for item in node.inputs:
                child = item.node
                inner[item.name] = INNER + (
                    child.name if isinstance(child, _Component) else f"{name}/{item.name}"
                )
    targets = (
        {name: name for name in layout.dimensions} if layout.spec_inputs == "dimensions" else inner
    )
    for spec in layout.specs:
        unknown = sorted(set(spec.weights) - set(targets))
        if unknown:
            raise Ungradable(
                REWARDKIT_FAILED, f"reward {spec.name!r} weighs {unknown}, which the layout lacks"
            )
        members = [
            {"dimension": targets[name], "weight": weight} for name, weight in spec.weights.items()
        ]
        done.dimension(spec.name, spec.aggregation, spec.threshold, members, digits=4)
    top = [*layout.dimensions, *(spec.name for spec in layout.specs)]
    primary = _primary(top, settings)
    # "all": every other reward rewardkit writes that can be a key of ours
    # (its "reward" cannot, when another is the primary).
    if settings.publish == "all":
        publish = [name for name in top if name != primary and name not in RESERVED_NAMES]
    else:
        publish = list(settings.publish)
        for name in publish:
            if name not in top:
                raise Ungradable(
                    "CASE_INVALID",
                    f"publish: {name!r} is not one of rewardkit's rewards ({', '.join(top)})",
                )
    clash = sorted(set(publish) & RESERVED_NAMES)
    if clash:
        raise Ungradable(
            "CASE_INVALID", f"publish: {clash} are keys reward.json has already (reward, figures)"
        )
    scoring = _validated(
        Scoring,
        {
            "dimensions": sorted(done.dimensions, key=lambda item: str(item["name"])),
            "primary": primary,
            "publish": sorted(set(publish) - {primary}),
        },
        "CASE_INVALID",
        "rewardkit's layout is not a scoring",
    )
    _agrees(done.rows, scoring, written, top)
    return done.rows, scoring


def _primary(top: Sequence[str], settings: RewardkitSettings) -> str:
    if settings.primary is not None:
        if settings.primary not in top:
            raise Ungradable(
                "CASE_INVALID",
                f"primary: {settings.primary!r} is not one of rewardkit's rewards "
                f"({', '.join(top)})",
            )
        return settings.primary
    if "reward" in top:
        return "reward"
    if len(top) == 1:
        return top[0]
    raise Ungradable(
        "CASE_INVALID",
        f"rewardkit writes {', '.join(top)} and no reward: name the one that is the reward "
        "(reader option primary)",
    )


def _agrees(
    rows: list[CaseResult], scoring: Scoring, written: dict[str, Any], top: Sequence[str]
) -> None:
    """rewardkit's ``reward.json`` says what the rows fold to, wherever they
    fold to a value (``REWARDKIT_FAILED`` otherwise)."""
    from ..folding.weighing import evaluate

    if sorted(written) != sorted(top):
        raise Ungradable(
            REWARDKIT_FAILED,
            f"reward.json has {sorted(written)}, and rewardkit's layout {sorted(top)}",
        )
    values, _ = evaluate(rows, scoring, declared=False)
    for name in top:
        theirs, ours = written[name], values.get(name)
        if ours is None:
            continue  # an ungradable criterion under it: no value to compare
        if not isinstance(theirs, int | float) or abs(float(theirs) - ours) > _TOLERANCE:
            raise Ungradable(
                REWARDKIT_FAILED,
                f"reward.json says {name} is {theirs!r}, and rewardkit's own scores fold to "
                f"{ours!r}",
            )


class RewardkitReader:
    """A rewardkit layout graded by rewardkit itself (module docstring)."""

    name = "rewardkit"
    default_evidence = "workspace"

    def read(self, evidence: Evidence, spec: TaskSpec, options: Mapping[str, Any]) -> Any:
        from . import Scored

        settings = _validated(RewardkitSettings, dict(options), "CASE_INVALID", "reader options")
        workspace = urls.local_or_none(evidence.url)
        if workspace is None:
            raise Ungradable(
                "CASE_INVALID",
                f"{evidence.describe()}: the rewardkit bridge grades a local workspace",
            )
        if evidence.root is not None:  # a stored run
            given: frozenset[str] = getattr(options, "from_caller", frozenset())
            absent = [key for key in ("python", "tests") if key not in given]
            if absent:
                raise Ungradable(
                    "CASE_INVALID",
                    f"over a stored run the caller names {' and '.join(absent)} (the request's "
                    "options), never the run's task spec: a run does not choose what the "
                    "grader executes",
                )
            root = urls.local_or_none(evidence.root)
            if (
                root is not None
                and os.path.isdir(workspace)
                and not safefile.inside(workspace, root)
            ):
                raise Ungradable(
                    "EVIDENCE_MALFORMED",
                    f"{evidence.describe()}: the workspace leads out of the run directory",
                )
        if not os.path.isdir(workspace):
            raise Ungradable(
                WORKSPACE_MISSING,
                f"{evidence.describe()}: no workspace directory there (rewardkit would score "
                "every criterion 0)",
            )
        tests = settings.tests or _DEFAULT_TESTS
        if not os.path.isdir(tests):
            raise Ungradable("CASE_INVALID", f"tests {tests!r}: no rewardkit layout there")
        python = [settings.python] if isinstance(settings.python, str) else list(settings.python)
        env = {**os.environ, **settings.env}
        # litellm fetches a model cost map over the network when imported,
        # unless told to use the one it ships.
        env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        # A directory of this attempt's own: rewardkit writes into its empty
        # "output", its messages go beside it; all of it goes with the attempt.
        attempt = Path(tempfile.mkdtemp(prefix="truereward-rewardkit-"))
        try:
            out = attempt / "output"
            out.mkdir()
            argv = [
                *python,
                "-I",
                str(PROBE),
                os.path.abspath(tests),
                os.path.abspath(workspace),
                str(out),
            ]
            run = _run(argv, os.path.abspath(workspace), attempt, settings.timeout, env)
            if run.status != 0:
                raise _refuse_status(run)
            written = _read_json(out, "reward.json", "rewardkit's rewards")
            # With no criteria rewardkit writes {} and no details (the
            # layout, from the probe's report, says why).
            details = (
                _read_json(out, "reward-details.json", "rewardkit's details")
                if written != {}
                else {}
            )
            raw = _read_json(out, "bridge.json", "the probe's report")
        finally:
            shutil.rmtree(attempt, ignore_errors=True)
        if not isinstance(written, dict) or not all(
            isinstance(value, int | float) and not isinstance(value, bool)
            for value in written.values()
        ):
            raise Ungradable(REWARDKIT_FAILED, "reward.json is not an object of numbers")
        report = _validated(_Report, raw, REWARDKIT_FAILED, "the probe's report is not one")
        rows, scoring = _translate(report, written, details, settings)
        return Scored(rows=rows, scoring=scoring)


READER = RewardkitReader()
