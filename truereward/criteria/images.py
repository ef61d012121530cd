"""Images for criteria, through Pillow (the ``images`` extra).

:func:`opened` opens a workspace file as an image of a raster format
(:data:`FORMATS`: never one whose decoder runs programs, such as EPS) and
reads only its header, so its size is known before a pixel is decoded; a
file that is not such an image is the run's failure. :func:`same_pixels`
counts the pixels two images of one size have equal in RGBA, decoding at
most :data:`MAX_PIXELS` each (a larger reference is ``CASE_INVALID``).
docs/criteria.md.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..codes import Ungradable
from .kind import Failure

__all__ = ["FORMATS", "MAX_PIXELS", "opened", "pillow", "same_pixels"]

#: The formats opened.
FORMATS = ("PNG", "JPEG", "GIF", "BMP", "TIFF", "WEBP", "PPM")
#: The most pixels an image compared may have (8192 x 4096).
MAX_PIXELS = 1 << 25


def pillow() -> Any:
    """Pillow's ``Image`` module; ``CASE_INVALID`` naming the extra when it
    is not installed."""
    try:
        from PIL import Image
    except ImportError:
        raise Ungradable(
            "CASE_INVALID",
            "an image criterion needs Pillow: pip install 'truereward[images]'",
        ) from None
    return Image


@contextmanager
def opened(data: bytes, shown: str) -> Iterator[Any]:
    """The image in ``data`` (module docstring), closed on exit."""
    image_module = pillow()
    try:
        # Pillow's decompression-bomb warning: we bound it.
        with warnings.catch_warnings(action="ignore"):
            image = image_module.open(io.BytesIO(data), formats=FORMATS)
    except image_module.DecompressionBombError as error:
        raise Failure(f"{shown}: {error}") from None
    except (OSError, SyntaxError, ValueError) as error:  # UnidentifiedImageError is an OSError
        # Pillow's own message names the buffer's address: a grade would differ on each run.
        said = "" if isinstance(error, image_module.UnidentifiedImageError) else f": {error}"
        raise Failure(
            f"{shown} is not an image of a format compared ({', '.join(FORMATS)}){said}"
        ) from None
    try:
        yield image
    finally:
        image.close()


def same_pixels(first: Any, second: Any, shown: str) -> int:
    """How many pixels of the two images (of one size) are equal in RGBA."""
    from PIL import ImageChops

    width, height = first.size
    if width * height > MAX_PIXELS:
        raise Ungradable(
            "CASE_INVALID",
            f"{shown}: images of {width}x{height} pixels are over the {MAX_PIXELS} pixels compared",
        )
    try:
        with warnings.catch_warnings(action="ignore"):
            left, right = first.convert("RGBA"), second.convert("RGBA")
    except (OSError, SyntaxError, ValueError) as error:  # a truncated or corrupt image
        raise Failure(f"{shown}: an image cannot be decoded: {error}") from None
    difference = ImageChops.difference(left, right)
    red, green, blue, alpha = difference.split()
    # A pixel is equal when its largest channel difference is 0.
    largest = ImageChops.lighter(ImageChops.lighter(red, green), ImageChops.lighter(blue, alpha))
    return int(largest.histogram()[0])
