"""``image_size_equals``: the image ``path`` is ``width`` x ``height``
pixels.

Options: ``path``, ``width``, ``height``. Only the image's header is read
(:mod:`..images`: PNG, JPEG, GIF, BMP, TIFF, WEBP, PPM). Absent, not such
an image: the case fails. Needs ``pip install 'truereward[images]'``
(``CASE_INVALID`` naming it otherwise).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..context import Context
from ..images import opened, pillow
from ..kind import CriterionKind, Options, Outcome
from ..options import Path


class ImageSizeEquals(Options):
    path: Path
    width: Annotated[int, Field(ge=0)]
    height: Annotated[int, Field(ge=0)]


def evaluate(options: ImageSizeEquals, context: Context) -> Outcome:
    pillow()
    files = context.workspace()
    where = files.shown(options.path)
    with opened(files.need(options.path), where) as image:
        width, height = image.size
    return Outcome.binary(
        (width, height) == (options.width, options.height),
        f"{where} is {width}x{height}, expected {options.width}x{options.height}",
    )


CRITERION = CriterionKind(
    name="image_size_equals",
    description="an image has the expected width and height",
    options=ImageSizeEquals,
    evaluate=evaluate,
)
