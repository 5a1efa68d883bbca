"""``tab.reshape(n, n, -1)`` of a [rel, heads] table with the heads split: the trailing -1 is kept as the heads
(see swin_shifted_windows_heads_split).  Where n * n is not the table's rows, -1 on one device would merge rows
into the heads: refused when the function runs (the local reshape to the heads' block fails), never a silently
different array."""
from typing import Annotated

import jax
import numpy as np

from meshify import mesh

EXPECT = "error"


@mesh(model=4, rules={"heads": "model"})
def f(tab: Annotated[jax.Array, "rel", "heads"], n: int = 8) -> Annotated[jax.Array, "a", "b", "c"]:
    return tab.reshape(n, n, -1) * 2.0


def inputs():
    return (np.arange(256 * 4, dtype=np.float32).reshape(256, 4),)
