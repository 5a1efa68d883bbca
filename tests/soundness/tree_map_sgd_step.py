"""jax.tree.map over hinted pytrees: an SGD-like update of params (a sequence of blocks inside) by
another pytree of the same class, then the updated params used; each leaf keeps its split."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Block(NamedTuple):
    w_in: Tensor["d", "d_ff"]
    w_out: Tensor["d_ff", "d"]


class Params(NamedTuple):
    blocks: tuple[Block, ...]
    scale: Tensor["d"]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(params: Params, grads: Params, x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    new = jax.tree.map(lambda w, g: w - 0.1 * jnp.tanh(g), params, grads)
    for block in new.blocks:
        x = x + jax.nn.relu(x @ block.w_in) @ block.w_out
    return x * new.scale


def _params(rng):
    blocks = tuple(Block((rng.standard_normal((8, 16)) * 0.3).astype(np.float32),
                         (rng.standard_normal((16, 8)) * 0.3).astype(np.float32)) for _ in range(2))
    return Params(blocks, rng.standard_normal(8).astype(np.float32))


def inputs():
    rng = np.random.default_rng(286)
    return _params(rng), _params(rng), rng.standard_normal((4, 8)).astype(np.float32)
