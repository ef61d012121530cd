"""What to grade and how: the request of the ``grade-run`` flow.

:class:`GradeRequest` is a pydantic model whose JSON Schema a Prefect
deployment stores and enforces when a run is created (unknown fields,
types, bounds, the known schemes, exactly one of ``sweep`` and ``runs``);
the rest is checked when the flow starts (valid, distinct run ids, a reader
that exists, paths inside a run, no secret among the storage options).
docs/prefect.md, "The request", describes every field and its default.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue, model_validator

from ..folding import DEFAULT_SCHEME, scheme_names
from ..grade.document import RewardKey
from ..util import urls
from ..util.io import LOCAL_IO, OBJECT_STORE_IO
from ..util.segments import check_inner_path, check_segment
from ..util.target import secret_option_paths

__all__ = ["REGRADE_POLICIES", "GradeRequest", "Regrade", "run_id_of"]

#: The regrade policies (see :mod:`truereward.grading.triage`).
Regrade = Literal["none", "grader-refusals", "needing-fix", "refusals", "all"]
REGRADE_POLICIES: tuple[Regrade, ...] = (
    "none",
    "grader-refusals",
    "needing-fix",
    "refusals",
    "all",
)


def run_id_of(url: str) -> str:
    """A run's id: the last segment of its URL (``ValueError`` when that is
    not a valid path segment)."""
    return check_segment(urls.name(url))


def _schema_rules(schema: dict[str, Any]) -> None:
    # Said in the JSON Schema so the deployment refuses such a request when
    # the run is created, with a message naming the field (a null counts as
    # absent): without runs, a sweep is required; with runs, no sweep.
    runs = {"required": ["runs"], "properties": {"runs": {"type": "array"}}}
    schema["if"] = {"not": runs}
    schema["then"] = {"required": ["sweep"], "properties": {"sweep": {"type": "string"}}}
    schema["else"] = {"properties": {"sweep": {"type": "null"}}}
    schema["not"] = {
        "required": ["target", "target_block"],
        "properties": {"target": {"type": "string"}, "target_block": {"type": "string"}},
    }


#: ``package.module:ATTRIBUTE``, a reader named by where it is.
_IMPORT_PATH = r"^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*$"


def _reader_rule(schema: dict[str, Any]) -> None:
    # A reader is one known when the schema is made (the message lists
    # them) or an import path; a reader installed later is still accepted
    # by the model, not by a schema stored before it existed.
    from ..readers import reader_names

    schema["if"] = {"type": "string", "pattern": ":"}
    schema["then"] = {"pattern": _IMPORT_PATH}
    schema["else"] = {"enum": [*reader_names(), None]}


Text = Annotated[str, Field(min_length=1)]
#: The schemes known when the schema is made (a scheme registered later is
#: still accepted by the model, not by a schema stored before it existed).
_SCHEMES: list[JsonValue] = list(scheme_names())


class GradeRequest(BaseModel):
    """A request to grade a sweep, or a list of runs (module docstring)."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        allow_inf_nan=False,
        json_schema_extra=_schema_rules,
        title="GradeRequest",
    )

    sweep: Text | None = Field(
        default=None, description="a directory (path or URL) whose subdirectories are runs"
    )
    runs: Annotated[list[Text], Field(min_length=1)] | None = Field(
        default=None, description="run directories (paths or URLs)"
    )
    sweep_name: Annotated[str, AfterValidator(check_segment)] | None = Field(
        default=None,
        description="the sweep's name recorded in each document; default: the last "
        "segment of sweep (a shard of a sweep, given as runs, names its sweep here)",
    )
    reader: Text | None = Field(
        default=None,
        description="reader name; default: the one each task spec names",
        json_schema_extra=_reader_rule,
    )
    evidence: Text | None = Field(
        default=None, description="evidence path inside a run; default: the reader's"
    )
    case_set: Text | dict[str, JsonValue] | list[JsonValue] = Field(
        default="task.json",
        description="task spec path inside a run, or an inline case set",
    )
    options: dict[str, JsonValue] = Field(default_factory=dict, description="reader options")
    target: Text | None = Field(
        default=None, description="URL prefix: run <id> publishes to <target>/<id>/"
    )
    target_block: Text | None = Field(
        default=None, description="name of a saved truereward-target block"
    )
    storage_options: dict[str, JsonValue] = Field(
        default_factory=dict, description="fsspec options (no secrets)"
    )
    regrade: Regrade = Field(
        default="none",
        description="which runs that already have a grade are graded again: none, "
        "grader-refusals (refused for the grader's reasons a regrade may heal), "
        "needing-fix (refused for the grader's reasons that need a fixed task "
        "definition or reader), refusals, all",
    )
    scheme: str | None = Field(
        default=None,
        description=f"reward scheme; default: each task's own, else {DEFAULT_SCHEME}",
        json_schema_extra={"enum": [*_SCHEMES, None]},
    )
    max_attempts: Annotated[int, Field(ge=1, le=20)] = 3
    retry_delay_seconds: Annotated[float, Field(ge=0, le=3600)] = 5.0
    concurrency: Annotated[int, Field(ge=1, le=512)] = 8
    io_concurrency: Annotated[int, Field(ge=1, le=1024)] | None = Field(
        default=None,
        description="runs whose reads or writes are in flight at once, per process (an I/O "
        f"budget, not a number of task runs); default: {OBJECT_STORE_IO} when the sweep "
        "or the target is on an object store, else none (each chunk's runs one after "
        "another in its own thread)",
    )
    chunk_size: Annotated[int, Field(ge=1, le=10_000)] | None = None
    reward_keys: list[RewardKey] = Field(
        default_factory=list,
        description="figures reward.json carries beside reward (fix_rate, guards_hold, "
        "case_fraction); any switches Harbor's pass@k off",
    )
    report: Text | None = Field(
        default=None,
        description="where to write the HTML sweep report (path or URL); default: "
        "sweep-report.html in the target, or in the sweep when graded in place",
    )
    task_runner: Literal["threads", "dask"] = "threads"
    dask_address: Text | None = None

    @model_validator(mode="after")
    def _consistent(self) -> GradeRequest:
        if (self.sweep is None) == (self.runs is None):
            raise ValueError("give exactly one of 'sweep' and 'runs'")
        if self.runs is not None:
            seen: dict[str, str] = {}
            for index, url in enumerate(self.runs):
                try:
                    run = run_id_of(url)
                except ValueError as error:
                    raise ValueError(f"runs[{index}]: {error}") from None
                if run in seen:
                    raise ValueError(
                        f"runs[{index}]: run id {run!r} is also the id of {seen[run]!r}"
                    )
                seen[run] = url
        if self.target is not None and self.target_block is not None:
            raise ValueError("give 'target' or 'target_block', not both")
        if self.dask_address is not None and self.task_runner != "dask":
            raise ValueError("'dask_address' needs task_runner 'dask'")
        for field, value in (("evidence", self.evidence), ("case_set", self.case_set)):
            if isinstance(value, str):
                try:
                    check_inner_path(value, "the run")
                except ValueError as error:
                    raise ValueError(f"{field}: {error}") from None
        if not isinstance(self.case_set, str):
            from ..record.taskspec import TaskSpec, TaskSpecError

            try:
                TaskSpec.of(self.case_set)
            except TaskSpecError as error:
                raise ValueError(f"case_set: {error}") from None
        if self.scheme is not None and self.scheme not in scheme_names():
            raise ValueError(f"scheme: unknown scheme {self.scheme!r}")
        if self.reader is not None:
            from ..readers import get_reader
            from ..util.exceptions import UnknownName

            try:
                get_reader(self.reader)
            except UnknownName as error:
                raise ValueError(f"reader: {error}") from None
        secrets = secret_option_paths(self.storage_options)
        if secrets:
            raise ValueError(
                f"storage_options: {', '.join(secrets)} look like secrets; flow parameters "
                "are stored in plain text: use a target block or the worker's environment"
            )
        return self

    @property
    def io_budget(self) -> int:
        """``io_concurrency``, or its default: :data:`OBJECT_STORE_IO` when
        the sweep, a run or the target is not local (each request a round
        trip), else :data:`LOCAL_IO`, no budget (a local disk answers at
        once; each chunk's runs go one after another, as in a plain loop)."""
        if self.io_concurrency is not None:
            return self.io_concurrency
        places = [self.sweep, self.target, *(self.runs or ())]
        remote = self.target_block is not None or any(
            place is not None and not urls.is_local(place) for place in places
        )
        return OBJECT_STORE_IO if remote else LOCAL_IO

    @property
    def sweep_label(self) -> str | None:
        """The sweep's name recorded in each document: ``sweep_name``, else
        the last segment of ``sweep``; ``None`` for a list of runs without a
        ``sweep_name``, or a name that is not a valid segment."""
        if self.sweep_name is not None:
            return self.sweep_name
        if self.sweep is None:
            return None
        try:
            return run_id_of(self.sweep)
        except ValueError:
            return None
