"""The grade: ``grade.json`` (``document``, its ``versions``), what a row may
carry into it (``bounded``), the files beside it (``files``, ``ctrfreport``),
reading a stored one back (``readback``, ``trust``) and a pytest session's
``ledger``. Nothing is imported here, so a submodule loads alone.
"""
