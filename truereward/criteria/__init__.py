"""Criteria: what a Harbor verifier checks in a workspace or a trajectory.

A criterion is one declared case of the ``workspace`` or ``trajectory``
reader; its kind is one module of :mod:`.kinds`, found through the
entry-point group ``truereward.criteria``, its options validated by the
kind's model; it answers with an :class:`~.kind.Outcome`, a
:class:`~.kind.Failure` (the run's) or :class:`~truereward.codes.Ungradable`
(the grader's), which :func:`.grading.grade_case` turns into a row. Imported
lazily, importing nothing, so :mod:`.codes` stays cheap. docs/criteria.md
gives every criterion's rule and why.
"""
