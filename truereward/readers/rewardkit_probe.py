"""Run rewardkit as its command line runs it, and say what it did.

The rewardkit bridge (:mod:`truereward.readers.rewardkit`) starts this file
with the task's interpreter (``python -I rewardkit_probe.py TESTS WORKSPACE
OUTPUT_DIR``); it imports only the standard library and rewardkit, calls
``rewardkit.runner.run`` exactly as rewardkit's command line does, and
writes what it observed (the layout, each criterion's value, the faults
rewardkit scores 0 without a word, its warnings) to ``bridge.json``.
docs/rewardkit.md, "What it does, per attempt", step 3, gives its report and exit
statuses.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import sys
import threading
import traceback
import types
import urllib.error
import urllib.request
import warnings
from typing import Any

from ..util.exceptions import TruerewardError

EXIT_RAISED = 1
EXIT_NOT_INSTALLED = 3
EXIT_UNSUPPORTED = 4
EXIT_LAYOUT = 5

COMMAND_MODULES = (
    "command_succeeds",
    "command_output_contains",
    "command_output_matches",
    "command_output_matches_regex",
)
HTTP_MODULES = ("http_status_equals", "http_response_contains")
TRAJECTORY_MODULES = ("trajectory_turn_count", "trajectory_tool_used", "trajectory_tool_not_used")

_LONGEST = 1000

_current = threading.local()
_lock = threading.Lock()
_faults: list[dict[str, Any]] = []


def _note(kind: str, detail: str) -> None:
    """Record a fault of the criterion being evaluated in this thread."""
    where = getattr(_current, "where", None)
    if where is None:
        return
    with _lock:
        _faults.append(
            {"reward": where[0], "index": where[1], "kind": kind, "detail": detail[:_LONGEST]}
        )


class Unsupported(TruerewardError):
    """A probe found nothing to attach to: another rewardkit than it knows."""


def _module(name: str) -> Any:
    try:
        return importlib.import_module(f"rewardkit.criteria.{name}")
    except ImportError as error:
        raise Unsupported(f"rewardkit.criteria.{name}: {error}") from None


def _attribute(owner: Any, name: str) -> Any:
    if not hasattr(owner, name):
        raise Unsupported(f"{getattr(owner, '__name__', owner)!s} has no {name}")
    return getattr(owner, name)


def _probe_criteria(reward_module: Any) -> None:
    """Know which criterion runs in each thread: ``Reward._eval_criterion``
    evaluates one, in a worker thread of its own."""
    cls = _attribute(reward_module, "Reward")
    original = _attribute(cls, "_eval_criterion")

    def evaluate(self: Any, index: int, fn: Any, workspace: Any) -> Any:
        previous = getattr(_current, "where", None)
        _current.where = (self.name, index)
        try:
            return original(self, index, fn, workspace)
        finally:
            _current.where = previous

    cls._eval_criterion = evaluate


def _probe_commands() -> None:
    for name in COMMAND_MODULES:
        module = _module(name)
        original = _attribute(module, "run_command")

        def run_command(
            workspace: Any,
            cmd: str,
            cwd: str | None = None,
            timeout: int = 30,
            _original: Any = original,
        ) -> Any:
            result = _original(workspace, cmd, cwd=cwd, timeout=timeout)
            if result is None:
                _note("command-timeout", f"the command `{cmd}` did not end within {timeout} s")
            return result

        module.run_command = run_command


def _urlopen(*args: Any, **kwargs: Any) -> Any:
    try:
        return urllib.request.urlopen(*args, **kwargs)
    except urllib.error.HTTPError:
        raise  # an answer (404, 500): the criterion judges it
    except Exception as error:
        reason = getattr(error, "reason", error)
        timed_out = isinstance(error, TimeoutError) or isinstance(reason, TimeoutError)
        url = args[0] if args else kwargs.get("url")
        url = getattr(url, "full_url", url)
        _note(
            "http-timeout" if timed_out else "http-unreachable",
            f"GET {url}: {type(error).__name__}: {error}",
        )
        raise


def _probe_http() -> None:
    for name in HTTP_MODULES:
        module = _module(name)
        _attribute(module, "urllib")
        # The module's own name for urllib, seen by it alone: what it asks
        # goes to the real urlopen, and a request that raises is noted.
        module.urllib = types.SimpleNamespace(
            request=types.SimpleNamespace(Request=urllib.request.Request, urlopen=_urlopen),
            error=urllib.error,
        )


def _probe_trajectories() -> None:
    for name in TRAJECTORY_MODULES:
        module = _module(name)
        original = _attribute(module, "load_trajectory")

        def load_trajectory(path: Any, _original: Any = original) -> Any:
            data = _original(path)
            if data is None:
                there = os.path.lexists(str(path))
                _note(
                    "trajectory-malformed" if there else "trajectory-missing",
                    f"{path}: {'not a JSON trajectory' if there else 'no such file'}",
                )
            return data

        module.load_trajectory = load_trajectory


def _judge_kind(models: Any, judge: Any) -> str:
    if judge is None:
        return "programmatic"
    if isinstance(judge, models.AgentJudge):
        return "agent"
    if isinstance(judge, getattr(models, "JevJudge", ())):
        return "jev"
    return "llm"


def _node(runner: Any, reward_module: Any, models: Any, value: Any) -> dict[str, Any]:
    """One node of rewardkit's layout as plain JSON."""
    if isinstance(value, reward_module.Reward):
        judge = value.judge
        weights = value.weights
        criteria = [
            {
                "weight": float(weights[index]) if weights else 1.0,
                "optional": bool(getattr(item, "optional", False)) if judge is not None else False,
            }
            for index, item in enumerate(value.criteria)
        ]
        scores = [
            {
                "name": str(score.name),
                "value": float(score.value),
                "error": None if score.error is None else str(score.error)[:_LONGEST],
            }
            for score in value.scores
        ]
        return {
            "type": "component",
            "name": str(value.name),
            "aggregation": str(value.aggregation),
            "threshold": float(value.threshold),
            "judge": _judge_kind(models, judge),
            "guard": str(getattr(judge, "guard", "off")) if judge is not None else "off",
            "criteria": criteria,
            "scores": scores,
        }
    weights = runner._group_weights(value)
    spec = value.spec
    return {
        "type": "group",
        "aggregation": str(spec.aggregation) if spec is not None else "weighted-mean",
        "threshold": float(spec.threshold) if spec is not None else 0.5,
        "spec": spec is not None,
        "inputs": [
            {
                "name": str(name),
                "weight": float(weights[name]),
                "node": _node(runner, reward_module, models, child),
            }
            for name, child in value.inputs.items()
        ],
    }


