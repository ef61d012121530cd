"""``image_similarity``: the share of pixels two images have equal, graded
by degree.

Options: ``path1``, ``path2``, ``min`` (the share that passes, default 1.0).
The score is the fraction of pixels equal in every RGBA channel (rewardkit's
measure); images of different sizes score 0.0. Either image absent, or not
an image (:mod:`..images`), fails with score 0.0. Images over
:data:`~..images.MAX_PIXELS` pixels are not compared (``CASE_INVALID``: the
reference is the task's choice). Needs ``pip install 'truereward[images]'``.
"""

from __future__ import annotations

from contextlib import ExitStack

from ..context import Context
from ..images import opened, pillow, same_pixels
from ..kind import CriterionKind, Failure, GradedOptions, Outcome
from ..options import Path


class ImageSimilarity(GradedOptions):
    path1: Path
    path2: Path


def evaluate(options: ImageSimilarity, context: Context) -> Outcome:
    pillow()
    files = context.workspace()
    blobs = [(files.need(path), files.shown(path)) for path in (options.path1, options.path2)]
    pair = f"{blobs[0][1]} and {blobs[1][1]}"
    with ExitStack() as stack:
        first, second = (stack.enter_context(opened(data, shown)) for data, shown in blobs)
        if first.size != second.size:
            return Outcome.graded(
                0.0, options.min, f"{pair} differ in size ({first.size} and {second.size})"
            )
        width, height = first.size
        if width * height == 0:
            raise Failure(f"{pair} have no pixels")
        score = same_pixels(first, second, pair) / (width * height)
    return Outcome.graded(score, options.min, f"{pair}: {score:.4f} of pixels equal")


CRITERION = CriterionKind(
    name="image_similarity",
    description="the share of pixels two images have equal (0 to 1)",
    options=ImageSimilarity,
    evaluate=evaluate,
)
