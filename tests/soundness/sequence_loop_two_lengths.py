"""``blocks: tuple[Block, ...]`` looped over in Python, called with 2 blocks then with 3: one program
per length, each item split like the item hint says."""
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
def f(params: Params, x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    for block in params.blocks:
        x = x + jax.nn.relu(x @ block.w_in) @ block.w_out
    return x * params.scale


def _params(rng, n):
    blocks = tuple(Block((rng.standard_normal((8, 16)) * 0.3).astype(np.float32),
                         (rng.standard_normal((16, 8)) * 0.3).astype(np.float32)) for _ in range(n))
    return Params(blocks, rng.standard_normal(8).astype(np.float32))


def inputs():
    rng = np.random.default_rng(281)
    return _params(rng, 2), rng.standard_normal((4, 8)).astype(np.float32)


def scenario(mod, pick):
    rng = np.random.default_rng(282)
    x = jnp.asarray(rng.standard_normal((4, 8)).astype(np.float32))
    fn = pick(mod.f)
    return fn(_params(rng, 2), x), fn(_params(rng, 3), x), fn(_params(rng, 2), x)
