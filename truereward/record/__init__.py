"""The record a grade is made of: the row (``cases``), the case set, a task's
declared cases and scoring (``taskspec``, ``scoring``), refusals, and the one
wording of a validation error. It imports only ``codes`` and ``util``.
"""
