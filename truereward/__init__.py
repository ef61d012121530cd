"""truereward: the reward of a graded run, or the reason there is none.

A reader turns a run's evidence into :class:`CaseResult` rows; :func:`fold`
turns them into a reward under a named scheme, or into refusals with codes;
:func:`grade_document` builds ``grade.json``; :func:`publish` writes it and
the files beside it, atomically. A run that could not be graded is never
scored 0 and never 1. Names load on first use, so ``import truereward``
pulls in neither pydantic models nor fsspec, s3fs or prefect.
docs/design.md is the design; README.md the tour.
"""

from __future__ import annotations

import logging
from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .util.lazy import lazy_names
from .util.moved import MOVED, install

# The library's logger says nothing unless the application configures it.
logging.getLogger(__name__).addHandler(logging.NullHandler())
# Module paths from before the root was grouped into packages still import.
install()

if TYPE_CHECKING:
    from .codes import Blame, Ungradable
    from .folding import Fold, fold
    from .grade.ctrfreport import ctrf
    from .grade.document import GradeDocument, RunInfo, grade_document
    from .publishing import PublishConflict, PublishError, PublishResult, publish
    from .readers import grade_evidence, read
    from .record.cases import CaseResult, CheckAnswer, Observation
    from .record.refusal import Refusal
    from .record.taskspec import CaseSpec, TaskSpec
    from .util.exceptions import TruerewardError
    from .util.target import Target

#: Public name -> (module, attribute), imported on first access.
_LAZY = {
    "CaseResult": ("record.cases", "CaseResult"),
    "CheckAnswer": ("record.cases", "CheckAnswer"),
    "Observation": ("record.cases", "Observation"),
    "Blame": ("codes", "Blame"),
    "Ungradable": ("codes", "Ungradable"),
    "ctrf": ("grade.ctrfreport", "ctrf"),
    "GradeDocument": ("grade.document", "GradeDocument"),
    "RunInfo": ("grade.document", "RunInfo"),
    "grade_document": ("grade.document", "grade_document"),
    "TruerewardError": ("util.exceptions", "TruerewardError"),
    "Fold": ("folding", "Fold"),
    "fold": ("folding", "fold"),
    "PublishConflict": ("publishing", "PublishConflict"),
    "PublishError": ("publishing", "PublishError"),
    "PublishResult": ("publishing", "PublishResult"),
    "publish": ("publishing", "publish"),
    "Refusal": ("record.refusal", "Refusal"),
    "Target": ("util.target", "Target"),
    "CaseSpec": ("record.taskspec", "CaseSpec"),
    "TaskSpec": ("record.taskspec", "TaskSpec"),
    "read": ("readers", "read"),
    "grade_evidence": ("readers", "grade_evidence"),
}

#: Submodules reachable as attributes without an explicit import.
_SUBMODULES = {
    "codes",
    "folding",
    "grade",
    "publishing",
    "readers",
    "record",
    "util",
}

__all__ = [
    "Blame",
    "CaseResult",
    "CaseSpec",
    "CheckAnswer",
    "Fold",
    "GradeDocument",
    "Observation",
    "PublishConflict",
    "PublishError",
    "PublishResult",
    "Refusal",
    "RunInfo",
    "Target",
    "TaskSpec",
    "TruerewardError",
    "Ungradable",
    "__version__",
    "ctrf",
    "fold",
    "grade_document",
    "grade_evidence",
    "publish",
    "read",
]


_getattr, _dir = lazy_names(__name__, _LAZY, globals())


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES or name in MOVED:
        return import_module(f".{name}", __name__)
    return _getattr(name)


def __dir__() -> list[str]:
    return sorted(set(_dir()) | _SUBMODULES)
