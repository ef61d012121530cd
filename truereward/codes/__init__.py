"""Refusal codes: why a run, or a case, has no reward, and who failed.

A case passes, fails, or was not measured; the third carries a code from a
closed list (consumers key on it, never on ``why``), its blame
(:class:`Blame`: ``run`` or ``grader``) and whether a retry may help
(``retry``: grader-blamed transient codes only). Readers add codes with
:func:`declare` or through the entry-point group ``truereward.codes``, read
lazily, so every process knows them without importing the reader. Run
checks (:data:`RUN_CHECKS`) are questions about the whole run, each failing
with one code. README.md, "Refusal codes", lists them; docs/design.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..util.exceptions import TruerewardError, UnknownName
from ..util.registry import Registry

__all__ = [
    "CODE_PATTERN",
    "ENTRY_POINT_GROUP",
    "RUN_CHECKS",
    "SHARED",
    "Blame",
    "Code",
    "Ungradable",
    "all_codes",
    "declare",
    "known",
    "lookup",
    "run_check_code",
]

#: What a code must look like: upper case, digits and underscores, 3 to 64
#: characters, starting with a letter.
CODE_PATTERN = re.compile(r"^[A-Z][A-Z0-9_]{2,63}$")

#: The entry-point group through which installed readers declare codes.
ENTRY_POINT_GROUP = "truereward.codes"


class Blame(StrEnum):
    """Who failed when a grade could not be given."""

    #: The graded run itself: it left no evidence, or evidence that is not a
    #: valid report, or behaved differently on two identical runs.
    RUN = "run"
    #: The grading machinery, the task definition or the infrastructure.
    GRADER = "grader"


@dataclass(frozen=True, slots=True)
class Code:
    """One refusal code: its name, its meaning for a person, who failed, and
    whether grading again may give a different answer (retry by default)."""

    name: str
    meaning: str
    blame: Blame
    retry: bool

    def as_dict(self) -> dict[str, Any]:
        """The code as JSON: ``{code, meaning, blame, retry}``."""
        return {
            "code": self.name,
            "meaning": self.meaning,
            "blame": self.blame.value,
            "retry": self.retry,
        }


def _shared(name: str, blame: Blame, retry: bool, meaning: str) -> Code:
    return Code(name=name, meaning=meaning, blame=blame, retry=retry)


#: The shared, closed list. A reader cannot redeclare any of these.
SHARED: Mapping[str, Code] = {
    code.name: code
    for code in (
        _shared(
            "CASE_INVALID",
            Blame.GRADER,
            False,
            "a case declaration is invalid, two cases share an id, or a result "
            "names a case outside the case set",
        ),
        _shared(
            "CASE_NOT_PREPARED",
            Blame.GRADER,
            True,
            "the case could not be set up, so nothing was measured",
        ),
        _shared(
            "CASE_NOT_GRADED",
            Blame.GRADER,
            True,
            "the case ended without a result (the reader crashed, returned a "
            "non-result, or the process died)",
        ),
        _shared(
            "CASES_MISSING",
            Blame.GRADER,
            False,
            "the case set names cases that have no result: only a subset was graded",
        ),
        _shared("NOTHING_GRADED", Blame.GRADER, True, "no case was graded at all"),
        _shared(
            "NO_FAIL_TO_PASS",
            Blame.GRADER,
            False,
            "the case set has no fail-to-pass case, so nothing tests the change",
        ),
        _shared(
            "EVIDENCE_UNREADABLE",
            Blame.GRADER,
            True,
            "the grader could not read evidence (I/O error, store unavailable, timeout)",
        ),
        _shared("GRADER_TIMEOUT", Blame.GRADER, True, "grading exceeded its time budget"),
        _shared(
            "EVIDENCE_MISSING",
            Blame.RUN,
            False,
            "the run left no evidence where the task says it must be",
        ),
        _shared(
            "EVIDENCE_MALFORMED",
            Blame.RUN,
            False,
            "the run's evidence is not a valid report of its declared format",
        ),
        _shared(
            "RUN_NOT_DETERMINISTIC",
            Blame.RUN,
            False,
            "the same submission, run twice from the same start, gave different results",
        ),
    )
}

#: Run checks and the code each fails with.
RUN_CHECKS: Mapping[str, str] = {"determinism": "RUN_NOT_DETERMINISTIC"}


def _parse_declaration(name: object, spec: object) -> Code:
    """One declaration entry, checked; raises ValueError naming the code."""
    if not isinstance(name, str) or not CODE_PATTERN.match(name):
        raise ValueError(
            f"code name {name!r} must match {CODE_PATTERN.pattern} "
            "(upper case letters, digits, underscores; 3-64 characters)"
        )
    if not isinstance(spec, Mapping):
        raise ValueError(f"{name}: a declaration is a mapping {{meaning, blame, retry}}")
    unknown = set(spec) - {"meaning", "blame", "retry"}
    if unknown:
        raise ValueError(f"{name}: unknown declaration keys {sorted(unknown)}")
    meaning = spec.get("meaning")
    if not isinstance(meaning, str) or not meaning.strip():
        raise ValueError(f"{name}: 'meaning' must be a non-empty string")
    blame = spec.get("blame")
    if blame not in ("run", "grader"):
        raise ValueError(f"{name}: 'blame' must be 'run' or 'grader', got {blame!r}")
    retry = spec.get("retry", False)
    if not isinstance(retry, bool):
        raise ValueError(f"{name}: 'retry' must be true or false, got {retry!r}")
    if retry and blame == "run":
        raise ValueError(
            f"{name}: a run-blamed code cannot be retried (grading again "
            "cannot change what the run left)"
        )
    return Code(name=name, meaning=meaning, blame=Blame(blame), retry=retry)


def _parse(codes: object) -> dict[str, Code]:
    """A whole declaration, checked (see :func:`declare`)."""
    if not isinstance(codes, Mapping):
        raise ValueError("declare() takes a mapping {CODE: {meaning, blame, retry}}")
    parsed = {str(name): _parse_declaration(name, spec) for name, spec in codes.items()}
    for name in parsed:
        if name in SHARED:
            raise ValueError(f"{name} is a shared code and cannot be redeclared")
    return parsed


def _expand(_: str, loaded: object) -> Iterable[tuple[str, Code]]:
    """What a ``truereward.codes`` entry point names: a declaration, or a
    callable returning one."""
    declaration = loaded() if callable(loaded) else loaded
    return _parse(declaration).items()


_CODES: Registry[Code] = Registry(
    "refusal code",
    ENTRY_POINT_GROUP,
    expand=_expand,
)
_CODES.register_all(SHARED)


def declare(codes: Mapping[str, Mapping[str, Any]]) -> None:
    """Add a reader's own codes: ``{CODE: {"meaning": str, "blame": "run" |
    "grader", "retry": bool}}`` (``retry`` defaults to false; a run-blamed
    code is never retried).

    The batch is checked whole before any of it is added: a bad name, a
    missing meaning, an unknown blame, a shared code, or a code already
    declared differently rejects the whole batch with ``ValueError``. An
    identical redeclaration is a no-op, so a module imported twice is fine.
    """
    _CODES.register_all(_parse(codes))


def lookup(code: object) -> Code:
    """The code named ``code``; :class:`~truereward.util.exceptions.UnknownName`
    (kind ``"refusal code"``, the message listing the known codes) if nobody declared it
    (entry points are read the first time a code is not found)."""
    found = SHARED.get(code) if isinstance(code, str) else None
    if found is None and isinstance(code, str):
        found = _CODES.find(code)
    if found is None:
        known = ", ".join(_CODES.names())
        raise UnknownName(
            "refusal code", code, f"unknown refusal code {code!r}; known codes: {known}"
        )
    return found


def known(code: object) -> bool:
    """Whether ``code`` is a shared or declared code."""
    try:
        lookup(code)
    except UnknownName:
        return False
    return True


def all_codes() -> dict[str, Code]:
    """Every known code, shared and declared (entry points included), by name."""
    return _CODES.items()


def run_check_code(check: str) -> str:
    """The code a failing run check gives; ``KeyError`` for an unknown check."""
    return RUN_CHECKS[check]


class Ungradable(TruerewardError):
    """Raised where a grade cannot be given. Carries the ``code`` consumers key
    on and the ``why`` a person reads; the why should name the case, file or
    field. Constructing it with an unknown code raises
    :class:`~truereward.util.exceptions.UnknownName`, so a typo cannot become
    a silent refusal of another kind.

    It pickles with both arguments, so a refusal raised in a worker process
    arrives in the controller as the refusal it was.
    """

    def __init__(self, code: str, why: str, *, case: str | None = None) -> None:
        self.info = lookup(code)
        super().__init__(f"{code}: {why}")
        self.code = code
        self.why = why
        self.case = case

    @property
    def blame(self) -> Blame:
        """Who failed."""
        return self.info.blame

    @property
    def retry(self) -> bool:
        """Whether grading again may help, by default."""
        return self.info.retry

    def __reduce__(self) -> tuple[Callable[..., Ungradable], tuple[Any, ...]]:
        return (_rebuild_ungradable, (type(self), self.code, self.why, self.case))


def _rebuild_ungradable(cls: type[Ungradable], code: str, why: str, case: str | None) -> Ungradable:
    return cls(code, why, case=case)
