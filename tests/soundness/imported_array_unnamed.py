"""An array imported from another module of the project (from ... import ROW_SCALE), used unnamed beside a batch-split activation."""
import numpy as np

from meshify import Tensor, mesh
from tests.soundness._constants import ROW_SCALE

EXPECT = "error"  # ROW_SCALE has dims meshify cannot know


@mesh(batch=8)
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x * ROW_SCALE


def inputs():
    return (np.random.default_rng(167).standard_normal((8, 4)).astype(np.float32),)
