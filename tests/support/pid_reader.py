"""A reader for the Dask tests: the ``rows`` reader, each row noting the
process that read it (an observation ``pid``), so a test can tell that task
runs ran in the cluster's worker processes, not in the flow's."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from truereward.readers import Evidence, get_reader
from truereward.record.cases import CaseResult, Observation
from truereward.record.taskspec import TaskSpec


class PidReader:
    name = "pid-rows"
    default_evidence = "rows.jsonl"

    def read(
        self, evidence: Evidence, spec: TaskSpec, options: Mapping[str, Any]
    ) -> list[CaseResult]:
        rows = get_reader("rows").read(evidence, spec, options)
        mark = Observation(name="pid", verdict=str(os.getpid()))
        return [row.model_copy(update={"observations": [*row.observations, mark]}) for row in rows]


READER = PidReader()
