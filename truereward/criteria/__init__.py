"""Criteria: what a Harbor verifier checks in a workspace or a trajectory.

A **criterion** is one declared case of the ``workspace`` or ``trajectory``
reader: ``{"id", "kind", "options": {"criterion": "command_succeeds",
...}}``. Its kind (``file_exists``, ``sqlite_query_equals``,
``trajectory_tool_used``...) is one module of :mod:`truereward.criteria.kinds`,
found through the entry-point group ``truereward.criteria``
(:mod:`truereward.criteria.registry`); its options are validated by the
kind's pydantic model; it answers with an :class:`~.kind.Outcome` (a pass or
a fail, and a score in [0, 1]), a :class:`~.kind.Failure` (the run's), or
raises :class:`~truereward.codes.Ungradable` (the grader's: a command that
ran out of time, a service that could not be reached, a missing
trajectory). :func:`truereward.criteria.grading.grade_case` turns that into
the case's row. The rule for every criterion, and why, is in
``docs/criteria.md``.

This package is imported lazily: nothing here is imported by
``import truereward``, and this module imports nothing, so the refusal-code
entry point (:mod:`truereward.criteria.codes`) stays cheap to load.
"""