def _layout(runner: Any, reward_module: Any, models: Any, layout: Any) -> dict[str, Any]:
    inputs = layout.spec_inputs if layout.spec_inputs is not None else layout.dimensions
    specs = []
    for spec in layout.specs:
        group = runner._RewardGroup(inputs=inputs, spec=spec)
        weights = runner._group_weights(group)
        specs.append(
            {
                "name": str(spec.name),
                "aggregation": str(spec.aggregation),
                "threshold": float(spec.threshold),
                "weights": {str(name): float(weight) for name, weight in weights.items()},
            }
        )
    return {
        "dimensions": {
            str(name): _node(runner, reward_module, models, node)
            for name, node in layout.dimensions.items()
        },
        "specs": specs,
        "spec_inputs": "dimensions" if layout.spec_inputs is None else "components",
    }


def _describe(error: BaseException) -> str:
    """What went wrong, in one line: the errors inside an exception group
    (rewardkit runs its criteria in task groups) rather than the group."""
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in error.exceptions)
    said = "".join(traceback.format_exception_only(type(error), error)).strip()
    return " ".join(said.split())


def _fail(status: int, message: str) -> int:
    sys.stderr.write(message.rstrip() + "\n")
    return status


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        return _fail(2, "usage: rewardkit_probe.py TESTS WORKSPACE OUTPUT_DIR")
    tests, workspace, output = argv
    try:
        runner = importlib.import_module("rewardkit.runner")
        reward_module = importlib.import_module("rewardkit.reward")
        models = importlib.import_module("rewardkit.models")
        version = importlib.metadata.version("harbor-rewardkit")
    except Exception as error:  # noqa: BLE001 - whatever stops the import is the answer
        return _fail(
            EXIT_NOT_INSTALLED, f"rewardkit cannot be imported: {type(error).__name__}: {error}"
        )
    captured: dict[str, Any] = {}
    try:
        _probe_criteria(reward_module)
        _probe_commands()
        _probe_http()
        _probe_trajectories()
        discover = _attribute(runner, "_discover_layout")
        _attribute(runner, "_group_weights")
        _attribute(runner, "_RewardGroup")
    except Unsupported as error:
        return _fail(
            EXIT_UNSUPPORTED, f"rewardkit {version}: the bridge cannot observe it: {error}"
        )

    def discovered(tests_dir: Any, workspace: Any = "/app") -> Any:
        layout = discover(tests_dir, workspace=workspace)
        captured["layout"] = layout
        return layout

    setattr(runner, "_discover_layout", discovered)  # noqa: B010 - a module, typed as one
    with warnings.catch_warnings(record=True) as given:
        warnings.simplefilter("always")
        try:
            runner.run(tests, workspace=workspace, output=os.path.join(output, "reward.json"))
        except BaseException as error:  # noqa: BLE001 - rewardkit's command line exits 1 too
            said = _describe(error)
            status = EXIT_RAISED if "layout" in captured else EXIT_LAYOUT
            phase = "while grading" if status == EXIT_RAISED else "on the layout of " + tests
            return _fail(status, f"rewardkit raised {phase}: {said[-2000:]}")
    report = {
        "rewardkit": version,
        "python": ".".join(str(part) for part in sys.version_info[:3]),
        "layout": _layout(runner, reward_module, models, captured["layout"]),
        "faults": sorted(_faults, key=lambda item: (item["reward"], item["index"], item["kind"])),
        "warnings": [str(item.message)[:_LONGEST] for item in given][:100],
    }
    temporary = os.path.join(output, ".bridge.json.tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(report, handle, allow_nan=False)
    os.replace(temporary, os.path.join(output, "bridge.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
