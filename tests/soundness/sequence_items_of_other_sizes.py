"""Blocks whose hidden sizes differ within one call: the item hint names one 'd_ff' for all of them,
so the call is refused (naming both arguments), never run with the wrong split."""
from typing import NamedTuple

import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


class Block(NamedTuple):
    w_in: Tensor["d", "d_ff"]
    w_out: Tensor["d_ff", "d"]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(blocks: tuple[Block, ...], x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    for block in blocks:
        x = x + jax.nn.relu(x @ block.w_in) @ block.w_out
    return x


def inputs():
    rng = np.random.default_rng(284)
    blocks = tuple(Block(rng.standard_normal((8, n)).astype(np.float32), rng.standard_normal((n, 8)).astype(np.float32))
                   for n in (16, 8))
    return blocks, rng.standard_normal((4, 8)).astype(np.float32)
