"""jax.tree.map of a lambda that sums each leaf, over a block whose leaves are split along different
dims (w_in's columns, w_out's rows): the same psum serves both, so the one lambda is kept."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Block(NamedTuple):
    w_in: Tensor["d", "d_ff"]
    w_out: Tensor["d_ff", "d"]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(block: Block, x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    unit = jax.tree.map(lambda w: w / jnp.sum(jnp.abs(w)), block)
    return jax.nn.relu(x @ unit.w_in) @ unit.w_out


def inputs():
    rng = np.random.default_rng(287)
    block = Block(rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal((16, 8)).astype(np.float32))
    return block, rng.standard_normal((4, 8)).astype(np.float32)
