"""The built-in criterion kinds, one per module, each exporting ``CRITERION``
(a :class:`~truereward.criteria.kind.CriterionKind`) and listed as an entry
point of ``truereward.criteria`` in ``pyproject.toml``."""
