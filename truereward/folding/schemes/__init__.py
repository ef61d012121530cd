"""Built-in reward schemes, one module each, each naming its :class:`Scheme`
as ``SCHEME``; ``pyproject.toml`` lists them in the ``truereward.schemes``
entry-point group (see :mod:`truereward.folding.registry`)."""
