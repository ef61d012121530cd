"""``python -m truereward.schemas``: write the shipped JSON Schemas again."""

from . import write_all

for path in write_all():
    print(path)
