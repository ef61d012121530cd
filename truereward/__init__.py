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
from .lazy import lazy_names

# The library's logger says nothing unless the application configures it.
logging.getLogger(__name__).addHandler(logging.NullHandler())

if TYPE_CHECKING:
    from .cases import CaseResult, CheckAnswer, Observation
    from .codes import Blame, Ungradable
    from .ctrfreport import ctrf
    from .document import GradeDocument, RunInfo, grade_document
    from .exceptions import TruerewardError
    from .folding import Fold, fold
    from .publishing import PublishConflict, PublishError, PublishResult, publish
    from .readers import grade_evidence, read
    from .refusal import Refusal
    from .target import Target
    from .taskspec import CaseSpec, TaskSpec

#: Public name -> (module, attribute), imported on first access.
_LAZY = {
    "CaseResult": ("cases", "CaseResult"),
    "CheckAnswer": ("cases", "CheckAnswer"),
    "Observation": ("cases", "Observation"),
    "Blame": ("codes", "Blame"),
    "Ungradable": ("codes", "Ungradable"),
    "ctrf": ("ctrfreport", "ctrf"),
    "GradeDocument": ("document", "GradeDocument"),
    "RunInfo": ("document", "RunInfo"),
    "grade_document": ("document", "grade_document"),
    "TruerewardError": ("exceptions", "TruerewardError"),
    "Fold": ("folding", "Fold"),
    "fold": ("folding", "fold"),
    "PublishConflict": ("publishing", "PublishConflict"),
    "PublishError": ("publishing", "PublishError"),
    "PublishResult": ("publishing", "PublishResult"),
    "publish": ("publishing", "publish"),
    "Refusal": ("refusal", "Refusal"),
    "Target": ("target", "Target"),
    "CaseSpec": ("taskspec", "CaseSpec"),
    "TaskSpec": ("taskspec", "TaskSpec"),
    "read": ("readers", "read"),
    "grade_evidence": ("readers", "grade_evidence"),
}

#: Submodules reachable as attributes without an explicit import.
_SUBMODULES = {
    "cases",
    "codes",
    "document",
    "files",
    "folding",
    "publishing",
    "readers",
    "strictjson",
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
    if name in _SUBMODULES:
        return import_module(f".{name}", __name__)
    return _getattr(name)


def __dir__() -> list[str]:
    return sorted(set(_dir()) | _SUBMODULES)
