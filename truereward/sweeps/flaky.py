"""Stability across repeated sweeps of the same runs.

:func:`stability` pairs runs by id across sweeps and counts stable runs,
flaky runs (different rewards), runs that flip gradability (a missing
reward is not a different reward), runs never gradable or in one sweep
only, and flaky cases; it is pure and streams over one run at a time.
docs/sweeps.md, "Stability", gives the definitions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Annotated

from pydantic import BaseModel, Field, model_validator

from .record import RunRecord, RunState
from .summary import FROZEN, Count

__all__ = ["FlakyCase", "RunHistory", "Stability", "stability"]


class RunHistory(BaseModel):
    """One run across the sweeps: per sweep (in the order given) its state
    (``gradable``, ``ungradable``, ``unreadable`` or ``absent``) and reward
    (``None`` without one)."""

    model_config = FROZEN

    run: str
    states: list[str]
    rewards: list[float | None]


class FlakyCase(BaseModel):
    """A case that passed in some sweeps and failed in others: in how many
    sweeps it ``passed``, ``failed``, or was ``ungradable``."""

    model_config = FROZEN

    run: str
    case: str
    passed: Count
    failed: Count
    ungradable: Count


class Stability(BaseModel):
    """Stability of runs and cases across ``sweeps`` sweeps (see the module
    docstring)."""

    model_config = FROZEN

    sweeps: Annotated[int, Field(ge=2)]
    runs: Count
    stable: Count
    always_ungradable: Count
    single: Count
    incomplete: Count
    flaky_runs: list[RunHistory]
    flips: list[RunHistory]
    cases: Count
    flaky_cases: list[FlakyCase]

    @model_validator(mode="after")
    def _counts_add_up(self) -> Stability:
        parts = (
            self.stable
            + len(self.flaky_runs)
            + len(self.flips)
            + self.always_ungradable
            + self.single
        )
        if parts != self.runs:
            raise ValueError("runs must equal stable + flaky + flips + always_ungradable + single")
        return self


def _history(run: str, records: Sequence[RunRecord | None]) -> RunHistory:
    return RunHistory(
        run=run,
        states=[record.state.value if record else "absent" for record in records],
        rewards=[record.reward if record else None for record in records],
    )


def stability(
    groups: Iterable[tuple[str, Sequence[RunRecord | None]]], *, sweeps: int | None = None
) -> Stability:
    """Stability over groups ``(run id, one record or None per sweep)``, each
    run once, all groups as long as the number of ``sweeps`` (at least 2;
    taken from the first group when not given). Records need their cases
    (``with_cases=True``) for case flakiness; a record without them
    contributes no cases."""
    if sweeps is not None and sweeps < 2:
        raise ValueError("stability needs at least two sweeps")
    runs = stable = always_ungradable = single = incomplete = cases = 0
    flaky_runs: list[RunHistory] = []
    flips: list[RunHistory] = []
    flaky_cases: list[FlakyCase] = []
    for run, records in groups:
        if sweeps is None:
            sweeps = len(records)
            if sweeps < 2:
                raise ValueError("stability needs at least two sweeps")
        elif len(records) != sweeps:
            raise ValueError(f"run {run!r}: {len(records)} records for {sweeps} sweeps")
        runs += 1
        present = [record for record in records if record is not None]
        if len(present) < len(records):
            incomplete += 1
        rewards = {record.reward for record in present if record.reward is not None}
        graded = sum(record.state is RunState.GRADABLE for record in present)
        if len(present) < 2:
            single += 1
        elif graded == 0:
            always_ungradable += 1
        elif len(rewards) > 1:
            flaky_runs.append(_history(run, records))
        elif graded < len(present):
            flips.append(_history(run, records))
        else:
            stable += 1
        verdicts: dict[str, list[int]] = {}
        for record in present:
            seen: dict[str, set[str]] = {}
            for case, verdict in record.cases or ():
                seen.setdefault(case, set()).add(verdict)
            for case, found in seen.items():
                tally = verdicts.setdefault(case, [0, 0, 0, 0])
                tally[0] += "pass" in found
                tally[1] += "fail" in found
                tally[2] += "ungradable" in found
                tally[3] += "pass" in found and "fail" in found
        cases += len(verdicts)
        for case, (passed, failed, ungradable, both) in sorted(verdicts.items()):
            # A pass in one sweep and a fail in another: not both in the
            # same single sweep (rows sharing an id within one grade).
            if passed and failed and not (passed == failed == both == 1):
                flaky_cases.append(
                    FlakyCase(
                        run=run, case=case, passed=passed, failed=failed, ungradable=ungradable
                    )
                )
    if sweeps is None:
        raise ValueError("stability needs at least two sweeps (no run was given)")
    return Stability(
        sweeps=sweeps,
        runs=runs,
        stable=stable,
        always_ungradable=always_ungradable,
        single=single,
        incomplete=incomplete,
        flaky_runs=flaky_runs,
        flips=flips,
        cases=cases,
        flaky_cases=flaky_cases,
    )
