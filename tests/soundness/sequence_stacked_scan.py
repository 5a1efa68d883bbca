"""``list[Block]`` stacked with jax.tree.map(lambda *xs: jnp.stack(xs), *blocks) and run by jax.lax.scan
(GPT-2's layer loop); the first and last blocks also read by index."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Block(NamedTuple):
    w_in: Tensor["d", "d_ff"]
    b_in: Tensor["d_ff"]
    w_out: Tensor["d_ff", "d"]


class Params(NamedTuple):
    blocks: list[Block]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(params: Params, x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    stacked = jax.tree.map(lambda *xs: jnp.stack(xs), *params.blocks)

    def body(h, block):
        return h + jnp.tanh(h @ block.w_in + block.b_in) @ block.w_out, None

    x, _ = jax.lax.scan(body, x, stacked)
    first, last = params.blocks[0], params.blocks[-1]
    return x + jnp.sum(first.w_in * last.w_in, axis=-1)


def inputs():
    rng = np.random.default_rng(283)
    blocks = [Block((rng.standard_normal((8, 16)) * 0.3).astype(np.float32),
                    rng.standard_normal(16).astype(np.float32),
                    (rng.standard_normal((16, 8)) * 0.3).astype(np.float32)) for _ in range(3)]
    return Params(blocks), rng.standard_normal((4, 8)).astype(np.float32)
