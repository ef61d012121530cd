"""Built-in check types, one module each, each naming its :class:`CheckType`
as ``CHECK``; ``pyproject.toml`` lists them in the ``truereward.checks``
entry-point group (see :mod:`truereward.checks.registry`)."""
